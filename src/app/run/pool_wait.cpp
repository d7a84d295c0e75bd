#include "rossoctl/app/run/pool_wait.hpp"

#include <fmt/format.h>

#include "rossoctl/app/agent_failure.hpp"
#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod_failure.hpp"

namespace rossoctl::app::run {

using nlohmann::json;

void waitForWarmPool(kube::Client& client, const Clock& clock, const kube::CancelFlag* cancel,
                     const std::string& ns, const std::string& name, int size,
                     std::chrono::milliseconds timeout, const std::string& timeoutText) {
    // Recent events only: an old one may describe trouble that is gone.
    const auto eventsSince = clock.now() - std::chrono::minutes(5);
    json last;
    auto waited = waitForObjectUnlessBlocked(
        client, clock, sandboxWarmPools(), ns, name, timeout, cancel,
        [&](const std::optional<json>& pool) {
            if (pool) last = *pool;
            return pool && warmPoolStatus(*pool).ready >= size;
        },
        [&]() -> std::optional<std::string> {
            if (last.is_null()) return std::nullopt;
            return warmPoolFillFailure(client, ns, last, eventsSince);
        });
    // The pool keeps retrying: what to do is said with rossoctl's commands (walk 6 MINOR 12).
    if (waited.blocker)
        throw Error(fmt::format(
            "SandboxWarmPool {} cannot fill: {}; it keeps retrying until that is fixed: remove it "
            "with \"rossoctl sandbox pool delete {} -n {}\", then make it again",
            name, *waited.blocker, name, ns));
    if (!waited.wait.satisfied()) {
        // Capacity (Unschedulable) is no blocker, it may free up: said only when time runs out.
        std::string why;
        if (!last.is_null()) why = warmPoolNotReadyReason(client, ns, last);
        throw Error(fmt::format(
            "SandboxWarmPool {} did not reach {} ready sandboxes within --timeout {}{}; it goes "
            "on filling: \"rossoctl sandbox pool list -n {}\" shows it, \"rossoctl sandbox pool "
            "delete {} -n {}\" removes it",
            name, size, timeoutText, why.empty() ? "" : " (" + why + ")", ns, name, ns));
    }
}

void waitForBarePool(kube::Client& client, const Clock& clock, const kube::CancelFlag* cancel,
                     const std::string& ns, const RunPodShape& shape, int size,
                     std::chrono::milliseconds timeout, const std::string& timeoutText) {
    kube::WaitOptions waitOptions;
    waitOptions.labelSelector = fmt::format("{}={}", kPoolLabel, kPoolWarm);
    waitOptions.timeout = timeout;
    waitOptions.cancel = cancel;
    const std::string key = shapeKey(shape);
    std::string cannotStart;  // a warm pod whose image cannot be pulled: the rest will not be
    auto result = kube::waitForSet(
        client, clock, kube::resources::pods(), ns, waitOptions, [&](const kube::ObjectSet& pods) {
            int running = 0;
            for (const auto& [name, pod] : pods) {
                const json annotations = pod["metadata"].value("annotations", json::object());
                if (annotations.value(kPoolShapeAnnotation, "") != key) continue;
                if (auto failure = model::podStartFailure(pod)) {
                    cannotStart = fmt::format("pod {}: {}", name, *failure);
                    return true;
                }
                if (pod.value("status", json::object()).value("phase", "") == "Running") ++running;
            }
            return running >= size;
        });
    if (!cannotStart.empty())
        throw Error(fmt::format("the pool cannot fill: {}; see kubectl -n {} describe pod",
                                cannotStart, ns));
    if (!result.satisfied())
        throw Error(
            fmt::format("the pool did not reach {} running pods within --timeout {}; see "
                        "kubectl -n {} get pods -l {}={}",
                        size, timeoutText, ns, kPoolLabel, kPoolWarm));
}

}  // namespace rossoctl::app::run
