// rossoctl __complete KIND: names for dynamic shell completion; silent on any error.
#include <optional>

#include "registry.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/model/validation.hpp"

namespace rossoctl::commands {
namespace {

struct CompleteOptions {
    std::string kind;
};

// The item's name when the shell may offer it: a name Kubernetes could have given (a DNS
// subdomain). Anything else, a control character, a line break, a space or a quote, is a
// server's invention the shell would put on the user's command line, or split into words.
std::optional<std::string> offeredName(const nlohmann::json& item) {
    if (!item.is_object()) return std::nullopt;
    const auto metadata = item.find("metadata");
    if (metadata == item.end() || !metadata->is_object()) return std::nullopt;
    const auto name = metadata->find("name");
    if (name == metadata->end() || !name->is_string()) return std::nullopt;
    const auto& text = name->get_ref<const std::string&>();
    if (!model::isDnsSubdomain(text)) return std::nullopt;
    return text;
}

int runComplete(app::Context& context, CompleteOptions& options) {
    try {
        auto& client = context.client();
        kube::ListOptions list;
        list.limit = 500;
        nlohmann::json objects;
        std::string suffix;
        if (options.kind == "sandboxes" || options.kind == "sandbox-paths") {
            if (options.kind == "sandbox-paths") suffix = ":";
            objects = client.list(context.discovery().sandboxes(), context.namespaceName(), list);
        } else if (options.kind == "warm-pools") {
            objects = client.list(app::run::sandboxWarmPools(), context.namespaceName(), list);
        } else if (options.kind == "agents") {
            list.labelSelector = "app.kubernetes.io/managed-by=rossoctl";
            objects = client.list(kube::resources::agentRuntimes(), context.namespaceName(), list);
        } else if (options.kind == "projects") {
            list.labelSelector = "rossoctl.dev/sandbox-project=true";
            objects = client.list(kube::resources::namespaces(), "", list);
        } else {
            return 0;
        }
        for (const auto& item : objects.value("items", nlohmann::json::array()))
            if (const auto name = offeredName(item)) context.out() << *name << suffix << '\n';
    } catch (...) {
        // Completion must never print errors into the user's command line.
    }
    return 0;
}

}  // namespace

void registerComplete(CLI::App& root, CommandHost& host) {
    auto options = std::make_shared<CompleteOptions>();
    auto* command = root.add_subcommand("__complete", "");
    command->group("");  // hidden
    command->add_option("kind", options->kind)->required();
    command->callback(
        [&host, options] { host.setExitCode(runComplete(host.context(), *options)); });
}

}  // namespace rossoctl::commands
