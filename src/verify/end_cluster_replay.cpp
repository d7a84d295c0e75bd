// The cluster's pods and Services as they were at any moment verify ran, from the server's record
// of changes since the start's lists: a neighbour with NET_RAW made while verify restarts the pod
// and gone before its end (attack 66 N1), a pod mounting the old claim to carry the agent's
// memory to the new one (S1), Services whose names spell a token made after verify listed them
// (T3). Each is judged by the rule it would have met at the start.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "end_recheck.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/verify/egress_gate.hpp"
#include "rossoctl/verify/external_names.hpp"
#include "rossoctl/verify/volume_claims.hpp"
#include "verification.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

// A busy cluster's pods write their status often; past this many changes in one run the record
// is not read in full (each is judged as it arrives, none is kept).
constexpr std::size_t kMostClusterChanges = 20000;
constexpr std::size_t kMostSupersededServices = 200;

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
    if (!start.hostListenersUnread.empty()) return;  // unproven already: the pods were not read
    // The judged pod's node and the replacement's, each judged as its own pods were.
    std::vector<std::pair<std::string, EgressInputs>> nodes;
    for (const json* pod : {&inputs_.pod, &replacementPod_}) {
        if (!pod->is_object()) continue;
        const std::string node = json_access::stringAt(json_access::podSpec(*pod), "nodeName");
        if (std::any_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.first == node; }))
            continue;
        EgressInputs during;
        during.trustedNamespaces = start.trustedNamespaces;
        if (nodes.empty()) {  // the replacement's node's kubelet was read apart, if at all
            during.seccompDefault = start.seccompDefault;
            during.seccompDefaultUnread = start.seccompDefaultUnread;
        }
        nodes.emplace_back(node, std::move(during));
    }
    // Per pod of the namespace, what the claim check reads: its name, claims, and whether it
    // ran at any moment (its ended state is not kept over that).
    std::map<std::string, json> namespacePods;
    const std::string unreplayed = replayChangesIn(
        kube::resources::pods(), "", "", start.podsVersion, endVersion_,
        [&](const kube::WatchEvent& event) {
            const json one = {{"items", json::array({event.object})}};
            for (auto& [node, during] : nodes) addClusterPods(one, node, during);
            const json& metadata = json_access::at(event.object, "metadata");
            if (json_access::stringAt(metadata, "namespace") != ns_) return;
            const auto endedIn = [](const json& pod) {
                const std::string phase =
                    json_access::stringAt(json_access::at(pod, "status"), "phase");
                return phase == "Succeeded" || phase == "Failed";
            };
            const bool ended = endedIn(event.object);
            json& kept = namespacePods[json_access::stringAt(metadata, "uid")];
            // The first running version stands; an ended one only until the pod runs.
            if (!kept.is_null() && (!endedIn(kept) || ended)) return;
            json volumes = json::array();
            for (const auto& volume :
                 json_access::arrayAt(json_access::podSpec(event.object), "volumes"))
                if (const json& claim = json_access::at(volume, "persistentVolumeClaim");
                    claim.is_object())
                    volumes.push_back(
                        {{"persistentVolumeClaim",
                          {{"claimName", json_access::stringAt(claim, "claimName")}}}});
            kept = {{"metadata",
                     {{"name", json_access::stringAt(metadata, "name")},
                      {"namespace", json_access::stringAt(metadata, "namespace")}}},
                    {"spec", {{"volumes", std::move(volumes)}}},
                    {"status", {{"phase", ended ? "Succeeded" : "Running"}}}};
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
    std::vector<std::string> reaching, network;
    for (const auto& [node, during] : nodes) {
        for (auto& line : addedTo(start.hostAccessPods, during.hostAccessPods))
            reaching.push_back(std::move(line));
        for (auto& line : addedTo(start.rawNetworkPods, during.rawNetworkPods))
            reaching.push_back(std::move(line));
        for (auto& line : addedTo(start.hostNetworkPods, during.hostNetworkPods))
            network.push_back(std::move(line));
        for (auto& line : addedTo(start.nodeProbeHosts, during.nodeProbeHosts))
            network.push_back(std::move(line));
    }
    if (!nodes.empty())
        for (const auto& published : nodes.front().second.podHostnames) {
            replayedHostnames_.push_back(published);
            replayedNames_.push_back(published.hostname);
            replayedNames_.push_back(published.pod);
        }
    reaching = addedTo({}, reaching);
    network = addedTo({}, network);
    json items = json::array();
    for (auto& [uid, pod] : namespacePods) items.push_back(std::move(pod));
    const json listed = {{"items", std::move(items)}};
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
            Finding shared = claimSharers(check.kind, *pod, listed, podName_);
            if (shared.verdict == Verdict::Pass) continue;
            for (auto& line : shared.evidence) line = "while verify ran, " + line;
            absorb(check.staticPart, shared);
        }
    }
}

void Verification::recheckServices(CheckResult& token, CheckResult& egress) {
    const ExternalNames& start = inputs_.externalNames;
    // Not read is unproven already; not served has nothing to replay.
    if (!start.read || !start.problem.empty() || !start.served) return;
    // The latest version of each Service written, by namespace and name: one entry each, so a
    // name written twice (or deleted and made again) is not doubled in a join (review 67 H2).
    std::map<std::pair<std::string, std::string>, json> written;
    // Every version that claimed an address, however briefly: the gate's connect in the
    // restart's first milliseconds met whichever held then (review 67 L2).
    ExternalNames claims;
    claims.read = true;
    claims.ns = start.ns;
    size_t claimsUnkept = 0;
    // Versions rewritten before the end, each judged alone: ports that spelled a token for a
    // second and were written back are not in the last version (review 67 H2). Also the set
    // with each Service at its first, and at its last, earlier version: a token split over
    // several Services all written back (review 68 H5). Only what is judged is kept (L1).
    std::vector<json> superseded;
    std::map<std::pair<std::string, std::string>, json> firstEarlier, lastEarlier;
    size_t supersededUnkept = 0;
    const auto judgedPart = [](const json& service) {
        const json& spec = json_access::at(service, "spec");
        return json{json_access::at(spec, "ports"), json_access::at(spec, "externalName")};
    };
    const auto kept = [](const json& service) {
        const json& metadata = json_access::at(service, "metadata");
        const json& spec = json_access::at(service, "spec");
        json out = {{"metadata",
                     {{"namespace", json_access::at(metadata, "namespace")},
                      {"name", json_access::at(metadata, "name")}}},
                    {"spec", json::object()}};
        for (const char* key : {"clusterIP", "clusterIPs", "ports", "externalName"})
            if (spec.is_object() && spec.contains(key)) out["spec"][key] = spec[key];
        return out;
    };
    const std::string unreplayed = replayChangesIn(
        kube::resources::services(), start.othersProblem.empty() ? "" : ns_, "", start.version,
        endVersion_,
        [&](const kube::WatchEvent& event) {
            const json& metadata = json_access::at(event.object, "metadata");
            ExternalNames version;
            version.ns = start.ns;
            addService(event.object, version);
            for (auto& name : version.names) {
                if (name.claimedAddresses.empty()) continue;
                if (claims.names.size() >= kMostSupersededServices) {
                    ++claimsUnkept;
                    continue;
                }
                name.ports.clear();
                name.portNumbers.clear();
                claims.names.push_back(std::move(name));
            }
            // What is judged: its name, ports, addresses and externalName.
            const std::pair<std::string, std::string> key{
                json_access::stringAt(metadata, "namespace"),
                json_access::stringAt(metadata, "name")};
            json& latest = written[key];
            if (latest.is_object() && judgedPart(latest) != judgedPart(event.object)) {
                if (!firstEarlier.contains(key)) firstEarlier[key] = latest;
                lastEarlier[key] = latest;
                if (superseded.size() < kMostSupersededServices)
                    superseded.push_back(std::move(latest));
                else
                    ++supersededUnkept;
            }
            latest = kept(event.object);
            latest["status"] = json_access::at(event.object, "status");
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
        // Nor whether one claimed the address the gate connects to (review 68 M3).
        absorb(egress.livePart,
               Finding{Verdict::Unproven,
                       {fmt::format("the changes to the cluster's Services while verify ran "
                                    "could not be read ({}): one may have claimed the API "
                                    "server's address the gate connects to as an external IP",
                                    unreplayed)},
                       ""});
        return;
    }
    if (claimsUnkept > 0)
        absorb(egress.livePart,
               Finding{Verdict::Unproven,
                       {fmt::format("{} more versions of Services claimed external IPs while "
                                    "verify ran than the {} it compares with the gate's target",
                                    claimsUnkept, kMostSupersededServices)},
                       ""});
    if (const Finding gate = egressGateTargetClaims(claims, inputs_.egress);
        gate.verdict != Verdict::Pass) {
        Finding during = gate;
        for (auto& line : during.evidence) line += " (a version written while verify ran)";
        absorb(egress.livePart, during);
    }
    if (written.empty() && replayedHostnames_.empty()) return;
    // The start's set with each written Service at the version `earlier` names, else its last.
    const auto setWith = [&](const std::map<std::pair<std::string, std::string>, json>& earlier) {
        ExternalNames names = start;
        std::erase_if(names.names, [&](const ServiceName& name) {
            return name.pod.empty() && written.contains({name.ns, name.name});
        });
        std::erase_if(names.services, [&](const ExternalNameService& service) {
            return written.contains({service.ns, service.name});
        });
        for (const auto& [key, service] : written) {
            const auto old = earlier.find(key);
            addService(old == earlier.end() ? service : old->second, names);
        }
        sortNames(names);
        for (const auto& service : names.services) replayedNames_.push_back(service.externalName);
        return names;
    };
    for (const auto& [key, service] : written) replayedNames_.push_back(key.second);
    const ExternalNames seen = setWith({});
    EgressInputs hostnames;
    hostnames.podHostnames = inputs_.egress.podHostnames;
    for (const auto& published : replayedHostnames_) hostnames.podHostnames.push_back(published);
    const auto judged = [&](const ExternalNames& names, const EgressInputs& published) {
        Finding finding = externalNamesStatic(names, inputs_.clusterIssuer);
        // Each pod's own service links: the replacement's or the template's may be on where the
        // first pod's are off (review 67 L3).
        for (const json* pod : {&inputs_.pod, &inputs_.templatePod, &replacementPod_})
            if (pod->is_object())
                absorb(finding, serviceNamesStatic(*pod, names, published, inputs_.clusterIssuer));
        std::set<std::string> said;  // the pods share most lines
        std::erase_if(finding.evidence,
                      [&](const std::string& line) { return !said.insert(line).second; });
        return finding;
    };
    const Finding before = judged(start, inputs_.egress);
    Finding during = judged(seen, hostnames);
    if (!firstEarlier.empty()) {
        absorb(during, judged(setWith(firstEarlier), hostnames));
        absorb(during, judged(setWith(lastEarlier), hostnames));
    }
    for (const auto& version : superseded) {
        ExternalNames alone;
        alone.read = true;
        alone.ns = start.ns;
        addService(version, alone);
        for (const auto& service : alone.services) replayedNames_.push_back(service.externalName);
        absorb(during, judged(alone, EgressInputs()));
    }
    if (supersededUnkept > 0)
        absorb(during, Finding{Verdict::Unproven,
                               {fmt::format("{} more versions of Services were rewritten while "
                                            "verify ran than the {} it judges one by one",
                                            supersededUnkept, kMostSupersededServices)},
                               ""});
    if (worstOf(before.verdict, during.verdict) == before.verdict) return;
    // Counted, never named: the names themselves may be what spells the token.
    std::vector<std::string> counted;
    if (!written.empty())
        counted.push_back(
            fmt::format("{} Service{}", written.size(), written.size() == 1 ? "" : "s"));
    if (!replayedHostnames_.empty())
        counted.push_back(fmt::format("{} pod hostname{}", replayedHostnames_.size(),
                                      replayedHostnames_.size() == 1 ? "" : "s"));
    for (auto& line : during.evidence)
        line = fmt::format("with the {} written while verify ran (attack 66 T3): {}",
                           fmt::join(counted, " and "), line);
    std::erase_if(during.evidence, [](const std::string& line) {
        return line.find("no credential by shape") != std::string::npos;
    });
    absorb(token.staticPart, during);
}

}  // namespace rossoctl::verify
