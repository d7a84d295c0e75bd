#include "rossoctl/app/agent_wait.hpp"

#include <fmt/format.h>

#include "rossoctl/app/agent_failure.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/wait.hpp"

namespace rossoctl::app {

using nlohmann::json;
using std::chrono::milliseconds;
using Outcome = AgentWaitResult::Outcome;

namespace {

Outcome fromWait(kube::WaitOutcome outcome) {
    return outcome == kube::WaitOutcome::Cancelled ? Outcome::Cancelled : Outcome::TimedOut;
}

// A ready pod of the sandbox that is not being replaced; waits for one while there is none.
kube::WaitOutcome waitForSandboxPod(kube::Client& client, const Clock& clock, const json& sandbox,
                                    milliseconds left, const kube::CancelFlag* cancel) {
    const PodSelector selector = sandboxPodSelector(sandbox);
    const std::string uid = uidOf(sandbox);
    kube::WaitOptions options;
    options.labelSelector = selector.labelSelector;
    options.fieldSelector = selector.fieldSelector;
    options.timeout = left;
    options.cancel = cancel;
    const std::string ns = sandbox["metadata"].value("namespace", "");
    return kube::waitForSet(client, clock, kube::resources::pods(), ns, options,
                            [&](const kube::ObjectSet& pods) {
                                for (const auto& [name, pod] : pods)
                                    if (ownedBy(pod, uid) && !terminating(pod) && podReady(pod))
                                        return true;
                                return false;
                            })
        .outcome;
}

}  // namespace

constexpr milliseconds kPodCheckEvery{2000};

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
        kube::WaitOptions options;
        // Watches of at most kPodCheckEvery: between them the pods are looked at, so a pod that
        // cannot start (an image that cannot be pulled) ends the wait instead of its time-out.
        options.timeout = std::min(left(), kPodCheckEvery);
        options.cancel = cancel;
        if (first) {
            // The object just read stands in for the first LIST: the watch starts from it.
            options.initialList =
                json{{"metadata",
                      {{"resourceVersion", current["metadata"].value("resourceVersion", "")}}},
                     {"items", json::array({current})}};
            first = false;
        }
        bool deleted = false;
        auto waited = kube::waitForObject(client, clock, agent.kind.ref, ns, name, options,
                                          [&](const std::optional<json>& object) {
                                              if (!object) return deleted = true;
                                              current = *object;
                                              result.status =
                                                  model::workloadStatus(agent.kind.type, current);
                                              return result.status.ready || result.status.failed;
                                          });
        if (!waited.satisfied()) {
            if (waited.outcome == kube::WaitOutcome::TimedOut && clock.monotonic() < deadline) {
                // Reads that an apiserver outage refuses are tried again, as the waits are.
                std::optional<std::string> failure;
                kube::rideOutOutage(clock, left(), cancel, [&] {
                    failure = agentStartFailure(client, ns, agent.kind.type, current, eventsSince);
                });
                if (failure) {
                    result.outcome = Outcome::Failed;
                    result.status.reason = "PodCannotStart";
                    result.status.message = *failure;
                    return result;
                }
                continue;
            }
            result.outcome = fromWait(waited.outcome);
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
        const auto pod = currentPod(findSandboxPods(client, current).owned);
        if (pod && podReady(*pod)) {
            result.outcome = Outcome::Ready;
            return result;
        }
        result.waitingFor = "a ready pod to replace the deleted one";
        const auto podWait = waitForSandboxPod(client, clock, current, left(), cancel);
        if (podWait != kube::WaitOutcome::Satisfied) {
            result.outcome = fromWait(podWait);
            result.status.ready = false;
            return result;
        }
    }
}

}  // namespace rossoctl::app
