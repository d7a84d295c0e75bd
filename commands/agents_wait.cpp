// rossoctl agents wait N: watches the agent's workload until it is ready, whatever its type.
#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agent_wait.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

struct WaitOptions {
    std::string name;
    std::string timeout = "2m";
};

// Why a Sandbox cannot become Ready however long one waits (suspended, expired, finished).
std::string neverReady(const app::Agent& agent, const json& object, const Clock& clock) {
    if (agent.kind.type != model::WorkloadType::Sandbox) return {};
    return app::sandboxNotRunningReason(object, clock.now());
}

std::string readyMeaning(model::WorkloadType type) {
    switch (type) {
        case model::WorkloadType::Deployment:
            return "available";
        case model::WorkloadType::StatefulSet:
            return "ready";
        case model::WorkloadType::Job:
            return "complete or running and ready";
        case model::WorkloadType::Sandbox:
            return "Ready";
    }
    return "ready";
}

int runWait(app::Context& context, WaitOptions& options) {
    // validate
    options.name = objectName(options.name, agentTypes(), "agent");
    model::validateDnsSubdomain(options.name, "agent name");
    auto timeout = app::parseDuration(options.timeout, "--timeout");
    // Every request ends by --timeout too: the lookups before the wait were 5 minutes each.
    const auto deadlineAt = context.clock().monotonic() + timeout;
    std::optional<kube::Client::DeadlineScope> deadline;
    if (timeout.count() > 0)
        deadline.emplace(
            context.client(),
            kube::CommandDeadline{deadlineAt, "the command's --timeout " + options.timeout});
    // complete
    const std::string ns = context.namespaceName();
    // run: read once, then follow the workload (and a Sandbox's pod) until ready
    auto agent = app::getAgent(context.client(), context.discovery(), ns, options.name);
    const std::string label = app::typeName(agent.kind.ref) + "/" + options.name;
    if (auto why = neverReady(agent, agent.object, context.clock()); !why.empty())
        throw Error(fmt::format("{} will not become Ready: it {}{}", label, why,
                                app::resumeAdvice(agent.object, ns, options.name)));
    // The wait ends when the command does: what the lookups left of --timeout.
    if (timeout.count() > 0)
        timeout = std::max(std::chrono::milliseconds{1},
                           std::chrono::duration_cast<std::chrono::milliseconds>(
                               deadlineAt - context.clock().monotonic()));
    const auto result =
        app::waitForAgent(context.client(), context.clock(), agent, timeout, context.cancelFlag());
    const auto& status = result.status;
    using Outcome = app::AgentWaitResult::Outcome;
    switch (result.outcome) {
        case Outcome::Ready:
            context.out() << label << " is ready (" << ui::escapeForTerminal(status.reason)
                          << ")\n";
            return 0;
        case Outcome::Failed:
            throw Error(fmt::format("{} will not become ready: {}: {}", label, status.reason,
                                    status.message));
        case Outcome::Deleted:
            throw Error(fmt::format("{} was deleted while waiting for it", label));
        case Outcome::Cancelled:
            throw Error(fmt::format("interrupted while waiting for {} to be {}", label,
                                    readyMeaning(agent.kind.type)));
        case Outcome::TimedOut:
            break;
    }
    throw Error(fmt::format("timed out after {} waiting for {} to be {}: {}", options.timeout,
                            label, readyMeaning(agent.kind.type),
                            result.waitingFor.empty() ? status.message : result.waitingFor));
}

}  // namespace

void registerAgentsWait(CLI::App& agents, CommandHost& host) {
    auto options = std::make_shared<WaitOptions>();
    auto* command = agents.add_subcommand("wait", "Wait until an agent is ready");
    command->add_option("name", options->name, "Agent name")->required();
    command->add_option("--timeout", options->timeout, "How long to wait (30s, 2m, 1h)")
        ->capture_default_str();
    command->footer(
        "Ready means: a Sandbox's Ready condition, with its pod's containers up for 3s (10s\n"
        "after a crash); a Deployment available; a StatefulSet's replicas ready; a Job\n"
        "complete, or its pod running and Ready. A pod that cannot start (an image that cannot\n"
        "be pulled, a quota) or keeps exiting (CrashLoopBackOff) ends the wait at once.\n\n"
        "Examples:\n"
        "  rossoctl agents wait orders -n team1\n"
        "  rossoctl agents wait orders --timeout 5m && rossoctl sandbox verify orders\n"
        "\n"
        "Exit codes: 0 ready, 1 timed out (the conditions are printed), failed (what blocks it\n"
        "is named) or not found,\n"
        "130 interrupted.");
    onRun(command, host, options, &runWait);
}

}  // namespace rossoctl::commands
