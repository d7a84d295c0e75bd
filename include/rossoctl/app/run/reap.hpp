#pragma once
// Pods of `sandbox run` whose run is over but which were never deleted: the process was
// killed (kill -9, a lost terminal) or its cleanup could not reach the API server. The next run
// in the namespace reaps them, and so can `gc`. A pod is a leftover when it has ended (its
// deadline passed) or when the process that made it (or claimed it from the warm pool) surely
// no longer exists.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/kube/client.hpp"
#include "rossoctl/random.hpp"

namespace rossoctl::app::run {

// Names the process that owns a run pod; stored on the pods it creates (not with --keep).
inline constexpr const char* kRunOwnerAnnotation = "rossoctl.dev/run-owner";

// "v2;boot=B;machine=M;pidns=N;pid=P;start=S;token=T": the kernel's boot id, the machine id,
// the pid namespace's inode, the pid and its start time in clock ticks since boot (a reused pid
// is not taken for the owner), and a random token so no two runs ever name the same owner.
// A hostname is no identity: CI runners and containers share one.
std::string currentRunOwner(Random& random);

// The owner as a person reads it, never its token: "pid 21272 on this machine" (or "on another
// machine or container"); an owner of another form as it is, "an unreadable owner" when it
// holds a token.
std::string describeRunOwner(const std::string& owner);

// Whether the owner an annotation names may still be running. Only an owner that names this
// boot, this machine and this pid namespace can be checked here (is that pid, started then,
// still running?); every other owner (another machine or container, the old HOST/PID/START
// form, anything malformed) counts as alive and is left to expire by its own deadline.
using OwnerAlive = std::function<bool(const std::string& owner)>;
bool localOwnerAlive(const std::string& owner);

// True when `pod` (a run pod) is left over by a run that is over.
bool isLeftoverRunPod(const nlohmann::json& pod, const OwnerAlive& ownerAlive);

struct Reaped {
    std::vector<std::string> deleted;  // names
    // Why each of `deleted` was a leftover, for "deleted pod P, WHY": "left over by an
    // interrupted run", or that a --keep run kept it until it ended (walk 6 MINOR 18).
    std::vector<std::string> why;
    // Leftovers not deleted because no DELETE can name them safely (an empty or invalid name,
    // another namespace): why, one line each.
    std::vector<std::string> skipped;
};

// Deletes the leftover run pods in ns (one LIST; a UID precondition on each DELETE, so a pod
// replaced meanwhile is kept).
Reaped reapLeftoverRunPods(kube::Client& client, const std::string& ns,
                           const OwnerAlive& ownerAlive = localOwnerAlive);

}  // namespace rossoctl::app::run
