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

// A --storage claim: one more "deleted" line and a note that its files go, or a note that it
// stays (a StatefulSet's), with how to remove it.
void printClaim(app::Context& context, const std::string& agent, const app::AgentClaim& claim,
                const char* verb) {
    const std::string ns = context.namespaceName();
    if (claim.deletedWithAgent) {
        context.out() << "persistentvolumeclaim/" << claim.name << verb << '\n' << std::flush;
        context.err() << fmt::format(
            "note: what agent {} kept on /workspace (persistentvolumeclaim/{}, made by "
            "--storage) is deleted with it\n",
            agent, claim.name);
        return;
    }
    context.err() << fmt::format(
        "note: persistentvolumeclaim/{} is kept (a StatefulSet leaves its volume claims): what "
        "agent {} wrote to /workspace is still there, and a new import of {} with --storage "
        "uses it again; delete it with \"kubectl -n {} delete pvc {}\"\n",
        claim.name, agent, agent, ns, claim.name);
}

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
            const char* verb = format == ui::OutputFormat::Name ? "" : " deleted";
            app::deleteAgent(
                context, request,
                [&](const std::string& typeName) {
                    context.out() << typeName << '/' << name << verb << '\n' << std::flush;
                },
                [&](const app::AgentClaim& claim) { printClaim(context, name, claim, verb); });
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
