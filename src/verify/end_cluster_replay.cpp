// The cluster's pods and Services as they were at any moment verify ran, from the server's record
// of changes since the start's lists: a neighbour with NET_RAW made while verify restarts the pod
// and gone before its end (attack 66 N1), a pod mounting the old claim to carry the agent's
// memory to the new one (S1), Services whose names spell a token made after verify listed them
// (T3). Each is judged by the rule it would have met at the start.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "end_recheck.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/verify/external_names.hpp"
#include "rossoctl/verify/volume_claims.hpp"
#include "verification.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

// A busy cluster's pods write their status often; past this many changes in one run the record
// is not read in full (each is judged as it arrives, none is kept).
constexpr std::size_t kMostClusterChanges = 20000;

// What `after` names that `before` does not.
std::vector<std::string> addedTo(const std::vector<std::string>& before,
                                 const std::vector<std::string>& after) {
    std::vector<std::string> added;
    for (const auto& entry : after)
        if (std::find(before.begin(), before.end(), entry) == before.end() &&
            std::find(added.begin(), added.end(), entry) == added.end())
            added.push_back(entry);
    return added;
}

}  // namespace

void Verification::recheckClusterPods(std::vector<CheckResult>& checks) {
    const EgressInputs& start = inputs_.egress;
    if (start.podsVersion.empty() || !start.hostListenersUnread.empty()) return;  // unproven
    const std::string nodeName =
        json_access::stringAt(json_access::podSpec(inputs_.pod), "nodeName");
    EgressInputs during;
    during.trustedNamespaces = start.trustedNamespaces;
    during.seccompDefault = start.seccompDefault;
    during.seccompDefaultUnread = start.seccompDefaultUnread;
    std::map<std::string, json> namespacePods;  // by uid: the latest of each
    const std::string unreplayed = replayChangesIn(
        kube::resources::pods(), "", "", start.podsVersion, endVersion_,
        [&](const kube::WatchEvent& event) {
            addClusterPods(json{{"items", json::array({event.object})}}, nodeName, during);
            const json& metadata = json_access::at(event.object, "metadata");
            if (json_access::stringAt(metadata, "namespace") == ns_)
                namespacePods[json_access::stringAt(metadata, "uid")] = event.object;
        },
        kMostClusterChanges);
    const auto unproven = [](CheckResult& check, std::string line) {
        absorb(check.staticPart, Finding{Verdict::Unproven, {std::move(line)}, ""});
    };
    if (!unreplayed.empty()) {
        for (auto& check : checks)
            if (check.kind == CheckKind::ServiceAccountToken || check.kind == CheckKind::Egress ||
                check.kind == CheckKind::NothingSurvives)
                unproven(check,
                         fmt::format("the changes to the cluster's pods while verify ran could "
                                     "not be read ({}): a pod with host access or NET_RAW made "
                                     "and gone meanwhile is not ruled out",
                                     unreplayed));
        return;
    }
    std::vector<std::string> reaching = addedTo(start.hostAccessPods, during.hostAccessPods);
    for (auto& raw : addedTo(start.rawNetworkPods, during.rawNetworkPods))
        reaching.push_back(std::move(raw));
    std::vector<std::string> network = addedTo(start.hostNetworkPods, during.hostNetworkPods);
    for (auto& probe : addedTo(start.nodeProbeHosts, during.nodeProbeHosts))
        network.push_back(std::move(probe));
    json items = json::array();
    for (auto& [uid, pod] : namespacePods) items.push_back(std::move(pod));
    for (auto& check : checks) {
        const bool token = check.kind == CheckKind::ServiceAccountToken;
        const bool survives = check.kind == CheckKind::NothingSurvives;
        const bool egress = check.kind == CheckKind::Egress;
        if (!token && !survives && !egress) continue;
        if (!reaching.empty())
            unproven(check,
                     fmt::format("pods made or changed while verify ran reach a node's files or "
                                 "its pod network (host access, NET_RAW): {}; they were not "
                                 "there when verify read the cluster's pods (attack 66 N1)",
                                 json_access::fewOf(reaching)));
        if (egress && !network.empty())
            unproven(check, fmt::format("pods made or changed while verify ran use the node's "
                                        "network or probe a host: {}",
                                        json_access::fewOf(network)));
        // One made and gone mounting the pod's claim carried what it held (S1).
        for (const json* pod : {&inputs_.pod, &replacementPod_}) {
            if (!pod->is_object()) continue;
            Finding shared = claimSharers(check.kind, *pod, items, podName_);
            if (shared.verdict == Verdict::Pass) continue;
            for (auto& line : shared.evidence) line = "while verify ran, " + line;
            absorb(check.staticPart, shared);
        }
    }
}

void Verification::recheckServices(CheckResult& token) {
    const ExternalNames& start = inputs_.externalNames;
    if (!start.read || start.version.empty()) return;
    ExternalNames seen = start;
    std::set<std::pair<std::string, std::string>> written;
    const std::string unreplayed = replayChangesIn(
        kube::resources::services(), start.othersProblem.empty() ? "" : ns_, "", start.version,
        endVersion_,
        [&](const kube::WatchEvent& event) {
            const json& metadata = json_access::at(event.object, "metadata");
            written.emplace(json_access::stringAt(metadata, "namespace"),
                            json_access::stringAt(metadata, "name"));
            addService(event.object, seen);
        },
        kMostClusterChanges);
    if (!unreplayed.empty()) {
        absorb(token.staticPart,
               Finding{Verdict::Unproven,
                       {fmt::format("the changes to the cluster's Services while verify ran "
                                    "could not be read ({}): names made meanwhile reach the pod "
                                    "through the cluster DNS",
                                    unreplayed)},
                       ""});
        return;
    }
    if (written.empty()) return;
    // Each as it was at any moment: a name written twice is one Service's two names.
    std::set<std::tuple<std::string, std::string, std::string>> distinct;
    std::erase_if(seen.names, [&](const ServiceName& name) {
        return !distinct.emplace(name.ns, name.name, name.clusterIP).second;
    });
    sortNames(seen);
    const auto judged = [&](const ExternalNames& names) {
        Finding finding = externalNamesStatic(names, inputs_.clusterIssuer);
        absorb(finding,
               serviceNamesStatic(inputs_.pod, names, inputs_.egress, inputs_.clusterIssuer));
        return finding;
    };
    const Finding before = judged(start);
    Finding during = judged(seen);
    if (worstOf(before.verdict, during.verdict) == before.verdict) return;
    // Counted, never named: the names themselves may be what spells the token.
    for (auto& line : during.evidence)
        line = fmt::format("with the {} Service{} written while verify ran (attack 66 T3): {}",
                           written.size(), written.size() == 1 ? "" : "s", line);
    std::erase_if(during.evidence, [](const std::string& line) {
        return line.find("no credential by shape") != std::string::npos;
    });
    absorb(token.staticPart, during);
}

}  // namespace rossoctl::verify
