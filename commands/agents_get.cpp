// rossoctl agents get N: which workload runs the agent, whether it is ready, its image and pod.
#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agents.hpp"

namespace rossoctl::commands {
namespace {

struct GetOptions {
    std::string name;
    OutputFlags output;
};

int runGet(app::Context& context, GetOptions& options) {
    // validate
    options.name = objectName(options.name, agentTypes(), "agent");
    model::validateDnsSubdomain(options.name, "agent name");
    const bool templated = isTemplateOutput(options.output.output);
    auto format = templated ? ui::OutputFormat::Json : ui::parseOutputFormat(options.output.output);
    std::ostringstream ignored;  // a bad template or --sort-by: a usage error, nothing sent
    printTemplate(ignored, options.output, {}, false);
    // complete
    const std::string ns = context.namespaceName();
    // run
    auto agent = app::getAgent(context.client(), context.discovery(), ns, options.name);
    if (printTemplate(context.out(), options.output, {agent.object}, true)) return 0;
    if (app::printObjects(context.out(), format, {agent}, true, options.output.showManagedFields))
        return 0;
    auto status = model::workloadStatus(agent.kind.type, agent.object);
    std::string pod = app::agentPodName(context.client(), agent);
    ui::Table table;
    table.headers = {"NAME", "TYPE", "READY", "STATUS", "IMAGE", "POD", "AGE", "MESSAGE"};
    table.wideOnly = {false, false, false, false, false, false, false, true};
    table.rows.push_back({agent.name(), model::workloadTypeName(agent.kind.type), status.readyText,
                          status.reason, model::workloadImage(agent.kind.type, agent.object),
                          pod.empty() ? "<none>" : pod,
                          app::objectAge(agent.object, context.clock().now()), status.message});
    ui::printTable(context.out(), table, options.output.noHeaders,
                   format == ui::OutputFormat::Wide);
    return 0;
}

}  // namespace

void registerAgentsGet(CLI::App& agents, CommandHost& host) {
    auto options = std::make_shared<GetOptions>();
    auto* command = agents.add_subcommand("get", "Show one agent: type, status, image and pod");
    command->add_option("name", options->name, "Agent name")->required();
    addOutputFlags(command, options->output, "table|wide|json|yaml|name");
    command->footer(
        "Examples:\n"
        "  rossoctl agents get orders -n team1\n"
        "  rossoctl agents get orders -o wide\n"
        "  rossoctl agents get orders -o yaml\n"
        "\n"
        "Exit codes: 0 found, 1 not found or API error, 2 invalid arguments.");
    onRun(command, host, options, &runGet);
}

}  // namespace rossoctl::commands
