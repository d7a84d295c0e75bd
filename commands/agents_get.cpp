// rossoctl agents get N...: which workload runs each agent, whether it is ready, its image and pod.
#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agents.hpp"

namespace rossoctl::commands {
namespace {

struct GetOptions {
    std::vector<std::string> names;  // NAME or TYPE/NAME, as -o name prints them
    OutputFlags output;
};

int runGet(app::Context& context, GetOptions& options) {
    // validate
    const auto names = objectNames(options.names, agentTypes(), "agent");
    for (const auto& name : names) model::validateDnsSubdomain(name, "agent name");
    auto format = listOutputFormat(options.output);
    checkTemplateOutput(options.output);  // a usage error, before anything is sent
    // complete
    const std::string ns = context.namespaceName();
    // run: every name is looked up; one that is missing (or not an agent) is reported after the
    // found ones are printed, as kubectl get does. An API error (403, ...) ends the command.
    auto& client = context.client();
    std::vector<app::Agent> found;
    std::vector<std::string> missing;
    for (const auto& name : names) {
        try {
            found.push_back(app::getAgent(client, context.discovery(), ns, name));
        } catch (const app::AgentNotFound& error) {
            missing.push_back(error.what());
        }
    }
    std::vector<nlohmann::json> objects;
    for (const auto& agent : found) objects.push_back(agent.object);
    const bool single = names.size() == 1;
    const bool printed =
        found.empty() ||
        printTemplate(context.out(), options.output, objects, single, context.streams().outIsTty) ||
        app::printObjects(context.out(), format, found, single, options.output.showManagedFields);
    if (!printed) {
        auto table = app::agentTable(false, true);
        for (const auto& agent : found)
            app::addAgentRow(table, agent, app::agentPod(client, agent), context.clock().now(),
                             false, true);
        ui::printTable(context.out(), table, options.output.noHeaders,
                       format == ui::OutputFormat::Wide);
    }
    for (const auto& message : missing) context.err() << "error: " << message << '\n';
    return missing.empty() ? kExitOk : kExitError;
}

}  // namespace

void registerAgentsGet(CLI::App& agents, CommandHost& host) {
    auto options = std::make_shared<GetOptions>();
    auto* command = agents.add_subcommand("get", "Show agents: type, status, image and pod");
    command
        ->add_option("name", options->names,
                     "Agent names (NAME or TYPE/NAME: deployment/NAME, agentruntime/NAME, ...)")
        ->required();
    addOutputFlags(command, options->output, "table|wide|json|yaml|name");
    command->footer(
        "Examples:\n"
        "  rossoctl agents get orders -n team1\n"
        "  rossoctl agents get orders billing -o wide\n"
        "  rossoctl agents get orders -o yaml\n"
        "  rossoctl agents list -o name | xargs rossoctl agents get\n"
        "\n"
        "Exit codes: 0 found, 1 not found or API error, 2 invalid arguments.");
    onRun(command, host, options, &runGet);
}

}  // namespace rossoctl::commands
