#pragma once
// `sandbox top`: what each sandbox's pod uses now, read from the kubelet's Summary API
// (/stats/summary) through the API server's node proxy, so no metrics-server is needed.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rossoctl/app/warm_pool.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::app {

// A node's Summary lists every pod on it: a few KiB each. More than this is no kubelet's.
inline constexpr size_t kMaxSummaryBytes = 16 * 1024 * 1024;

// One pod's usage as the kubelet measured it; a figure the answer lacks (or gives in a form
// that is not a count) stays unset.
struct PodUsage {
    std::optional<uint64_t> cpuNanoCores;        // pod cgroup, usageNanoCores
    std::optional<uint64_t> memoryWorkingSet;    // bytes, workingSetBytes
    std::optional<uint64_t> writableLayerBytes;  // the containers' rootfs.usedBytes, summed
    // The pod's emptyDir volumes (/workspace, /tmp: where a hardened sandbox writes), summed
    // from the Summary's volume stats; unset when it names none of them (walk 6 MINOR 15).
    std::optional<uint64_t> emptyDirBytes;
    std::optional<uint64_t> processes;  // process_stats.process_count
    std::string time;                   // when the kubelet sampled cpu (RFC 3339)
};

// The pods of a Summary answer by UID, those in `wanted` only: one answer per node, each may list
// any number of pods, and only the rows' are kept. The node (and through it the pods) wrote it:
// anything of the wrong type is skipped, never thrown on; an answer that is no object throws.
// `emptyDirs`: by pod UID, the names of its emptyDir volumes (from its spec), whose usedBytes
// make emptyDirBytes.
std::map<std::string, PodUsage> parseSummary(
    const nlohmann::json& summary, const std::set<std::string>& wanted,
    const std::map<std::string, std::set<std::string>>& emptyDirs = {});

struct SandboxUsage {
    std::string namespaceName;
    std::string sandbox;
    std::string pod;  // "" when the sandbox has no pod
    std::string podUid;
    std::string node;  // "" while the pod is not scheduled
    PodUsage usage;
};

struct TopRequest {
    kube::ResourceRef sandboxes;
    std::string namespaceName;       // "" with allNamespaces
    std::vector<std::string> names;  // empty: every sandbox in the namespace(s)
};

// The sandboxes, their pods (one LIST), and one Summary per node those pods run on; of a listed
// namespace, the warm pool's spares only as `pool` keeps them (named sandboxes are all shown).
// Throws Error saying what permission is missing when RBAC forbids the node proxy. With
// `notFound`, a named sandbox that is not there is added to it and the others are shown (as
// `sandbox get A B` does); without, its 404 is thrown.
std::vector<SandboxUsage> sandboxUsage(kube::Client& client, const TopRequest& request,
                                       PoolFilter& pool,
                                       std::vector<std::string>* notFound = nullptr);

}  // namespace rossoctl::app
