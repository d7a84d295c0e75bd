// What a pod's claim-backed volumes stand on, read from the API and judged for host isolation,
// nothing survives and the token check (volume_claims.hpp).
#include "rossoctl/verify/volume_claims.hpp"

#include <fmt/format.h>

#include "json_access.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "sandbox_inputs.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

const kube::ResourceRef& persistentVolumes() {
    static const kube::ResourceRef ref{"", "v1", "persistentvolumes", "PersistentVolume", false};
    return ref;
}

const BoundClaim* bindingOf(const json& pod, const json& volume, const VolumeBindings& bindings) {
    const auto found = bindings.find(claimNameOf(pod, volume));
    return found == bindings.end() ? nullptr : &found->second;
}

// The claim's own name where it was read: the template's pod is named for the record only.
std::string claimShown(const std::string& claim, const BoundClaim* bound) {
    return bound && bound->claim ? stringAt(at(*bound->claim, "metadata"), "name", claim) : claim;
}

std::string pvName(const BoundClaim& bound) {
    return stringAt(at(*bound.volume, "metadata"), "name", "?");
}

// Two ephemeral volumes whose claims bind alike: the fields that choose a PersistentVolume are
// equal (the API server defaults others, volumeMode, in the pod it stores).
bool sameBinding(const json& one, const json& other) {
    if (!at(one, "ephemeral").is_object() || !at(other, "ephemeral").is_object()) return false;
    const json& a = at(at(at(one, "ephemeral"), "volumeClaimTemplate"), "spec");
    const json& b = at(at(at(other, "ephemeral"), "volumeClaimTemplate"), "spec");
    for (const char* field :
         {"storageClassName", "selector", "volumeName", "dataSource", "dataSourceRef"})
        if (at(a, field) != at(b, field)) return false;
    return true;
}

// Why the claim's PV is not known, for an evidence line.
std::string unknownWhy(const std::string& claim, const BoundClaim* bound) {
    if (!bound) return fmt::format("claim {} was not read", claim);
    if (bound->notMade) return bound->problem;
    return fmt::format("claim {}: {}", claim, bound->problem.empty() ? "not read" : bound->problem);
}

// "Kind name" of what a claim spec is filled from (dataSourceRef, else dataSource); "" for none.
std::string dataSourceNamed(const json& spec) {
    for (const char* field : {"dataSourceRef", "dataSource"}) {
        const json& source = at(spec, field);
        if (source.is_null()) continue;
        std::string named = shortened(stringAt(source, "kind", "?")) + " " +
                            shortened(stringAt(source, "name", "?"));
        if (const std::string ns = stringAt(source, "namespace"); !ns.empty())
            named += " of namespace " + shortened(ns);
        return named;
    }
    return "";
}

}  // namespace

std::string claimNameOf(const json& pod, const json& volume) {
    if (const json& claim = at(volume, "persistentVolumeClaim"); claim.is_object())
        return stringAt(claim, "claimName");
    if (at(volume, "ephemeral").is_object())
        return podName(pod) + "-" + stringAt(volume, "name", "?");
    return "";
}

void readVolumeBindings(kube::Client& client, const std::string& ns, const json& pod,
                        VolumeBindings& bindings) {
    for (const auto& volume : arrayAt(podSpec(pod), "volumes")) {
        const std::string name = claimNameOf(pod, volume);
        if (name.empty() || bindings.count(name)) continue;
        BoundClaim& bound = bindings[name];
        try {
            bound.claim = client.getIfExists(kube::resources::persistentVolumeClaims(), ns, name);
        } catch (const std::exception& error) {
            bound.problem = fmt::format("could not be read ({})", error.what());
            continue;
        }
        if (!bound.claim) {
            bound.problem = "does not exist";
            continue;
        }
        const std::string volumeName = stringAt(at(*bound.claim, "spec"), "volumeName");
        if (volumeName.empty() || stringAt(at(*bound.claim, "status"), "phase") != "Bound") {
            bound.problem = "is not bound to a PersistentVolume yet";
            continue;
        }
        try {
            // Cluster-scoped: a project user is often refused, and then nothing is known.
            bound.volume = client.getIfExists(persistentVolumes(), "", volumeName);
            if (!bound.volume)
                bound.problem = fmt::format("its PersistentVolume {} does not exist", volumeName);
        } catch (const std::exception& error) {
            bound.problem = fmt::format("its PersistentVolume {} could not be read ({})",
                                        volumeName, error.what());
        }
    }
}

VolumeBindings templateBindings(const json& templatePod, const json& pod,
                                const VolumeBindings& bindings) {
    VolumeBindings out;
    for (const auto& volume : arrayAt(podSpec(templatePod), "volumes")) {
        const std::string name = claimNameOf(templatePod, volume);
        if (name.empty()) continue;
        const json* same = nullptr;
        for (const auto& mine : arrayAt(podSpec(pod), "volumes"))
            if (stringAt(mine, "name") == stringAt(volume, "name") && sameBinding(mine, volume))
                same = &mine;
        const BoundClaim* bound = nullptr;
        if (at(volume, "persistentVolumeClaim").is_object())
            bound = bindingOf(templatePod, volume, bindings);
        else if (same)
            bound = bindingOf(pod, *same, bindings);
        if (bound)
            out[name] = *bound;
        else
            out[name] = {std::nullopt, std::nullopt,
                         "its claim is made with the next pod: what it binds to is known only then",
                         true};
    }
    return out;
}

void judgeClaimedVolumesOnHost(const json& pod, const VolumeBindings& bindings, Finding& finding) {
    for (const auto& volume : arrayAt(podSpec(pod), "volumes")) {
        if (claimNameOf(pod, volume).empty()) continue;
        const std::string name = stringAt(volume, "name", "?");
        const BoundClaim* bound = bindingOf(pod, volume, bindings);
        const std::string claim = claimShown(claimNameOf(pod, volume), bound);
        if (!bound || !bound->volume) {
            finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
            finding.evidence.push_back(fmt::format(
                "pod: volume {}: {}: whether its PersistentVolume is the node's filesystem "
                "(hostPath, local) is not known",
                name, unknownWhy(claim, bound)));
            continue;
        }
        const json& spec = at(*bound->volume, "spec");
        for (const char* source : {"hostPath", "local"}) {
            if (!at(spec, source).is_object()) continue;
            finding.verdict = Verdict::Fail;
            finding.evidence.push_back(fmt::format(
                "pod: volume {} (claim {}) is PersistentVolume {}, {} {} (the node's filesystem)",
                name, claim, pvName(*bound), source, stringAt(at(spec, source), "path", "?")));
        }
    }
}

std::string boundVolumeKept(const json& pod, const json& volume, const VolumeBindings& bindings,
                            Verdict& verdict) {
    const BoundClaim* bound = bindingOf(pod, volume, bindings);
    const std::string claim = claimShown(claimNameOf(pod, volume), bound);
    if (!bound || !bound->volume) {
        verdict = Verdict::Unproven;
        return fmt::format(
            "{}: whether its PersistentVolume is kept after the pod (its own "
            "reclaimPolicy decides) is not known",
            unknownWhy(claim, bound));
    }
    const std::string policy =
        stringAt(at(*bound->volume, "spec"), "persistentVolumeReclaimPolicy", "Retain");
    if (policy == "Delete") return "";
    verdict = Verdict::Fail;
    return fmt::format(
        "claim {} is bound to PersistentVolume {} with reclaimPolicy {}: its data outlives the "
        "pod, whatever the StorageClass says",
        claim, pvName(*bound), policy);
}

std::string claimFilledFrom(const json& pod, const json& volume, const VolumeBindings& bindings) {
    if (!at(volume, "ephemeral").is_object()) return "";
    const BoundClaim* bound = bindingOf(pod, volume, bindings);
    const std::string claim = claimShown(claimNameOf(pod, volume), bound);
    if (bound && bound->claim)
        if (const auto from = dataSourceNamed(at(*bound->claim, "spec")); !from.empty())
            return fmt::format("claim {} was filled from {}", claim, from);
    const json& made = at(at(at(volume, "ephemeral"), "volumeClaimTemplate"), "spec");
    if (const auto from = dataSourceNamed(made); !from.empty())
        return fmt::format("claim {} is filled from {} when it is made", claim, from);
    return "";
}

bool startsEmpty(const json& pod, const json& volume, const VolumeBindings& bindings) {
    if (!at(volume, "ephemeral").is_object()) return false;
    // A clone, a restored snapshot or a populator's volume starts with its source's data.
    if (!claimFilledFrom(pod, volume, bindings).empty()) return false;
    const BoundClaim* bound = bindingOf(pod, volume, bindings);
    if (!bound || !bound->claim || !bound->volume) return false;
    const json& claimMeta = at(*bound->claim, "metadata");
    const json& pvMeta = at(*bound->volume, "metadata");
    bool ownedByPod = false;
    for (const auto& owner : arrayAt(claimMeta, "ownerReferences"))
        ownedByPod =
            ownedByPod || (stringAt(owner, "kind") == "Pod" &&
                           (stringAt(at(pod, "metadata"), "uid").empty() ||
                            stringAt(owner, "uid") == stringAt(at(pod, "metadata"), "uid")));
    const auto claimMade = kube::parseTimestamp(stringAt(claimMeta, "creationTimestamp"));
    const auto volumeMade = kube::parseTimestamp(stringAt(pvMeta, "creationTimestamp"));
    return ownedByPod &&
           !stringAt(at(pvMeta, "annotations"), "pv.kubernetes.io/provisioned-by").empty() &&
           stringAt(at(at(*bound->volume, "spec"), "claimRef"), "uid") ==
               stringAt(claimMeta, "uid") &&
           !stringAt(claimMeta, "uid").empty() && claimMade && volumeMade &&
           *volumeMade >= *claimMade;
}

}  // namespace rossoctl::verify
