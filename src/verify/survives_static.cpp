// The static half of "nothing survives": no volume, storage class or kernel keyring that keeps
// data after the pod.
#include <fmt/format.h>

#include <algorithm>

#include "json_access.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "rossoctl/verify/volume_claims.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

// The class a claim without storageClassName gets: with several marked default, admission
// picks the newest, and of those created in the same second the first by name.
const json* defaultStorageClass(const json& storageClasses) {
    const json* chosen = nullptr;
    for (const auto& candidate : storageClasses) {
        const json& metadata = at(candidate, "metadata");
        const json& annotations = at(metadata, "annotations");
        if (stringAt(annotations, "storageclass.kubernetes.io/is-default-class") != "true" &&
            stringAt(annotations, "storageclass.beta.kubernetes.io/is-default-class") != "true")
            continue;
        if (!chosen) {
            chosen = &candidate;
            continue;
        }
        const json& best = at(*chosen, "metadata");
        const auto created = kube::parseTimestamp(stringAt(metadata, "creationTimestamp"));
        const auto bestCreated = kube::parseTimestamp(stringAt(best, "creationTimestamp"));
        if (created > bestCreated ||
            (created == bestCreated && stringAt(metadata, "name") < stringAt(best, "name")))
            chosen = &candidate;
    }
    return chosen;
}

// A generic ephemeral volume's PersistentVolume outlives the pod when its StorageClass retains
// it: "" when it is reclaimed (Delete), else why it is kept or not known.
std::string ephemeralVolumeKept(const json& volume, const json& storageClasses, Verdict& verdict) {
    const json& claim = at(at(at(volume, "ephemeral"), "volumeClaimTemplate"), "spec");
    std::string className = stringAt(claim, "storageClassName");
    // A named PersistentVolume, or an explicit "" (no class: a static PV binds it), is kept or
    // not by that PV's own reclaimPolicy, which verify does not read.
    const std::string volumeName = stringAt(claim, "volumeName");
    if (!volumeName.empty()) {
        verdict = Verdict::Unproven;
        return fmt::format(
            "its claim names PersistentVolume {} (volumeName): that volume's own reclaimPolicy "
            "decides whether its data outlives the pod, and it is not read",
            volumeName);
    }
    // A selector picks an existing PersistentVolume: a class's reclaimPolicy only applies to
    // volumes its provisioner makes, and a hand-made one Retains by default.
    if (!at(claim, "selector").is_null()) {
        verdict = Verdict::Unproven;
        return "its claim has a selector: it binds an existing PersistentVolume, whose own "
               "reclaimPolicy, not its StorageClass's, decides whether its data outlives the pod";
    }
    if (at(claim, "storageClassName").is_string() && className.empty()) {
        verdict = Verdict::Unproven;
        return "storageClassName \"\" is no class, not the default: a static PersistentVolume "
               "binds it, and that volume's own reclaimPolicy (Retain for most static volumes), "
               "not read, decides whether its data outlives the pod";
    }
    if (!storageClasses.is_array()) {
        verdict = Verdict::Unproven;
        return "the StorageClasses could not be read, so whether its PersistentVolume is kept "
               "(reclaimPolicy Retain) is not known";
    }
    const json* found = className.empty() ? defaultStorageClass(storageClasses) : nullptr;
    for (const auto& candidate : storageClasses)
        if (!className.empty() && stringAt(at(candidate, "metadata"), "name") == className)
            found = &candidate;
    if (!found) {
        verdict = Verdict::Unproven;
        return className.empty() ? "no default StorageClass: what provisions it is not known"
                                 : "StorageClass " + className + " was not found";
    }
    if (stringAt(*found, "provisioner") == "kubernetes.io/no-provisioner") {
        verdict = Verdict::Unproven;
        return fmt::format(
            "StorageClass {} provisions nothing (kubernetes.io/no-provisioner): a hand-made "
            "PersistentVolume binds it, and that volume's own reclaimPolicy decides",
            stringAt(at(*found, "metadata"), "name", "?"));
    }
    const std::string policy = stringAt(*found, "reclaimPolicy", "Delete");
    if (policy == "Delete") return "";
    verdict = Verdict::Fail;
    return fmt::format(
        "StorageClass {} has reclaimPolicy {}: its PersistentVolume and data "
        "outlive the pod",
        stringAt(at(*found, "metadata"), "name", "?"), policy);
}

// The kernel's user keyring outlives a pod for its uid (add_key, keyctl): only a seccomp
// profile that refuses them (the runtimes' RuntimeDefault) keeps a key from the next pod.
void keyringReach(const json& pod, Finding& finding) {
    for (const char* kind : {"initContainers", "containers", "ephemeralContainers"}) {
        for (const auto& container : arrayAt(podSpec(pod), kind)) {
            const std::string profile = seccompProfileType(pod, container);
            const std::string name = stringAt(container, "name", "?");
            if (profile == "RuntimeDefault") continue;
            if (profile == "Unconfined") {
                finding.verdict = Verdict::Fail;
                finding.evidence.push_back(fmt::format(
                    "container {} runs with seccomp Unconfined: a key it adds to the kernel "
                    "keyring (add_key) outlives the pod for its uid",
                    name));
            } else {
                finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
                finding.evidence.push_back(fmt::format(
                    "container {} has seccomp {}: whether it can reach the kernel keyring, which "
                    "outlives the pod, is not known",
                    name,
                    profile.empty() ? "unset (the node's default, often Unconfined)" : profile));
            }
        }
    }
}

}  // namespace

Finding nothingSurvivesStatic(const json& pod, const json& sandbox, const json& storageClasses,
                              const VolumeBindings* volumes) {
    // Volume types whose data lives outside the pod, and those that die with it.
    static const std::vector<std::string> persistent = {"persistentVolumeClaim",
                                                        "hostPath",
                                                        "nfs",
                                                        "iscsi",
                                                        "cephfs",
                                                        "rbd",
                                                        "glusterfs",
                                                        "awsElasticBlockStore",
                                                        "gcePersistentDisk",
                                                        "azureDisk",
                                                        "azureFile",
                                                        "fc",
                                                        "flocker",
                                                        "portworxVolume",
                                                        "quobyte",
                                                        "scaleIO",
                                                        "storageos",
                                                        "vsphereVolume",
                                                        "photonPersistentDisk",
                                                        "cinder",
                                                        "flexVolume"};
    static const std::vector<std::string> ephemeralTypes = {"emptyDir",    "configMap", "secret",
                                                            "downwardAPI", "projected", "image"};
    auto listed = [](const std::vector<std::string>& list, const std::string& type) {
        return std::find(list.begin(), list.end(), type) != list.end();
    };
    Finding finding;
    finding.verdict = Verdict::Pass;
    // The node's IPC namespace: /dev/shm and SysV segments are the host's, kept past the pod.
    if (at(podSpec(pod), "hostIPC") == true) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(
            "pod: spec.hostIPC: true: /dev/shm and System V shared memory are the node's, so "
            "what the pod writes there outlives it");
    }
    std::vector<std::string> ephemeral;
    for (const auto& volume : arrayAt(podSpec(pod), "volumes")) {
        const std::string name = stringAt(volume, "name", "?");
        std::string type = "unknown";
        for (const auto& [key, value] : volume.items())
            if (key != "name") type = key;
        if (listed(persistent, type)) {
            finding.verdict = Verdict::Fail;
            std::string detail = volume[type].is_object() ? volume[type].dump() : "";
            if (type == "persistentVolumeClaim") detail = stringAt(volume[type], "claimName", "?");
            if (type == "hostPath") detail = stringAt(volume[type], "path", "?");
            finding.evidence.push_back(
                fmt::format("volume {} is {} {}: its data outlives the pod", name, type, detail));
        } else if (type == "csi") {
            if (finding.verdict == Verdict::Pass) finding.verdict = Verdict::Unproven;
            finding.evidence.push_back(fmt::format(
                "volume {} is csi driver {}: the driver decides whether data outlives the pod",
                name, stringAt(volume["csi"], "driver", "?")));
        } else if (type == "ephemeral") {
            // A claim made: the PersistentVolume bound to it decides, not what the class says.
            Verdict kept = Verdict::Pass;
            std::string why = volumes ? boundVolumeKept(pod, volume, *volumes, kept)
                                      : ephemeralVolumeKept(volume, storageClasses, kept);
            // Unproven, as a PV bound by selector: its source outlives the pod and is not read
            // (a snapshot of an earlier pod's volume brings that pod's data back).
            if (const auto from =
                    claimFilledFrom(pod, volume, volumes ? *volumes : VolumeBindings());
                !from.empty()) {
                kept = worstOf(kept, Verdict::Unproven);
                why += (why.empty() ? "" : "; ") + from +
                       ": it starts with what that source holds, which outlives the pod and is "
                       "not read (a snapshot of an earlier pod's volume brings its data back)";
            }
            finding.verdict = worstOf(finding.verdict, kept);
            if (why.empty())
                ephemeral.push_back(
                    name + (volumes ? " (ephemeral, its PersistentVolume is deleted with its claim)"
                                    : " (ephemeral, its StorageClass deletes it)"));
            else
                finding.evidence.push_back(
                    fmt::format("volume {} is a generic ephemeral volume: {}", name, why));
        } else if (listed(ephemeralTypes, type)) {
            ephemeral.push_back(fmt::format("{} ({})", name, type));
        } else {
            if (finding.verdict == Verdict::Pass) finding.verdict = Verdict::Unproven;
            finding.evidence.push_back(
                fmt::format("volume {} is of type {}, not known to die with the pod", name, type));
        }
    }
    keyringReach(pod, finding);
    const json& spec = at(sandbox, "spec");
    const json& claims = arrayAt(spec, "volumeClaimTemplates");
    for (const auto& claim : claims) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(
            fmt::format("the Sandbox's volumeClaimTemplates has {}: a PVC that outlives every pod",
                        stringAt(at(claim, "metadata"), "name", "?")));
    }
    const std::string policy = stringAt(spec, "shutdownPolicy", "Retain");
    if (!claims.empty() && policy == "Retain")
        finding.evidence.push_back(
            "shutdownPolicy Retain: the Sandbox and its claims are kept after shutdownTime");
    if (finding.verdict == Verdict::Pass)
        finding.evidence.push_back(
            ephemeral.empty() ? "no volumes that outlive the pod; no volumes"
                              : "no volumes that outlive the pod; volumes: " + joined(ephemeral));
    return finding;
}

Finding nothingSurvivesStatic(const json& pod, const json& sandbox, const json& storageClasses) {
    return nothingSurvivesStatic(pod, sandbox, storageClasses, nullptr);
}

}  // namespace rossoctl::verify
