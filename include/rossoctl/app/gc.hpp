#pragma once
// `gc`: what leaks in practice, found and deleted. Only objects rossoctl made (label
// app.kubernetes.io/managed-by=rossoctl, and for run and pool objects rossoctl's own labels too)
// are ever collected, whatever else looks expired.
//   Sandbox       spec.shutdownTime has passed and it is still there (rossoctl writes
//                 shutdownPolicy Retain); sandboxes a SandboxClaim or warm pool controls are
//                 left to their owner, and one whose Retain keeps volume claims is kept.
//   Pod           a `sandbox run` pod whose run is over (reap.hpp), or a warm pool pod whose
//                 deadline ended it.
//   SandboxClaim  a `sandbox run --pool` claim past its shutdownTime, or whose rossoctl process
//                 is gone.
//   AgentRuntime  its spec.targetRef names a workload that no longer exists.
//   Pod, NetworkPolicy  of `project create`'s enforcement check (label
//                 rossoctl.dev/enforcement-check): older than any check runs, or its process
//                 is gone.
// Every delete carries the UID and resourceVersion the object was found with, so an object that
// changed since (and may no longer be garbage) is kept.
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/discovery.hpp"

namespace rossoctl::app::gc {

struct Garbage {
    kube::ResourceRef ref;
    std::string namespaceName;
    std::string name;
    std::string uid;
    std::string resourceVersion;
    std::chrono::seconds age{0};
    std::string reason;
};

struct Scan {
    std::vector<Garbage> items;
    // Expired but kept on purpose (a note each, e.g. Retain with volume claims).
    std::vector<std::string> kept;
    // One line per kind that could not be read ("sandboxclaims in team1: forbidden ...").
    std::vector<std::string> errors;
};

struct ScanOptions {
    std::string namespaceName;  // "" = every namespace
    std::chrono::seconds olderThan{0};
    std::chrono::system_clock::time_point now;
    run::OwnerAlive ownerAlive = run::localOwnerAlive;
};

// Lists each kind (a kind the cluster does not serve is skipped; one that fails is reported in
// errors and the others still run).
Scan scan(kube::Client& client, kube::Discovery& discovery, const ScanOptions& options);

enum class Deleted { Yes, Gone, Changed };
// DELETE with UID + resourceVersion preconditions. Gone: already deleted (404); Changed: the
// preconditions failed (409). Other errors throw. serverDryRun: dryRun=All (nothing stored).
Deleted remove(kube::Client& client, const Garbage& item, bool serverDryRun = false);

}  // namespace rossoctl::app::gc
