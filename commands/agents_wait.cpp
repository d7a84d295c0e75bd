// rossoctl agents wait N: watches the agent's workload until it is ready, whatever its type.
#include <fmt/format.h>

#include "registry.hpp"
#include "rossoctl/app/agent_failure.hpp"
#include "rossoctl/app/agents.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

constexpr std::chrono::milliseconds kPodCheckEvery{2000};

struct WaitOptions {
    std::string name;
    std::string timeout = "2m";
};

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
    bool watched = false;
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
        // A pod that cannot start (its image cannot be pulled, say) ends the wait early; its
        // pods are looked at once a watch has shown the workload is not ready by itself.
        if (watched)
            if (auto failure = app::agentStartFailure(client, ns, agent.kind.type, current))
                throw Error(fmt::format("{} will not become ready: {}", label, *failure));
        auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.monotonic());
        if (left.count() <= 0 || context.cancelled())
            throw Error(fmt::format("timed out after {} waiting for {} to be {}: {}",
                                    options.timeout, label, readyMeaning(agent.kind.type),
                                    status.message));
        kube::ListOptions watchOptions;
        watchOptions.fieldSelector = "metadata.name=" + options.name;
        watchOptions.resourceVersion = current["metadata"].value("resourceVersion", "");
        // The pods are looked at between watches, so the server ends each after kPodCheckEvery.
        const auto chunk = std::min(left, kPodCheckEvery);
        watchOptions.timeoutSeconds =
            static_cast<int>(std::max<long long>(1, chunk.count() / 1000));
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
                    return !now.ready && !now.failed;
                },
                left);
            watched = true;
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
