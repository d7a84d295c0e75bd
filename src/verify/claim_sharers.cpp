// Other pods of the namespace that mount one of the pod's claims (attack 60 S1): a claim is a
// PersistentVolumeClaim any pod of the namespace may mount by claimName, a generic ephemeral
// volume's (<pod>-<volume>) too, and what one pod writes there the other reads and writes.
#include <fmt/format.h>

#include <algorithm>

#include "json_access.hpp"
#include "rossoctl/verify/volume_claims.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

// What a pod sharing the claim does to the check, after "... mount(s) claim C of this pod: ".
std::string sharerMeans(CheckKind kind, bool one) {
    switch (kind) {
        case CheckKind::Egress:
            return fmt::format("what the agent writes there leaves through {}",
                               one ? "it" : "them");
        case CheckKind::ServiceAccountToken:
            return fmt::format("{} may write a credential there, which verify does not read",
                               one ? "it" : "they");
        default:
            return fmt::format("{} what the agent writes there, past the pod",
                               one ? "it keeps" : "they keep");
    }
}

}  // namespace

Finding claimSharers(CheckKind kind, const json& pod, const std::optional<json>& namespacePods,
                     const std::string& replaced) {
    Finding finding{Verdict::Pass, {}, ""};
    if (kind != CheckKind::Egress && kind != CheckKind::ServiceAccountToken &&
        kind != CheckKind::NothingSurvives)
        return finding;
    std::vector<std::string> claims;
    for (const auto& volume : arrayAt(podSpec(pod), "volumes"))
        if (const std::string claim = claimNameOf(pod, volume);
            !claim.empty() && std::find(claims.begin(), claims.end(), claim) == claims.end())
            claims.push_back(claim);
    if (claims.empty()) return finding;
    const Verdict shared =
        kind == CheckKind::ServiceAccountToken ? Verdict::Unproven : Verdict::Fail;
    if (!namespacePods) {
        std::vector<std::string> shown;
        for (const auto& claim : claims) shown.push_back(shortened(claim));
        finding.verdict = Verdict::Unproven;
        finding.evidence.push_back(fmt::format(
            "the namespace's pods were not read: whether another pod mounts claim{} {} of this "
            "pod (then {}) is not known",
            claims.size() == 1 ? "" : "s", fewOf(shown), sharerMeans(kind, true)));
        return finding;
    }
    const std::string ns = stringAt(at(pod, "metadata"), "namespace");
    for (const auto& claim : claims) {
        std::vector<std::string> sharers;
        for (const auto& other : arrayAt(*namespacePods, "items")) {
            const json& metadata = at(other, "metadata");
            const std::string name = stringAt(metadata, "name");
            // The pod itself, and the one the template's pod replaces (gone by then).
            if (name == podName(pod) || (!replaced.empty() && name == replaced)) continue;
            // A Succeeded or Failed pod holds the claim until deleted, but runs nothing: only
            // pods that may still run are judged.
            const std::string phase = stringAt(at(other, "status"), "phase");
            if (phase == "Succeeded" || phase == "Failed") continue;
            bool mounts = false;
            for (const auto& volume : arrayAt(podSpec(other), "volumes"))
                mounts =
                    mounts || stringAt(at(volume, "persistentVolumeClaim"), "claimName") == claim;
            if (mounts)
                sharers.push_back(fmt::format("{}/{}",
                                              shortened(stringAt(metadata, "namespace", ns)),
                                              shortened(name.empty() ? "?" : name)));
        }
        if (sharers.empty()) continue;
        finding.verdict = worstOf(finding.verdict, shared);
        const bool one = sharers.size() == 1;
        finding.evidence.push_back(
            fmt::format("{} {} {} claim {} of this pod: {}", one ? "pod" : "pods", fewOf(sharers),
                        one ? "mounts" : "mount", shortened(claim), sharerMeans(kind, one)));
    }
    return finding;
}

}  // namespace rossoctl::verify
