#include "rossoctl/app/agent_wait.hpp"

#include <fmt/format.h>

#include <utility>

#include "rossoctl/app/agent_failure.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod_failure.hpp"

namespace rossoctl::app {

using nlohmann::json;
using std::chrono::milliseconds;
using Outcome = AgentWaitResult::Outcome;

namespace {

Outcome fromWait(kube::WaitOutcome outcome) {
    return outcome == kube::WaitOutcome::Cancelled ? Outcome::Cancelled : Outcome::TimedOut;
}

// Ready, and running long enough that it is not the moment between a start and an exit.
bool podUp(const Clock& clock, const json& pod) {
    return podReady(pod) && clock.now() >= model::podSettledAt(pod);
}

// What the wait for the sandbox's pod waits for, as a time-out names it.
std::string podAwaited(const std::optional<json>& pod) {
    if (!pod || terminating(*pod)) return "a ready pod to replace the deleted one";
    const std::string name = pod->value("metadata", json::object()).value("name", "");
    if (podReady(*pod)) return fmt::format("pod {} to stay up", name);
    return fmt::format("pod {} to be ready", name);
}

// A pod of the sandbox that is not being replaced and is up (podUp); waits for one while there is
// none, unless a pod cannot start or keeps exiting or the Sandbox (status, pods, events) says none
// can be created.
BlockableWaitResult waitForSandboxPod(kube::Client& client, const Clock& clock, const Agent& agent,
                                      const json& sandbox, milliseconds left,
                                      std::chrono::system_clock::time_point eventsSince,
                                      const kube::CancelFlag* cancel) {
    const PodSelector selector = sandboxPodSelector(sandbox);
    const std::string uid = uidOf(sandbox);
    const std::string ns = sandbox.value("metadata", json::object()).value("namespace", "");
    std::optional<std::string> cannotStart;
    std::optional<json> resume;  // where the last span's watch stopped
    auto waited = waitUnlessBlocked(
        clock, left, cancel,
        [&](milliseconds span) {
            kube::WaitOptions options;
            options.labelSelector = selector.labelSelector;
            options.fieldSelector = selector.fieldSelector;
            options.timeout = span;
            options.cancel = cancel;
            options.initialList = std::exchange(resume, std::nullopt);
            auto pods = kube::waitForSet(client, clock, kube::resources::pods(), ns, options,
                                         [&](const kube::ObjectSet& pods) {
                                             for (const auto& [name, pod] : pods) {
                                                 if (!controlledBy(pod, uid) || terminating(pod))
                                                     continue;
                                                 if (auto failure = model::podStartFailure(pod)) {
                                                     cannotStart =
                                                         fmt::format("pod {}: {}", name, *failure);
                                                     return true;
                                                 }
                                                 if (podUp(clock, pod)) return true;
                                             }
                                             return false;
                                         });
            resume = pods.resumeList();
            return pods;
        },
        [&]() -> std::optional<std::string> {
            const auto current = client.getIfExists(agent.kind.ref, ns, agent.name());
            if (!current) return std::nullopt;  // the next wait for the object says it is gone
            return agentStartFailure(client, ns, agent.kind.type, *current, eventsSince);
        });
    if (cannotStart) waited.blocker = cannotStart;
    return waited;
}

}  // namespace

AgentWaitResult waitForAgent(kube::Client& client, const Clock& clock, const Agent& agent,
                             milliseconds timeout, const kube::CancelFlag* cancel) {
    AgentWaitResult result;
    const auto deadline = clock.monotonic() + timeout;
    // A FailedCreate from shortly before the wait still blocks it (the controller retries
    // with a back-off, so the event is not repeated every second).
    const auto eventsSince = clock.now() - std::chrono::minutes(5);
    const std::string ns = agent.namespaceName();
    const std::string name = agent.name();
    const bool sandbox = agent.kind.type == model::WorkloadType::Sandbox;
    json current = agent.object;
    bool first = true;
    auto left = [&] {
        return std::max(milliseconds{1},
                        std::chrono::duration_cast<milliseconds>(deadline - clock.monotonic()));
    };
    for (;;) {
        result.waitingFor = "";
        bool deleted = false;
        // Spans of a watch; between them the pods are looked at, so a pod that cannot start (an
        // image that cannot be pulled) ends the wait instead of its time-out.
        std::optional<json> given;
        if (first) {
            // The object just read stands in for the first LIST: the watch starts there.
            given =
                json{{"metadata",
                      {{"resourceVersion",
                        current.value("metadata", json::object()).value("resourceVersion", "")}}},
                     {"items", json::array({current})}};
            first = false;
        }
        auto waited = waitForObjectUnlessBlocked(
            client, clock, agent.kind.ref, ns, name, left(), cancel,
            [&](const std::optional<json>& object) {
                if (!object) return deleted = true;
                current = *object;
                result.status = model::workloadStatus(agent.kind.type, current);
                return result.status.ready || result.status.failed;
            },
            [&] { return agentStartFailure(client, ns, agent.kind.type, current, eventsSince); },
            std::move(given));
        if (waited.blocker) {
            result.outcome = Outcome::Failed;
            result.status.reason = "PodCannotStart";
            result.status.message = *waited.blocker;
            return result;
        }
        if (!waited.wait.satisfied()) {
            result.outcome = fromWait(waited.wait.outcome);
            return result;
        }
        if (deleted) {
            result.outcome = Outcome::Deleted;
            return result;
        }
        if (result.status.failed) {
            result.outcome = Outcome::Failed;
            return result;
        }
        if (!sandbox) {
            result.outcome = Outcome::Ready;
            return result;
        }
        // Ready=True is only as new as the pod it describes: with that pod deleted (a restart
        // with --wait=false) it is stale until the controller sees the replacement.
        const auto pod = sandboxPod(current, findSandboxPods(client, current).owned);
        // A pod that started a moment ago may be one that exits at once (a crash loop reads
        // Ready between its restarts): it counts once it has stayed up.
        if (pod && podUp(clock, *pod)) {
            result.outcome = Outcome::Ready;
            return result;
        }
        result.waitingFor = podAwaited(pod);
        const auto podWait =
            waitForSandboxPod(client, clock, agent, current, left(), eventsSince, cancel);
        if (podWait.blocker) {
            result.outcome = Outcome::Failed;
            result.status.ready = false;
            result.status.reason = "PodCannotStart";
            result.status.message = *podWait.blocker;
            return result;
        }
        if (!podWait.wait.satisfied()) {
            result.outcome = fromWait(podWait.wait.outcome);
            result.status.ready = false;
            return result;
        }
    }
}

}  // namespace rossoctl::app
