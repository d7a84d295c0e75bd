// rossoctl agents wait N: watches the agent's workload until it is ready, whatever its type.
#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agents.hpp"
#include "rossoctl/app/sandbox_pod.hpp"

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
    // complete
    const std::string ns = context.namespaceName();
    auto& client = context.client();
    const auto& clock = context.clock();
    const auto deadline = clock.monotonic() + timeout;
    // run: read once, then follow the watch from that resourceVersion
    auto agent = app::getAgent(client, context.discovery(), ns, options.name);
    const std::string label = app::typeName(agent.kind.ref) + "/" + options.name;
    json current = agent.object;
    bool deleted = false;
    for (;;) {
        auto status = model::workloadStatus(agent.kind.type, current);
        if (status.ready) {
            context.out() << label << " is ready (" << status.reason << ")\n";
            return 0;
        }
        if (status.failed)
            throw Error(fmt::format("{} will not become ready: {}: {}", label, status.reason,
                                    status.message));
        if (deleted) throw Error(fmt::format("{} was deleted while waiting for it", label));
        if (auto why = neverReady(agent, current, clock); !why.empty())
            throw Error(fmt::format("{} will not become Ready: it {}", label, why));
        auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.monotonic());
        if (left.count() <= 0 || context.cancelled())
            throw Error(fmt::format("timed out after {} waiting for {} to be {}: {}",
                                    options.timeout, label, readyMeaning(agent.kind.type),
                                    status.message));
        kube::ListOptions watchOptions;
        watchOptions.fieldSelector = "metadata.name=" + options.name;
        watchOptions.resourceVersion = current["metadata"].value("resourceVersion", "");
        watchOptions.timeoutSeconds = static_cast<int>(std::max<long long>(1, left.count() / 1000));
        try {
            client.watch(
                agent.kind.ref, ns, watchOptions,
                [&](const kube::WatchEvent& event) {
                    if (event.type == "BOOKMARK") return true;
                    if (event.type == "DELETED") {
                        deleted = true;
                        return false;
                    }
                    current = event.object;
                    auto now = model::workloadStatus(agent.kind.type, current);
                    return !now.ready && !now.failed && neverReady(agent, current, clock).empty();
                },
                left);
        } catch (const kube::ApiError& error) {
            if (error.code() != 410) throw;
            // The resourceVersion expired: read the object afresh and watch from there.
            auto fresh = client.getIfExists(agent.kind.ref, ns, options.name);
            if (!fresh)
                deleted = true;
            else
                current = *fresh;
        }
    }
}

}  // namespace

void registerAgentsWait(CLI::App& agents, CommandHost& host) {
    auto options = std::make_shared<WaitOptions>();
    auto* command = agents.add_subcommand("wait", "Wait until an agent is ready");
    command->add_option("name", options->name, "Agent name")->required();
    command->add_option("--timeout", options->timeout, "How long to wait (30s, 2m, 1h)")
        ->capture_default_str();
    command->footer(
        "Ready means: a Sandbox's Ready condition; a Deployment available; a StatefulSet's\n"
        "replicas ready; a Job complete, or its pod running and Ready.\n\n"
        "Examples:\n"
        "  rossoctl agents wait orders -n team1\n"
        "  rossoctl agents wait orders --timeout 5m && rossoctl sandbox verify orders\n"
        "\n"
        "Exit codes: 0 ready, 1 timed out (the conditions are printed), failed or not found.");
    onRun(command, host, options, &runWait);
}

}  // namespace rossoctl::commands
