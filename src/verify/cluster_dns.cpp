// DNS as a tunnel (issue 35 point 11): DNS to a cluster DNS that recurses is egress beyond the
// project, whatever the NetworkPolicies say about addresses; and a way in from every namespace.
#include "rossoctl/verify/cluster_dns.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rossoctl::verify {

using nlohmann::json;

Finding clusterDnsRecursion(const ClusterDns& dns) {
    const auto assessment = app::assessClusterDns(dns);
    const Verdict verdict = assessment.recursion == app::DnsRecursion::Closed ? Verdict::Pass
                            : assessment.recursion == app::DnsRecursion::Recurses
                                ? Verdict::Fail
                                : Verdict::Unproven;
    Finding finding{verdict, assessment.evidence, ""};
    // A way in as well as out (attack 54, T2): what egress judges is only the way out.
    finding.evidence.push_back(fmt::format(
        "the cluster DNS is also a way in: the externalName of an ExternalName Service in {} "
        "reaches the pod as a CNAME (the token check reads those it can list)",
        "any namespace"));
    return finding;
}

DnsReach reachesClusterDns(const model::EffectiveEgress& effective, const std::string& podNamespace,
                           const ClusterDns& dns, std::string& why) {
    if (!effective.isolated) {
        why = "egress is not isolated";
        return DnsReach::Yes;
    }
    model::AddressSet addresses;
    for (const auto& address : dns.addresses) {
        try {
            addresses.add(model::AddressSet::parse(address));
        } catch (const std::exception&) {
        }
    }
    std::string maybe;  // a rule whose addresses may hold kube-dns
    for (const auto& grant : effective.grants) {
        if (!grant.ports.contains(model::Protocol::UDP, 53) &&
            !grant.ports.contains(model::Protocol::TCP, 53))
            continue;
        why = grant.source;
        if (grant.everyPod) return DnsReach::Yes;
        for (const auto& peer : grant.pods) {
            const bool inDnsNamespace =
                peer.namespaceSelector.is_null()
                    ? podNamespace == "kube-system"
                    : model::labelSelectorMatches(peer.namespaceSelector, dns.namespaceLabels);
            if (inDnsNamespace &&
                std::any_of(dns.podLabels.begin(), dns.podLabels.end(), [&](const json& labels) {
                    return model::labelSelectorMatches(peer.podSelector, labels);
                }))
                return DnsReach::Yes;
        }
        if (grant.addresses.empty()) continue;
        if (!grant.addresses.intersect(addresses).empty()) return DnsReach::Yes;
        if (!dns.endpointsProblem.empty() && maybe.empty()) maybe = grant.source;
    }
    why = maybe;
    return maybe.empty() ? DnsReach::No : DnsReach::Maybe;
}

}  // namespace rossoctl::verify
