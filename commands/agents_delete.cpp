// rossoctl agents delete N: the agent's AgentRuntime, its Service and its workload (whose pods
// go with it), whatever type it is.
#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agent_delete.hpp"

namespace rossoctl::commands {
namespace {

struct DeleteOptions {
    std::string name;
    bool wait = true;
    std::string timeout = "2m";
    std::string output;
};

int runDelete(app::Context& context, DeleteOptions& options) {
    // validate
    options.name = objectName(options.name, agentTypes(), "agent");
    model::validateDnsSubdomain(options.name, "agent name");
    auto timeout = app::parseDuration(options.timeout, "--timeout");
    auto format = ui::OutputFormat::Table;
    if (!options.output.empty()) format = ui::parseOutputFormat(options.output, {"name"});
    // complete
    app::AgentDeleteRequest request;
    request.namespaceName = context.namespaceName();
    request.name = options.name;
    request.wait = options.wait;
    request.timeout = timeout;
    request.timeoutText = options.timeout;
    // run
    app::deleteAgent(context, request, [&](const std::string& typeName) {
        context.out() << typeName << '/' << options.name
                      << (format == ui::OutputFormat::Name ? "" : " deleted") << '\n';
    });
    return 0;
}

}  // namespace

void registerAgentsDelete(CLI::App& agents, CommandHost& host) {
    auto options = std::make_shared<DeleteOptions>();
    auto* command = agents.add_subcommand(
        "delete", "Delete an agent: its workload and pods, Service and AgentRuntime");
    command->add_option("name", options->name, "Agent name")->required();
    command->add_flag("--wait", options->wait,
                      "Wait until everything is gone, pods included (default true)");
    command->add_option("--timeout", options->timeout, "How long --wait waits")
        ->capture_default_str();
    command->add_option("-o,--output", options->output, "Output format: name");
    command->footer(
        "Examples:\n"
        "  rossoctl agents delete orders -n team1\n"
        "  rossoctl agents delete orders --wait=false\n"
        "\n"
        "Exit codes: 0 deleted, 1 not found, not managed by rossoctl, or still there after "
        "--timeout.");
    onRun(command, host, options, &runDelete);
}

}  // namespace rossoctl::commands
