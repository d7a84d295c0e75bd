// rossoctl __complete KIND: names for dynamic shell completion; silent on any error.
#include "registry.hpp"
#include "rossoctl/kube/resource.hpp"

namespace rossoctl::commands {
namespace {

struct CompleteOptions {
    std::string kind;
};

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
            context.out() << item.value("metadata", nlohmann::json::object()).value("name", "")
                          << suffix << '\n';
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
