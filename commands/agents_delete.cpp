// rossoctl agents delete N...: each agent's AgentRuntime, its Service and its workload (whose pods
// go with it), whatever type it is.
#include <fmt/format.h>

#include <algorithm>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agent_delete.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

struct DeleteOptions {
    std::vector<std::string> names;
    bool wait = true;
    std::string timeout = "2m";
    std::string output;
};

int runDelete(app::Context& context, DeleteOptions& options) {
    // validate: every name, before anything is deleted
    std::vector<std::string> names;
    for (const auto& given : options.names) {
        const std::string name = objectName(given, agentTypes(), "agent");
        model::validateDnsSubdomain(name, "agent name");
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    auto timeout = app::parseDuration(options.timeout, "--timeout");
    auto format = ui::OutputFormat::Table;
    if (!options.output.empty()) format = ui::parseOutputFormat(options.output, {"name"});
    // complete
    app::AgentDeleteRequest request;
    request.namespaceName = context.namespaceName();
    request.wait = options.wait;
    request.timeout = timeout;
    request.timeoutText = options.timeout;
    // run: as kubectl delete does, one name that fails does not keep the others
    int failed = 0;
    for (const auto& name : names) {
        request.name = name;
        try {
            app::deleteAgent(context, request, [&](const std::string& typeName) {
                context.out() << typeName << '/' << name
                              << (format == ui::OutputFormat::Name ? "" : " deleted") << '\n'
                              << std::flush;
            });
        } catch (const Error& error) {
            const bool interrupted = context.cancelFlag() && context.cancelFlag()->cancelled();
            if (names.size() == 1 || interrupted) throw;
            ++failed;
            context.err() << "error: " << ui::escapeErrorLine(error.what(), context.utf8Terminal())
                          << '\n'
                          << std::flush;
        }
    }
    return failed > 0 ? kExitError : kExitOk;
}

}  // namespace

void registerAgentsDelete(CLI::App& agents, CommandHost& host) {
    auto options = std::make_shared<DeleteOptions>();
    auto* command = agents.add_subcommand(
        "delete", "Delete agents: each one's workload and pods, Service and AgentRuntime");
    command->add_option("names", options->names, "Agent names")->required();
    command->add_flag("--wait", options->wait,
                      "Wait until everything is gone, pods included (default true)");
    command->add_option("--timeout", options->timeout, "How long --wait waits")
        ->capture_default_str();
    command->add_option("-o,--output", options->output, "Output format: name");
    command->footer(
        "Examples:\n"
        "  rossoctl agents delete orders -n team1\n"
        "  rossoctl agents delete orders --wait=false\n"
        "  rossoctl agents delete q1 q2 q3 -n team1\n"
        "\n"
        "Each name is deleted in turn; one that fails is reported and the rest go on.\n"
        "Exit codes: 0 deleted, 1 not found, not managed by rossoctl, or still there after "
        "--timeout (any of the names).");
    onRun(command, host, options, &runDelete);
}

}  // namespace rossoctl::commands
