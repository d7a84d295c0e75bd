#include "credential_sources.hpp"

#include <fmt/format.h>

#include <optional>

#include "json_access.hpp"
#include "rossoctl/kube/timestamp.hpp"

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
    for (const char* kind :
         {"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"})
        for (const auto& container : arrayAt(status, kind))
            for (const char* state : {"running", "terminated"}) {
                const json& now = at(at(container, "state"), state);
                if (now.is_null()) continue;
                started.any = true;
                const auto when = kube::parseTimestamp(stringAt(now, "startedAt"));
                if (when && (!started.earliest || *when < *started.earliest))
                    started.earliest = when;
            }
    return started;
}

// The last write the object shows: its creation or a manager's update, whichever is later.
std::optional<TimePoint> lastWritten(const json& object) {
    const json& metadata = at(object, "metadata");
    std::optional<TimePoint> latest = kube::parseTimestamp(stringAt(metadata, "creationTimestamp"));
    for (const auto& entry : arrayAt(metadata, "managedFields"))
        if (const auto when = kube::parseTimestamp(stringAt(entry, "time")))
            if (!latest || *when > *latest) latest = when;
    return latest;
}

void unproven(Finding& finding, std::string line) {
    finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
    finding.evidence.push_back(std::move(line));
}

void judgeUnseenVolumes(const json& pod, Finding& finding) {
    for (const auto& volume : arrayAt(podSpec(pod), "volumes")) {
        const std::string name = stringAt(volume, "name");
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

void judgeSources(const json& pod, const std::vector<CredentialSource>& sources, Finding& finding) {
    const Started started = startedContainers(pod);
    for (const auto& source : sources) {
        const std::string name = source.kind + "/" + source.name;
        if (!source.object) {
            if (source.problem != "not found") {
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
        const auto written = lastWritten(*source.object);
        if (started.earliest && written && *written > *started.earliest)
            unproven(finding, fmt::format("{} was written after the pod's containers started: "
                                          "env keeps what it held before, which verify cannot "
                                          "read",
                                          name));
    }
    judgeUnseenVolumes(pod, finding);
}

}  // namespace rossoctl::verify
