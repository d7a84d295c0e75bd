#include "credential_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "json_access.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/verify/volume_claims.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;
using TimePoint = std::chrono::system_clock::time_point;

namespace {

struct Started {
    bool any = false;                   // a container of the pod has run
    std::optional<TimePoint> earliest;  // the earliest start of a container running now or ended
};

// When the pod's containers started: env takes its Secret and ConfigMap values then and keeps
// them, and a deleted source's files stay where the kubelet wrote them.
Started startedContainers(const json& pod) {
    Started started;
    const json& status = at(pod, "status");
    const std::string phase = stringAt(status, "phase");
    started.any = phase == "Running" || phase == "Succeeded" || phase == "Failed";
    // The pod's first start, then every container's last and present ones: env was read at
    // each, and what a run wrote (an emptyDir) outlives a restart.
    started.earliest = kube::parseTimestamp(stringAt(status, "startTime"));
    for (const char* kind :
         {"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"})
        for (const auto& container : arrayAt(status, kind))
            for (const auto& [field, state] :
                 {std::pair{"state", "running"}, std::pair{"state", "terminated"},
                  std::pair{"lastState", "running"}, std::pair{"lastState", "terminated"}}) {
                const json& now = at(at(container, field), state);
                if (now.is_null()) continue;
                started.any = true;
                const auto when = kube::parseTimestamp(stringAt(now, "startedAt"));
                if (when && (!started.earliest || *when < *started.earliest))
                    started.earliest = when;
            }
    return started;
}

struct Written {
    std::optional<TimePoint> latest;  // its creation or a manager's update, whichever is later
    bool unknown = false;  // created, yet no manager says when it wrote (managedFields cleared)
    // Something other than its creation may have written in the second `latest`: a manager's
    // entry there besides the creation's own, or any when the creation's time is not given.
    bool updatedInLatest = false;
};

Written lastWritten(const json& object) {
    const json& metadata = at(object, "metadata");
    const auto created = kube::parseTimestamp(stringAt(metadata, "creationTimestamp"));
    Written written{created, false, false};
    std::vector<TimePoint> writes;
    for (const auto& entry : arrayAt(metadata, "managedFields"))
        if (const auto when = kube::parseTimestamp(stringAt(entry, "time"))) {
            writes.push_back(*when);
            if (!written.latest || *when > *written.latest) written.latest = when;
        }
    // A server sets a time on every manager's entry; one without says nothing of later writes.
    // Nor does one without a creation time (a server always sets it).
    written.unknown = (written.latest && writes.empty()) || !created;
    if (written.latest) {
        const auto inLatest = std::count(writes.begin(), writes.end(), *written.latest);
        written.updatedInLatest = !created || inLatest > (*created == *written.latest ? 1 : 0);
    }
    return written;
}

void unproven(Finding& finding, std::string line) {
    finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
    finding.evidence.push_back(std::move(line));
}

// Volumes whose content verify reads (Secrets, ConfigMaps, downward API), or that start
// empty or hold an image like the container's own (never read either).
bool contentKnown(const std::string& type) {
    for (const char* known : {"emptyDir", "configMap", "secret", "downwardAPI", "projected",
                              "image", "csi", "hostPath"})
        if (type == known) return true;  // csi and hostPath: judged below with their own words
    return false;
}

void judgeUnseenVolumes(const json& pod, const VolumeBindings& volumes, Finding& finding) {
    for (const auto& volume : arrayAt(podSpec(pod), "volumes")) {
        const std::string name = stringAt(volume, "name");
        std::string type = "unknown";
        for (const auto& [key, value] : volume.items())
            if (key != "name") type = key;
        // Anyone with the claim (an earlier pod, a user's cp, another pod of the namespace)
        // may have left a kubeconfig on it; only a volume provisioned empty for this pod is known
        // to hold nothing verify did not see.
        if (type == "ephemeral" && startsEmpty(pod, volume, volumes))
            finding.evidence.push_back(
                fmt::format("volume {} was provisioned empty for this pod (claim {})", name,
                            claimNameOf(pod, volume)));
        else if (const auto from = claimFilledFrom(pod, volume, volumes); !from.empty())
            unproven(finding, fmt::format("volume {}: {}: it starts with what that source held, "
                                          "which verify does not read",
                                          name, from));
        else if (type == "persistentVolumeClaim" || type == "ephemeral")
            unproven(finding,
                     fmt::format("volume {} is claim {}, not provisioned empty for this pod (or "
                                 "not known to be): what it holds is not read",
                                 name, claimNameOf(pod, volume)));
        else if (!contentKnown(type))
            unproven(finding,
                     fmt::format("volume {} is {}: what it holds is not read", name, type));
        if (const json& csi = at(volume, "csi"); !csi.is_null())
            unproven(finding, fmt::format("volume {} is a CSI volume (driver {}): what the "
                                          "driver mounts (a secrets store's) is not read",
                                          name, stringAt(csi, "driver", "?")));
        if (const json& host = at(volume, "hostPath"); !host.is_null())
            unproven(finding, fmt::format("volume {} mounts the node's {}: what it holds (a "
                                          "node's credentials) is not read",
                                          name, stringAt(host, "path", "?")));
        for (const auto& source : arrayAt(at(volume, "projected"), "sources"))
            if (const json& certificate = at(source, "podCertificate"); !certificate.is_null())
                unproven(finding,
                         fmt::format("volume {} holds a key and a certificate of signer {}: "
                                     "whether the API server trusts that signer for clients is "
                                     "not known",
                                     name, stringAt(certificate, "signerName", "?")));
    }
}

}  // namespace

void judgeSources(const json& pod, const std::vector<CredentialSource>& sources,
                  const VolumeBindings& volumes, Finding& finding) {
    const Started started = startedContainers(pod);
    size_t overBudget = 0;
    for (const auto& source : sources) {
        const std::string name = source.kind + "/" + source.name;
        if (!source.object) {
            if (source.problem == kSourceOverBudget) {
                ++overBudget;
            } else if (source.problem != "not found") {
                unproven(finding, fmt::format("{} could not be read ({}): the pod can read what "
                                              "it holds, so no credential in it is ruled out",
                                              name, source.problem));
            } else if (started.any) {
                unproven(finding, fmt::format("{} does not exist now, but the pod's containers "
                                              "have started: env and files keep what it held "
                                              "then, which verify cannot read",
                                              name));
            } else {
                finding.evidence.push_back(name + " does not exist: nothing of it is mounted");
            }
            continue;
        }
        if (stringAt(*source.object, "type") == "bootstrap.kubernetes.io/token") {
            finding.verdict = worstOf(finding.verdict, Verdict::Fail);
            finding.evidence.push_back(
                fmt::format("{} is a bootstrap token (type bootstrap.kubernetes.io/token): it "
                            "authenticates to the API server",
                            name));
        }
        const Written written = lastWritten(*source.object);
        // Both are whole seconds: an update in the second a container started may be after it.
        // A creation cannot be (env waits for the Secret), so that second is judged as before.
        if (started.earliest && written.latest &&
            (*written.latest > *started.earliest ||
             (written.updatedInLatest && *written.latest == *started.earliest)))
            unproven(finding, fmt::format("{} was written after the pod's containers started: "
                                          "env keeps what it held before, which verify cannot "
                                          "read",
                                          name));
        else if (started.any && written.unknown)
            unproven(finding, fmt::format("{} shows no time of its last write (its managedFields "
                                          "say none): whether env holds what verify read is not "
                                          "known",
                                          name));
        const json& data = at(*source.object, "data");
        if (stringAt(*source.object, "type") != "bootstrap.kubernetes.io/token" &&
            !at(data, "token-id").is_null() && !at(data, "token-secret").is_null()) {
            finding.verdict = worstOf(finding.verdict, Verdict::Fail);
            finding.evidence.push_back(fmt::format(
                "{} holds token-id and token-secret: a bootstrap token in two keys", name));
        }
    }
    if (overBudget > 0)
        unproven(finding, fmt::format("{} Secrets and ConfigMaps were not read: the pod names more "
                                      "than verify reads ({}, or 32 MiB of them), so no "
                                      "credential in them is ruled out",
                                      overBudget, kMostCredentialSources));
    judgeUnseenVolumes(pod, volumes, finding);
}

}  // namespace rossoctl::verify
