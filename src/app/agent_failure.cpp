#include "rossoctl/app/agent_failure.hpp"

#include <fmt/format.h>

#include <utility>

#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/model/pod_failure.hpp"
#include "rossoctl/model/quota.hpp"
#include "rossoctl/model/validation.hpp"

namespace rossoctl::app {

using nlohmann::json;

namespace {

// spec.selector.matchLabels as a label selector; empty when there is none to select by.
std::string matchLabelsSelector(const json& workload) {
    std::string selector;
    const json labels = workload.value("spec", json::object())
                            .value("selector", json::object())
                            .value("matchLabels", json::object());
    for (const auto& [key, value] : labels.items()) {
        if (!selector.empty()) selector += ",";
        selector += key + "=" + value.get<std::string>();
    }
    return selector;
}

std::vector<json> workloadPods(kube::Client& client, const std::string& ns,
                               model::WorkloadType type, const json& workload) {
    if (type == model::WorkloadType::Sandbox) return findSandboxPods(client, workload).owned;
    kube::ListOptions options;
    options.labelSelector = matchLabelsSelector(workload);
    if (options.labelSelector.empty()) return {};
    const json list = client.list(kube::resources::pods(), ns, options);
    const json items = list.value("items", json::array());
    return {items.begin(), items.end()};
}

// Warning events about the object with this UID, as one LIST; forbidden or not served: none.
json warningEvents(kube::Client& client, const std::string& ns, const std::string& uid) {
    kube::ListOptions options;
    options.fieldSelector = "involvedObject.uid=" + uid + ",type=Warning";
    try {
        return client.list(kube::resources::events(), ns, options);
    } catch (const kube::ApiError&) {
        return json::object();  // events only sharpen the message; the wait goes on without
    }
}

std::optional<std::string> eventFailure(kube::Client& client, const std::string& ns,
                                        const json& workload,
                                        std::chrono::system_clock::time_point since) {
    const std::string uid = uidOf(workload);
    if (uid.empty()) return std::nullopt;
    return model::createFailureEvent(warningEvents(client, ns, uid), since);
}

// A Sandbox with no live pod whose pod a ResourceQuota refuses, read from the quotas and pods
// themselves: not every controller reports the refusal (the released one writes it in the
// Sandbox's status, others only in their own log). Quotas it may not read: none.
std::optional<std::string> sandboxQuotaFailure(kube::Client& client, const std::string& ns,
                                               const json& sandbox, const std::vector<json>& pods) {
    for (const auto& pod : pods)
        if (!terminating(pod)) return std::nullopt;
    if (suspendedInSpec(sandbox)) return std::nullopt;
    const json podSpec = sandbox.value("spec", json::object())
                             .value("podTemplate", json::object())
                             .value("spec", json::object());
    try {
        const json quotas = client.list(kube::resources::resourceQuotas(), ns);
        if (quotas.value("items", json::array()).empty()) return std::nullopt;
        return model::quotaRefusal(podSpec, quotas, client.list(kube::resources::pods(), ns));
    } catch (const kube::ApiError&) {
        return std::nullopt;  // the quota only names the blocker; the wait goes on without
    }
}

// A quota refusal read from a status or an event may be older than the use it counted (see
// model::quotaRefusalHolds): it is dropped only when the quota, read now, has room for the pod.
bool refusalStands(kube::Client& client, const std::string& ns, const std::string& failure) {
    const std::string quotaName = model::refusingQuotaName(failure);
    // The name comes from a status or an event: a path segment only when it is a valid name.
    if (!model::isDnsSubdomain(quotaName)) return true;
    try {
        const auto quota = client.getIfExists(kube::resources::resourceQuotas(), ns, quotaName);
        if (!quota) return true;  // not read as it is now: the refusal as written
        return model::quotaRefusalHolds(failure, *quota, client.list(kube::resources::pods(), ns));
    } catch (const kube::ApiError&) {
        return true;
    }
}

}  // namespace

std::optional<std::string> sandboxCreateFailure(kube::Client& client, const json& sandbox,
                                                std::chrono::system_clock::time_point since) {
    const std::string ns = sandbox.value("metadata", json::object()).value("namespace", "");
    auto failure = model::workloadCreateFailure(sandbox);
    if (!failure) failure = eventFailure(client, ns, sandbox, since);
    if (failure && !refusalStands(client, ns, *failure)) failure.reset();
    if (!failure)
        failure = sandboxQuotaFailure(client, ns, sandbox, findSandboxPods(client, sandbox).owned);
    if (failure) return "its pod cannot be created: " + *failure;
    return std::nullopt;
}

std::optional<std::string> agentStartFailure(kube::Client& client, const std::string& ns,
                                             model::WorkloadType type, const json& workload,
                                             std::chrono::system_clock::time_point since) {
    if (auto failure = model::workloadCreateFailure(workload);
        failure && refusalStands(client, ns, *failure))
        return "its pod cannot be created: " + *failure;
    const auto pods = workloadPods(client, ns, type, workload);
    for (const auto& pod : pods) {
        if (terminating(pod)) continue;
        if (auto failure = model::podStartFailure(pod))
            return fmt::format("pod {}: {}",
                               pod.value("metadata", json::object()).value("name", ""), *failure);
    }
    auto failure = eventFailure(client, ns, workload, since);
    if (failure && !refusalStands(client, ns, *failure)) failure.reset();
    if (!failure && type == model::WorkloadType::Sandbox)
        failure = sandboxQuotaFailure(client, ns, workload, pods);
    if (failure) return "its pod cannot be created: " + *failure;
    return std::nullopt;
}

BlockableWaitResult waitUnlessBlocked(
    const Clock& clock, std::chrono::milliseconds timeout, const kube::CancelFlag* cancel,
    const std::function<kube::WaitResult(std::chrono::milliseconds span)>& wait,
    const std::function<std::optional<std::string>()>& blocker,
    const std::function<bool()>& blockable) {
    using std::chrono::milliseconds;
    const auto deadline = clock.monotonic() + timeout;
    auto left = [&] {
        return std::chrono::duration_cast<milliseconds>(deadline - clock.monotonic());
    };
    auto deadlinePassed = [&] { return timeout.count() > 0 && left().count() <= 0; };
    auto stillBlockable = [&] { return !blockable || blockable(); };
    for (;;) {
        // 0 = no deadline: the span of a wait nothing can block any more is all that is left.
        milliseconds span = stillBlockable() ? kBlockerCheckEvery : milliseconds{0};
        if (timeout.count() > 0)
            span = std::max(milliseconds{1}, span.count() == 0 ? left() : std::min(span, left()));
        BlockableWaitResult result;
        try {
            result.wait = wait(span);
        } catch (const std::exception& error) {
            // A span rides an outage only as long as itself; a longer one goes on in the next.
            if (!kube::isOutage(error) || deadlinePassed()) throw;
            result.wait.outcome = kube::WaitOutcome::TimedOut;
        }
        if (result.wait.outcome != kube::WaitOutcome::TimedOut || deadlinePassed()) return result;
        if (!stillBlockable()) continue;
        try {
            const milliseconds budget = timeout.count() > 0 ? left() : kNoDeadlineOutageBudget;
            kube::rideOutOutage(clock, std::max(budget, milliseconds{1}), cancel,
                                [&] { result.blocker = blocker(); });
        } catch (const kube::ApiError& error) {
            // The blocker is a hint beside the wait: a read this user may not make is skipped.
            if (!error.isForbidden()) throw;
        } catch (const kube::TransportError& error) {
            // Cut short by the deadline it shares with the wait: the wait timed out.
            if (error.kind() == kube::TransportError::Kind::Cancelled || !deadlinePassed()) throw;
        }
        // Reading the blocker takes time too: no new span once the deadline has passed.
        if (result.blocker || deadlinePassed()) return result;
    }
}

BlockableWaitResult waitForObjectUnlessBlocked(
    kube::Client& client, const Clock& clock, const kube::ResourceRef& ref, const std::string& ns,
    const std::string& name, std::chrono::milliseconds timeout, const kube::CancelFlag* cancel,
    const kube::ObjectPredicate& done, const std::function<std::optional<std::string>()>& blocker,
    std::optional<nlohmann::json> initialList) {
    return waitUnlessBlocked(
        clock, timeout, cancel,
        [&](std::chrono::milliseconds span) {
            kube::WaitOptions options;
            options.timeout = span;
            options.cancel = cancel;
            options.initialList = std::exchange(initialList, std::nullopt);
            auto waited = kube::waitForObject(client, clock, ref, ns, name, options, done);
            initialList = waited.resumeList();  // the next span watches on from here
            return waited;
        },
        blocker);
}

}  // namespace rossoctl::app
