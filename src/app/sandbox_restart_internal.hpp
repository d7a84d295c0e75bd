#pragma once
// What one restart and a batch of them (sandbox_restart_many.cpp) judge alike: which pod is the
// replacement and when it is decided.
#include <chrono>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/app/sandbox_restart.hpp"
#include "rossoctl/kube/wait.hpp"

namespace rossoctl::app::restart_detail {

// The sandbox a restart replaces the pod of, and the pods it replaces.
struct Replacing {
    const std::string& sandboxName;
    const std::string& sandboxUid;
    const std::set<std::string>& oldUids;
};

// Pods by name, pointing into a set that outlives the view: a batch hands each sandbox only the
// pods that name a controller, instead of the whole namespace's set.
using PodView = std::vector<std::pair<const std::string*, const nlohmann::json*>>;
PodView viewOf(const kube::ObjectSet& pods);

// True once the new pod of the sandbox among `pods` is ready (result.newUid and podName set),
// or will never be (`failure` says why).
bool newPodDecided(const Replacing& replacing, const PodView& pods, RestartResult& result,
                   std::string& failure);
// A pod the sandbox controls other than the ones the restart replaces.
bool replacementSeen(const Replacing& replacing, const PodView& pods);
// One of the replaced pods is still there, being deleted.
bool oldPodTerminating(const Replacing& replacing, const PodView& pods);
// That pod (nullptr when there is none), for how long it may still take (slowStopLine).
const nlohmann::json* terminatingOldPod(const Replacing& replacing, const PodView& pods);

// What follows the files-lost note of a pod whose DELETE got no answer (Ctrl-C, a cut line).
inline constexpr const char* kUnansweredDelete =
    ", unless its DELETE, cut short before the answer came, never arrived";

// After a DELETE refused because the pod was replaced meanwhile: the pods (listed again) a
// wait for the replacement looks past, and a note of each live replacement, which is kept.
std::set<std::string> replacedUnderUs(const SandboxPods& pods, RestartResult& result);

std::string formatSeconds(std::chrono::milliseconds duration);

}  // namespace rossoctl::app::restart_detail
