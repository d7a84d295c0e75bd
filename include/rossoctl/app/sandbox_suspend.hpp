#pragma once
// Suspending and resuming a Sandbox: v1beta1 spec.operatingMode Suspended/Running, v1alpha1
// spec.replicas 0/1, written as a merge patch of that one field (a concurrent change to any
// other field is kept). Suspend waits until the sandbox's pod is gone and its Suspended
// condition is True; resume until Ready is True.
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::app {

struct SuspendOptions {
    bool suspend = true;  // false: resume
    bool wait = true;
    std::chrono::milliseconds timeout{std::chrono::minutes(2)};  // per sandbox; 0 = none
    const kube::CancelFlag* cancel = nullptr;
    // As RestartOptions::onSlowStop: once, when a suspended sandbox's pod is still stopping a
    // few seconds on.
    std::function<void(const std::string& line)> onSlowStop;
};

struct SuspendResult {
    std::string name;
    bool changed = false;  // false: the spec already asked for it (nothing written)
    bool waited = false;
    std::string error;  // empty: done
    std::chrono::milliseconds took{0};
    // A suspend that deletes a pod: what that pod keeps only in itself (model::podOnlyFilesNote).
    std::string lostFiles;
};

// The merge patch that sets just the field of `version` ("v1beta1", "v1alpha1").
std::string suspendPatch(const std::string& version, bool suspend);

// Writes each sandbox's change first, then waits for each, so they progress together; calls
// onDone per sandbox once its result is known. Of several names, one the namespace does not
// have changes none: onDone gets its error, then Error is thrown. A sandbox that expired or
// finished (resume would start no pod), or times out, gets an error; the others go on.
void setSandboxesSuspended(kube::Client& client, const Clock& clock,
                           const kube::ResourceRef& sandboxes, const std::string& ns,
                           const std::vector<std::string>& names, const SuspendOptions& options,
                           const std::function<void(const SuspendResult&)>& onDone);

// "sandbox/orders suspended (pod gone, Suspended=True, 1.2s)", "sandbox/orders already running"
std::string describeSuspend(const SuspendResult& result, bool suspend);

}  // namespace rossoctl::app
