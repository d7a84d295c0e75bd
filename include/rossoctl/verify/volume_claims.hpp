#pragma once
// What a pod's claim-backed volumes (persistentVolumeClaim, generic ephemeral) stand on: the
// PersistentVolumeClaim and the PersistentVolume bound to it. The PV's own source (hostPath,
// local) and reclaim policy decide where the data lives and whether it outlives the pod; a
// StorageClass only speaks for volumes its provisioner makes.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/isolation.hpp"
#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

struct BoundClaim {
    std::optional<nlohmann::json> claim;   // nullopt: not read (problem says why)
    std::optional<nlohmann::json> volume;  // the PV bound to it; nullopt: see problem
    std::string problem;                   // why claim or volume is not known; "" when both read
    bool notMade = false;                  // the next pod's own claim: it does not exist yet
};
// Keyed by claim name, in the pod's namespace.
using VolumeBindings = std::map<std::string, BoundClaim>;

// The claim a volume of the pod uses: its claimName, or <pod>-<volume> for a generic ephemeral
// volume (the name the ephemeral volume controller gives it); "" for any other volume.
std::string claimNameOf(const nlohmann::json& pod, const nlohmann::json& volume);

// What the template's pod will stand on, as far as the first pod's bindings tell: the same
// claims, and each ephemeral volume whose spec is the first pod's (the same class makes the same
// kind of volume); any other ephemeral volume is made with that pod, so not known.
VolumeBindings templateBindings(const nlohmann::json& templatePod, const nlohmann::json& pod,
                                const VolumeBindings& bindings);

// Host isolation: a claim bound to a hostPath or local PV is the node's filesystem (fail,
// naming container, volume, PV and path); a claim or PV not read, or not bound, is unproven.
void judgeClaimedVolumesOnHost(const nlohmann::json& pod, const VolumeBindings& bindings,
                               Finding& finding);

// Nothing survives, for a generic ephemeral volume whose claim was read: "" when its PV is
// deleted with the claim, else why it is kept (verdict Fail) or not known (Unproven).
std::string boundVolumeKept(const nlohmann::json& pod, const nlohmann::json& volume,
                            const VolumeBindings& bindings, Verdict& verdict);

// What a generic ephemeral volume's claim is filled from when made (the claim's or its
// template's dataSourceRef or dataSource: a PVC cloned, a VolumeSnapshot restored, a
// populator's object): "claim C was filled from PersistentVolumeClaim keep"; "" when from none.
std::string claimFilledFrom(const nlohmann::json& pod, const nlohmann::json& volume,
                            const VolumeBindings& bindings);

// A generic ephemeral volume made for this pod and provisioned for its claim (annotation
// pv.kubernetes.io/provisioned-by, claimRef to it, created after it) from no data source starts
// empty: nothing of anyone else's is on it.
bool startsEmpty(const nlohmann::json& pod, const nlohmann::json& volume,
                 const VolumeBindings& bindings);

// Pods of namespacePods (a List; nullopt: not read) other than `pod` and `replaced` (the pod the
// template's pod comes after) that may still run (not Succeeded or Failed) and mount one of the
// pod's claims by claimName (attack 60 S1): egress and nothing survives fail, the token is
// unproven; not read, each is unproven for a pod with a claim. Pass for other checks.
Finding claimSharers(CheckKind kind, const nlohmann::json& pod,
                     const std::optional<nlohmann::json>& namespacePods,
                     const std::string& replaced = "");

// The checks of checks.hpp, isolation.hpp and pod_checks.hpp with the pod's claims as read
// (those without them read none, so a claim is unproven there).
// nothingSurvivesStatic: a generic ephemeral volume's fate is its PV's reclaim policy; volumes
// nullptr for a pod not made yet (the template's), judged by its claim template and class.
Finding nothingSurvivesStatic(const nlohmann::json& pod, const nlohmann::json& sandbox,
                              const nlohmann::json& storageClasses, const VolumeBindings* volumes);
Finding hostIsolationStatic(const nlohmann::json& pod,
                            const std::optional<nlohmann::json>& namespaceObject,
                            const VolumeBindings& volumes);
Finding credentialsStatic(const nlohmann::json& pod, const std::vector<CredentialSource>& sources,
                          const std::string& clusterIssuer,
                          const std::optional<std::string>& clientAuthorities,
                          const VolumeBindings& volumes);

}  // namespace rossoctl::verify
