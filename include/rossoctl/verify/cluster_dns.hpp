#pragma once
// Whether the cluster DNS a pod may ask recurses to the outside (a DNS tunnel), and whether the
// pod may ask it: read by app/project_dns.hpp, judged here for the egress check.
#include <string>

#include "rossoctl/model/egress.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

// Fail: a plugin asks other servers for names outside the cluster's zones; pass: none does;
// unproven: the Corefile was not read or not understood.
Finding clusterDnsRecursion(const ClusterDns& dns);

enum class DnsReach { No, Yes, Maybe };
// Whether the pod's egress reaches the cluster DNS on port 53: not isolated, a rule to every
// pod, a pod peer the DNS pods match, or an ipBlock holding its Service or pod addresses
// (Maybe when those addresses could not be read); `why` names the rule.
DnsReach reachesClusterDns(const model::EffectiveEgress& effective, const std::string& podNamespace,
                           const ClusterDns& dns, std::string& why);

}  // namespace rossoctl::verify
