#pragma once
// Whether the cluster DNS a pod may ask recurses to the outside (a DNS tunnel): read from
// CoreDNS's Corefile (ConfigMap kube-system/coredns, key Corefile).
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

// One server block: its zones ("." for the root, each with a trailing dot) and its top-level
// directives, each as words (a directive's own sub-block is left out).
struct CorefileServer {
    std::vector<std::string> zones;
    std::vector<std::vector<std::string>> directives;
};
// ".:53", "dns://.:53", "Cluster.Local" -> ".", ".", "cluster.local."
std::string corefileZone(std::string key);
// nullopt when the braces do not balance or a block has no key.
std::optional<std::vector<CorefileServer>> parseCorefile(const std::string& text);

// dns: checks.hpp. Fail: a block for a zone outside the cluster's (".", "com.") forwards (forward,
// proxy, grpc); pass: none does; unproven: the Corefile was not read or not understood.
Finding clusterDnsRecursion(const ClusterDns& dns);

}  // namespace rossoctl::verify
