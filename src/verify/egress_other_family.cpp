// Whether the probes' one address family covers every way out of the pod: a policy engine
// that filters IPv4 alone (kube-router without IPv6: attack 54 E1) lets link-local IPv6 reach
// every pod of the node and the node itself, while every IPv4 probe is refused.
#include <fmt/format.h>

#include "rossoctl/verify/isolation.hpp"

namespace rossoctl::verify {

namespace {

bool isIpv6(const std::string& address) {
    return address.find(':') != std::string::npos;
}
bool isLoopbackText(const std::string& address) {
    return address == "::1" || address.rfind("127.", 0) == 0;
}

}  // namespace

Finding otherFamilyEgressLive(const IsolationFacts& facts, AddressFamily probed) {
    if (!facts.ran)
        return Finding{Verdict::Unproven,
                       {"the trusted probe did not read the pod's addresses (" + facts.failure +
                        "): whether a way out over another address family exists is not read"},
                       ""};
    std::vector<std::string> v4, v6;
    for (const auto& address : facts.localAddresses)
        if (!isLoopbackText(address)) (isIpv6(address) ? v6 : v4).push_back(address);
    // A pod of both families (Any) was probed over the target's one only.
    const bool probedV6 =
        probed == AddressFamily::IPv6 || (probed == AddressFamily::Any && v4.empty());
    const auto& others = probedV6 ? v4 : v6;
    const char* probedName = probedV6 ? "IPv6" : "IPv4";
    const char* otherName = probedV6 ? "IPv4" : "IPv6";
    if (others.empty())
        return Finding{Verdict::Pass,
                       {fmt::format("the trusted probe sees no {} address but loopback: the {} "
                                    "probes cover every way out",
                                    otherName, probedName)},
                       ""};
    return Finding{
        Verdict::Unproven,
        {fmt::format("the trusted probe sees {} address {} on the pod's interfaces{}: the probes "
                     "went over {} only, and whether the network policy engine filters {} "
                     "(link-local included) is not proven{}",
                     otherName, others.front(),
                     others.size() > 1 ? fmt::format(" ({} in all)", others.size()) : "",
                     probedName, otherName,
                     probedV6 ? ""
                              : "; a cluster that gives pods no IPv6 address (e.g. the CNI "
                                "tuning sysctl net.ipv6.conf.all.disable_ipv6=1) leaves "
                                "nothing to prove")},
        ""};
}

}  // namespace rossoctl::verify
