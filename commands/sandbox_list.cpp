// rossoctl sandbox list: every Sandbox with whether it is Ready, why not, and its pod.
#include <algorithm>
#include <map>

#include "registry.hpp"
#include "rossoctl/app/agents.hpp"

namespace rossoctl::commands {
namespace {

struct ListOptions {
    bool allNamespaces = false;
    OutputFlags output;
};

int runList(app::Context& context, ListOptions& options) {
    // validate
    auto format = ui::parseOutputFormat(options.output.output);
    // complete
    const std::string ns = options.allNamespaces ? "" : context.namespaceName();
    auto ref = context.discovery().sandboxes();
    // run
    auto& client = context.client();
    nlohmann::json sandboxes = client.list(ref, ns)["items"];
    std::vector<app::Agent> objects;
    for (auto& sandbox : sandboxes)
        objects.push_back({{model::WorkloadType::Sandbox, ref}, std::move(sandbox)});
    std::stable_sort(objects.begin(), objects.end(), [](const app::Agent& a, const app::Agent& b) {
        return std::make_pair(a.namespaceName(), a.name()) <
               std::make_pair(b.namespaceName(), b.name());
    });
    if (app::printObjects(context.out(), format, objects, false)) return 0;
    if (objects.empty()) {
        context.err() << (ns.empty() ? std::string("No sandboxes found.")
                                     : "No sandboxes found in namespace \"" + ns + "\".")
                      << '\n';
        return 0;
    }
    // One pod list for all: the controller labels its pods with the sandbox-name-hash.
    std::map<std::string, std::string> podByOwner;
    for (const auto& [uid, pod] : app::podsByOwner(client, ns, "agents.x-k8s.io/sandbox-name-hash"))
        podByOwner.emplace(uid, pod);  // newest first: keep the first
    auto table = app::sandboxTable(options.allNamespaces);
    const auto now = context.clock().now();
    for (const auto& sandbox : objects) {
        auto pod = podByOwner.find(sandbox.object["metadata"].value("uid", ""));
        app::addSandboxRow(table, sandbox.object, pod == podByOwner.end() ? "" : pod->second, now,
                           options.allNamespaces);
    }
    ui::printTable(context.out(), table, options.output.noHeaders,
                   format == ui::OutputFormat::Wide);
    return 0;
}

}  // namespace

void registerSandboxList(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<ListOptions>();
    auto* command = sandbox.add_subcommand("list", "List sandboxes with Ready, reason and pod");
    command->alias("ls");
    command->add_flag("-A,--all-namespaces", options->allNamespaces,
                      "List sandboxes in every namespace");
    addOutputFlags(command, options->output, "table|wide|json|yaml|name");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox list -n team1\n"
        "  rossoctl sandbox list -A -o wide\n"
        "  rossoctl sandbox list -o json");
    onRun(command, host, options, &runList);
}

}  // namespace rossoctl::commands
