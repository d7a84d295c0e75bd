// rossoctl agents list: every rossoctl-managed agent, whatever workload runs it.
#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agents.hpp"
#include "rossoctl/ui/jsonpath.hpp"

namespace rossoctl::commands {
namespace {

struct ListOptions {
    bool allNamespaces = false;
    std::string selector;
    OutputFlags output;
};

int runList(app::Context& context, ListOptions& options) {
    // validate
    const bool templated = isTemplateOutput(options.output.output);
    auto format = templated ? ui::OutputFormat::Json : ui::parseOutputFormat(options.output.output);
    std::ostringstream ignored;  // a bad template or --sort-by: a usage error, nothing sent
    printTemplate(ignored, options.output, {}, false);
    // complete
    const std::string ns = options.allNamespaces ? "" : context.namespaceName();
    // run
    auto agents = app::listAgents(context.client(), context.discovery(), ns, options.selector);
    if (!options.output.sortBy.empty())
        std::stable_sort(agents.begin(), agents.end(),
                         [&](const app::Agent& a, const app::Agent& b) {
                             return ui::lessByPath(a.object, b.object, options.output.sortBy);
                         });
    std::vector<nlohmann::json> objects;
    for (const auto& agent : agents) objects.push_back(agent.object);
    if (printTemplate(context.out(), options.output, objects, false)) return 0;
    if (app::printObjects(context.out(), format, agents, false, options.output.showManagedFields))
        return 0;
    if (agents.empty()) {
        context.err() << (ns.empty() ? std::string("No agents found.")
                                     : "No agents found in namespace \"" + ns + "\".")
                      << '\n';
        return 0;
    }
    ui::Table table;
    table.headers = {"NAME", "TYPE", "READY", "AGE", "STATUS", "IMAGE"};
    table.wideOnly = {false, false, false, false, true, true};
    if (options.allNamespaces) {
        table.headers.insert(table.headers.begin(), "NAMESPACE");
        table.wideOnly.insert(table.wideOnly.begin(), false);
    }
    const auto now = context.clock().now();
    for (const auto& agent : agents) {
        auto status = model::workloadStatus(agent.kind.type, agent.object);
        std::vector<std::string> row = {
            agent.name(),     model::workloadTypeName(agent.kind.type),
            status.readyText, app::objectAge(agent.object, now),
            status.reason,    model::workloadImage(agent.kind.type, agent.object)};
        if (options.allNamespaces) row.insert(row.begin(), agent.namespaceName());
        table.rows.push_back(row);
    }
    ui::printTable(context.out(), table, options.output.noHeaders,
                   format == ui::OutputFormat::Wide);
    return 0;
}

}  // namespace

void registerAgentsList(CLI::App& agents, CommandHost& host) {
    auto options = std::make_shared<ListOptions>();
    auto* command = agents.add_subcommand("list", "List agents of every deployment type");
    command->alias("ls");
    command->add_flag("-A,--all-namespaces", options->allNamespaces,
                      "List agents in every namespace");
    addSelectorFlag(command, options->selector);
    addOutputFlags(command, options->output, "table|wide|json|yaml|name");
    command->footer(
        "Agents are the deployments, statefulsets, jobs and sandboxes labelled\n"
        "app.kubernetes.io/managed-by=rossoctl.\n\n"
        "Examples:\n"
        "  rossoctl agents list -n team1\n"
        "  rossoctl agents list -A -o wide\n"
        "  rossoctl agents list -o name --no-headers");
    onRun(command, host, options, &runList);
}

}  // namespace rossoctl::commands
