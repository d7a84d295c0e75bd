#pragma once
// Why an agent's pods cannot start until its spec, quota or LimitRange changes (a pod the
// controller may not create, an image that cannot be pulled, a container configuration
// error), so a wait for it can stop with the real blocker instead of timing out.
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/workload.hpp"

namespace rossoctl::app {

// The workload's own status (the controller could not create its pod), then one LIST of its
// pods ("pod P: image X cannot be pulled (ErrImagePull): ..."), then its Warning events seen
// since `since` (FailedCreate: ... exceeded quota), then, for a Sandbox with no live pod, the
// namespace's ResourceQuotas (a quota that refuses its pod, whatever its controller reports);
// nullopt while the pods still may start.
std::optional<std::string> agentStartFailure(kube::Client& client, const std::string& ns,
                                             model::WorkloadType type,
                                             const nlohmann::json& workload,
                                             std::chrono::system_clock::time_point since);

// A Sandbox whose pod cannot be created (its status, its FailedCreate events since `since`, or,
// while it has no live pod, a ResourceQuota that refuses that pod); nullopt when nothing says
// so. Events and quotas it may not read are skipped.
std::optional<std::string> sandboxCreateFailure(kube::Client& client, const nlohmann::json& sandbox,
                                                std::chrono::system_clock::time_point since);

// How often a wait looks beyond what it watches for a blocker (a Sandbox's status, its pods,
// its events), which no watch of that object would show.
inline constexpr std::chrono::milliseconds kBlockerCheckEvery{2000};

struct BlockableWaitResult {
    kube::WaitResult wait;
    std::optional<std::string> blocker;  // set: the wait ended because this blocks it
};

// How long a wait without a deadline rides out an apiserver outage before giving up.
inline constexpr std::chrono::milliseconds kNoDeadlineOutageBudget{std::chrono::minutes(5)};

// Runs `wait` (one kube::waitForObject/waitForSet with the given time-out) in spans of at most
// kBlockerCheckEvery until it is satisfied, cancelled, or `timeout` (0 = none) has passed;
// after each span that timed out `blocker` is asked, and a reason it gives ends the wait.
// An apiserver outage is ridden out within `timeout`, across spans and blocker reads alike;
// a blocker read the user is forbidden to make counts as no blocker. Once `blockable` (if given)
// says false, nothing can block the wait any more: the rest is one span, with no blocker read.
BlockableWaitResult waitUnlessBlocked(
    const Clock& clock, std::chrono::milliseconds timeout, const kube::CancelFlag* cancel,
    const std::function<kube::WaitResult(std::chrono::milliseconds span)>& wait,
    const std::function<std::optional<std::string>()>& blocker,
    const std::function<bool()>& blockable = {});

// waitUnlessBlocked over kube::waitForObject of one object; `initialList` (the object just
// read, as a one-item List) stands in for the first span's LIST.
BlockableWaitResult waitForObjectUnlessBlocked(
    kube::Client& client, const Clock& clock, const kube::ResourceRef& ref, const std::string& ns,
    const std::string& name, std::chrono::milliseconds timeout, const kube::CancelFlag* cancel,
    const kube::ObjectPredicate& done, const std::function<std::optional<std::string>()>& blocker,
    std::optional<nlohmann::json> initialList = std::nullopt);

}  // namespace rossoctl::app
