// The static half of "egress denied": the pod's effective egress against what the project
// allows. Every opening beyond it fails, naming the policy, the rule and one open destination.
#include <fmt/format.h>

#include <algorithm>

#include "json_access.hpp"
#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/cluster_dns.hpp"

namespace rossoctl::verify {

using json_access::fewOf;
using nlohmann::json;

EgressInputs::EgressInputs() : allowance(model::projectAllowance(json::object())) {}

namespace {

// What the project allows, after "the project allows: ": "DNS to kube-dns, vm:443" out of the
// allowance's "the project allows DNS to kube-dns, vm:443".
std::string withinAllowance(const std::string& origin) {
    const std::string said = "the project allows ";
    return origin.rfind(said, 0) == 0 ? origin.substr(said.size()) : origin;
}

// The first of the cluster's pod addresses (not this pod's own) an allowed range holds, as an
// evidence line; "" when none: a pod there with egress of its own relays what the agent sends
// (attack 61 C1), as a relay of the project does (attack 54 E4).
std::string allowedPodAddress(const json& pod, const EgressInputs& inputs) {
    std::vector<std::string> own;
    for (const auto& ip : json_access::arrayAt(json_access::at(pod, "status"), "podIPs"))
        if (json_access::at(ip, "ip").is_string()) own.push_back(json_access::stringAt(ip, "ip"));
    for (const auto& [allowed, ports] : inputs.allowance.addresses)
        for (const auto& [address, whose] : inputs.podAddresses) {
            if (std::find(own.begin(), own.end(), address) != own.end()) continue;
            model::AddressSet held;
            try {
                held = model::AddressSet::parse(address);
            } catch (const Error&) {
                continue;  // a server's word that is no address holds no pod verify can name
            }
            if (allowed.intersect(held).empty()) continue;
            return fmt::format(
                "the project allows {}, which holds the cluster's pod addresses ({} of {}): a pod "
                "there with egress of its own carries what the agent sends it out; not proven "
                "(allow ranges outside the pod network)",
                allowed.describe(), json_access::shortened(address, 50), whose);
        }
    // A range holding no pod now may hold one later (attack 62 C1b): it must lie outside every
    // node's pod range, or, those not known, outside the private ranges a pod network uses.
    const auto overlap = [](const model::AddressSet& allowed, const std::string& range) {
        try {
            return !allowed.intersect(model::AddressSet::parse(range)).empty();
        } catch (const Error&) {
            return true;  // a range verify cannot read may be any
        }
    };
    for (const auto& [allowed, ports] : inputs.allowance.addresses) {
        if (inputs.podRanges) {
            for (const auto& [range, whose] : *inputs.podRanges)
                if (overlap(allowed, range))
                    return fmt::format(
                        "the project allows {}, which overlaps {} ({}): a pod given an address "
                        "there with egress of its own carries what the agent sends it out; not "
                        "proven (allow ranges outside the pod network)",
                        allowed.describe(), whose, json_access::shortened(range, 50));
            continue;
        }
        // IPv6 pods often have global addresses (a VPC's, attack 63): any of them may be one.
        for (const char* range : {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
                                  "fc00::/7", "2000::/3"})
            if (overlap(allowed, range))
                return fmt::format(
                    "the project allows {}, addresses where a pod may be given one later, and "
                    "the pod network's ranges are not known ({}): a pod there with egress of "
                    "its own carries what the agent sends it out; not proven",
                    allowed.describe(),
                    inputs.podRangesUnknown.empty() ? "not read" : inputs.podRangesUnknown);
    }
    return "";
}

}  // namespace

Finding kubeletRelays(const EgressInputs& inputs) {
    Finding finding{Verdict::Pass, {}, ""};
    // Any tenant's pod on the node can have the kubelet connect into this one by a probe's
    // `host`; the agent's answer then lands in that pod's Events (attack 59 K1).
    if (const auto& hosts = inputs.nodeProbeHosts; !hosts.empty()) {
        finding.evidence.push_back(fmt::format(
            "{} on the node name{} a host for the kubelet to connect to: the node's connections "
            "reach into the pod past its NetworkPolicies, and the answer lands in that pod's "
            "Events; not proven",
            fewOf(hosts), hosts.size() == 1 ? "s" : ""));
        finding.verdict = Verdict::Unproven;
    }
    // Such a pod may come after verify: only Pod Security refusing it everywhere rules it out.
    if (!inputs.probeHostNamespaces) {
        finding.evidence.push_back(fmt::format(
            "{}: whether a namespace admits a pod whose probe names a host (the kubelet then "
            "connects into this pod from the node, past its NetworkPolicies) is not known",
            inputs.probeHostNamespacesUnread.empty() ? "namespaces were not read"
                                                     : inputs.probeHostNamespacesUnread));
        finding.verdict = Verdict::Unproven;
    } else if (const auto& open = *inputs.probeHostNamespaces; !open.empty()) {
        finding.evidence.push_back(fmt::format(
            "namespace{} {} admit{} pods whose probes or lifecycle hooks name a host: the kubelet "
            "connects there from the node, into this pod past its NetworkPolicies, and records "
            "the answer in that pod's Events; not proven (label each "
            "pod-security.kubernetes.io/enforce=baseline or restricted, on a v1.34 or later "
            "server)",
            open.size() == 1 ? "" : "s", fewOf(open), open.size() == 1 ? "s" : ""));
        finding.verdict = Verdict::Unproven;
    } else {
        finding.evidence.push_back(fmt::format(
            "every namespace but kube-system{} enforces Pod Security baseline or restricted "
            "(v1.34 or later): none admits a pod whose probe names a host for the kubelet",
            inputs.trustedNamespaces.empty()
                ? ""
                : " and those kube-system/rossoctl-verify vouches for"));
    }
    return finding;
}

namespace {

// Hand-made volumes of a node's files, or why they are not known; "" when none can be.
std::string hostPathVolumesDoubt(const EgressInputs& inputs) {
    if (const auto& volumes = inputs.hostPathVolumes; !volumes.empty())
        return fmt::format(
            "{}: a pod that mounts {} has a node's files at any Pod Security level and reads and "
            "writes this pod's volumes there (review 61 #6)",
            fewOf(volumes), volumes.size() == 1 ? "it" : "one");
    if (!inputs.hostPathVolumesUnread.empty())
        return fmt::format(
            "{}: a hand-made PersistentVolume of a node's files (hostPath, local), which a "
            "project's claim binds, is not ruled out",
            inputs.hostPathVolumesUnread);
    return "";
}

// Pods that can hold NET_RAW or NET_ADMIN on the pods' network (attack 65 N2); "" for none.
std::string rawNetworkDoubt(const EgressInputs& inputs) {
    const auto& pods = inputs.rawNetworkPods;
    if (pods.empty()) return "";
    return fmt::format(
        "{} can hold NET_RAW or NET_ADMIN: on the pods' shared network {} answers ARP for an "
        "address this pod may reach (the cluster DNS) and takes what it sends there (attack 65 "
        "N2; drop NET_RAW, or enforce Pod Security restricted)",
        fewOf(pods), pods.size() == 1 ? "it" : "one");
}

}  // namespace

Finding hostAccessNeighbours(const EgressInputs& inputs, const std::string& what) {
    Finding finding{Verdict::Pass, {}, ""};
    const auto doubt = [&](std::string line) {
        finding.evidence.push_back(std::move(line));
        finding.verdict = Verdict::Unproven;
    };
    if (!inputs.trustedNamespaces.empty())
        finding.evidence.push_back(fmt::format(
            "the host access of pods of namespace{} {}, which the ConfigMap "
            "kube-system/rossoctl-verify vouches for, is not counted",
            inputs.trustedNamespaces.size() == 1 ? "" : "s", fewOf(inputs.trustedNamespaces, 8)));
    if (!inputs.hostAccessNamespaces)
        doubt(fmt::format(
            "{}: whether a namespace admits a pod with the node's files "
            "(hostPath), which reach this pod's volumes, is not known",
            inputs.probeHostNamespacesUnread.empty() ? "namespaces were not read"
                                                     : inputs.probeHostNamespacesUnread));
    else if (const auto& open = *inputs.hostAccessNamespaces; !open.empty())
        doubt(fmt::format(
            "namespace{} {} admit{} pods with the node's files (hostPath) and "
            "privileges: one there reads and writes this pod's volumes on the "
            "node, so {} is not proven (attack 60 H1; label each "
            "pod-security.kubernetes.io/enforce=baseline or restricted)",
            open.size() == 1 ? "" : "s", fewOf(open), open.size() == 1 ? "s" : "", what));
    // A level set on a namespace leaves running the pods it would now refuse.
    if (const auto& pods = inputs.hostAccessPods; !pods.empty())
        doubt(
            fmt::format("{} reach{} a node's files or processes: on this pod's node, or once it "
                        "is moved to theirs, one reads and writes its volumes, so {} is not proven",
                        fewOf(pods), pods.size() == 1 ? "es" : "", what));
    else if (!inputs.hostListenersUnread.empty())
        doubt(
            fmt::format("{}: a pod with the node's files (hostPath) is not ruled out, so "
                        "{} is not proven",
                        inputs.hostListenersUnread, what));
    if (const std::string volumes = hostPathVolumesDoubt(inputs); !volumes.empty())
        doubt(fmt::format("{}, so {} is not proven", volumes, what));
    if (const std::string raw = rawNetworkDoubt(inputs); !raw.empty())
        doubt(fmt::format("{}, so {} is not proven", raw, what));
    return finding;
}

Finding egressStatic(const json& pod, const json& networkPolicies, const EgressInputs& inputs) {
    Finding finding;
    auto effective = model::effectiveEgress(pod, networkPolicies, inputs.ciliumPolicies);
    model::resolveNamedPorts(effective, [&](const model::PodPeer& peer) {
        const auto found = inputs.peerPods.find(model::podPeerKey(peer));
        return found == inputs.peerPods.end() ? std::nullopt : found->second;
    });
    const auto excess = model::beyondAllowance(effective, inputs.allowance,
                                               std::pair{model::Protocol::TCP, inputs.probedPort});
    const auto calledOut = model::calledOutRanges(inputs.apiServerAddresses, inputs.nodeAddresses);
    if (!effective.isolated)
        finding.evidence.push_back(fmt::format(
            "no NetworkPolicy selecting pod {} has Egress in policyTypes ({} policies in the "
            "namespace): egress is not isolated",
            pod["metadata"].value("name", "?"),
            networkPolicies.is_array() ? networkPolicies.size() : 0));
    for (const auto& open : excess) {
        if (!open.example.empty())
            finding.evidence.push_back(fmt::format("{} allows {}: beyond the project, e.g. {}",
                                                   open.source, open.text, open.example));
        if (!open.podsText.empty())
            finding.evidence.push_back(
                fmt::format("{} allows {}: beyond the project", open.source, open.podsText));
        for (const auto& range : calledOut) {
            for (const auto& [addresses, ports] : open.open) {
                const auto hit = addresses.intersect(range.addresses);
                if (hit.empty()) continue;
                finding.evidence.push_back(fmt::format("{} opens {}: {} on {}", open.source,
                                                       range.name, hit.describe(2),
                                                       ports.describe()));
                break;
            }
        }
    }
    const auto inbound = ingressOpenings(pod, networkPolicies, inputs);
    const std::string relabelled = labelledEgressOpening(pod, networkPolicies, inputs);
    if (!relabelled.empty()) finding.evidence.push_back(relabelled);
    for (const auto& line : inbound.open) finding.evidence.push_back(line);
    for (const auto& line : inbound.doubts) finding.evidence.push_back(line);
    for (const auto& grant : effective.grants)
        for (const auto& note : grant.notes) finding.evidence.push_back(grant.source + ": " + note);
    for (const auto& problem : effective.unevaluable)
        finding.evidence.push_back(problem + ": not evaluated, so not proven closed");
    for (const auto& problem : inputs.readProblems) finding.evidence.push_back(problem);
    for (const auto& problem : inputs.unreadPolicies)
        finding.evidence.push_back(problem + ": what they allow is not known, so not proven");
    if (!excess.empty() || !inbound.open.empty()) {
        finding.verdict = Verdict::Fail;
    } else if (!effective.unevaluable.empty() || !inputs.unreadPolicies.empty() ||
               !inbound.doubts.empty() || !relabelled.empty()) {
        finding.verdict = Verdict::Unproven;
    } else {
        std::string policies;
        for (const auto& name : effective.isolatingPolicies)
            policies += (policies.empty() ? "" : ", ") + name;
        finding.evidence.insert(
            finding.evidence.begin(),
            fmt::format("egress isolated by {}; every rule stays within what the project "
                        "allows: {}",
                        policies, withinAllowance(inputs.allowance.origin)));
        finding.verdict = Verdict::Pass;
    }
    // The node's own traffic is let into every pod past its policies (for the kubelet's
    // probes): a host-network pod a tenant runs on the node connects in whenever the pod
    // listens, for a moment verify need not see (attack 56 N2, attack 57).
    if (!inputs.hostNetworkPods.empty()) {
        finding.evidence.push_back(fmt::format(
            "{} on the node share{} its network namespace: the node's connections reach into the "
            "pod past its NetworkPolicies, and a connection in carries data out; not proven",
            fewOf(inputs.hostNetworkPods), inputs.hostNetworkPods.size() == 1 ? "s" : ""));
        finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
    }
    if (const std::string relay = allowedPodAddress(pod, inputs); !relay.empty()) {
        finding.evidence.push_back(relay);
        finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
    }
    // Such a pod reads this pod's volumes on the node and carries them out on its own egress.
    if (const auto& pods = inputs.hostAccessPods; !pods.empty()) {
        finding.evidence.push_back(fmt::format(
            "{} reach{} a node's files or processes: this pod's volumes are read there (on its "
            "node, or once it is moved to theirs) and leave on that pod's own egress; not proven",
            fewOf(pods), pods.size() == 1 ? "es" : ""));
        finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
    }
    if (const std::string volumes = hostPathVolumesDoubt(inputs); !volumes.empty()) {
        finding.evidence.push_back(volumes +
                                   ", and carries them out on its own egress; not proven");
        finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
    }
    if (const std::string raw = rawNetworkDoubt(inputs); !raw.empty()) {
        finding.evidence.push_back(raw + ", out on its own egress; not proven");
        finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
    }
    if (inputs.clusterDns) {
        std::string why;
        const auto reach = reachesClusterDns(
            effective, pod.value("metadata", json::object()).value("namespace", ""),
            *inputs.clusterDns, why);
        const Finding dns =
            reach == DnsReach::No ? Finding{} : clusterDnsRecursion(*inputs.clusterDns);
        if (reach == DnsReach::Yes) {
            for (const auto& line : dns.evidence) finding.evidence.push_back(why + ": " + line);
            finding.verdict = worstOf(finding.verdict, dns.verdict);
        } else if (reach == DnsReach::Maybe && dns.verdict != Verdict::Pass) {
            // An ipBlock on port 53 that may hold kube-dns: a recursing DNS is not ruled out.
            finding.evidence.push_back(
                fmt::format("{} opens port 53 to addresses that may hold kube-dns ({}): {}", why,
                            inputs.clusterDns->endpointsProblem, dns.evidence.front()));
            finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
        }
    }
    if (finding.verdict == Verdict::Fail)
        finding.evidence.push_back("allowed: " + inputs.allowance.origin);
    return finding;
}

}  // namespace rossoctl::verify
