// Attack 54 E1: the egress probes go over one address family; an address of the other on the
// pod's interfaces (link-local IPv6 where kube-router filters IPv4 only) is a way out nothing
// tested, so the live half is unproven, never pass.
#include <catch2/catch.hpp>

#include "rossoctl/verify/isolation.hpp"

using namespace rossoctl::verify;

namespace {

// What the isolation probe prints for these addresses (IPv4 from fib_trie, IPv6 from
// /proc/net/if_inet6's 32 hex digits).
IsolationFacts addresses(const std::string& lines) {
    ProbeOutput output;
    output.stdoutText = lines + "rossoctl-done=1\n";
    return parseIsolationFacts(output);
}

const std::string kLoopback =
    "rossoctl-local=127.0.0.1\nrossoctl-local6=00000000000000000000000000000001\n";
const std::string kPodV4 = "rossoctl-local=10.250.0.7\n";
const std::string kLinkLocal = "rossoctl-local6=fe80000000000000242b05fffe0505f0\n";
const std::string kGlobalV6 = "rossoctl-local6=fd000000000000000000000000000007\n";

bool says(const Finding& finding, const std::string& text) {
    for (const auto& line : finding.evidence)
        if (line.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("attack 54 E1: IPv6 on a pod probed over IPv4 leaves egress unproven", "[verify]") {
    const Finding v4Only =
        otherFamilyEgressLive(addresses(kLoopback + kPodV4), AddressFamily::IPv4);
    CHECK(v4Only.verdict == Verdict::Pass);
    CHECK(says(v4Only, "sees no IPv6 address but loopback"));

    const Finding linkLocal =
        otherFamilyEgressLive(addresses(kLoopback + kPodV4 + kLinkLocal), AddressFamily::IPv4);
    CHECK(linkLocal.verdict == Verdict::Unproven);
    CHECK(says(linkLocal, "sees IPv6 address fe80::242b:5ff:fe05:5f0 on the pod's interfaces"));
    CHECK(says(linkLocal, "went over IPv4 only"));
    CHECK(says(linkLocal, "net.ipv6.conf.all.disable_ipv6=1"));

    const Finding two = otherFamilyEgressLive(
        addresses(kLoopback + kPodV4 + kLinkLocal + kGlobalV6), AddressFamily::IPv4);
    CHECK(two.verdict == Verdict::Unproven);
    CHECK(says(two, "(2 in all)"));
}

TEST_CASE("attack 54 E1: the other way round, and a pod of both families", "[verify]") {
    // An IPv6 pod probed over IPv6 with an IPv4 address beside it.
    const Finding v4Beside =
        otherFamilyEgressLive(addresses(kLoopback + kGlobalV6 + kPodV4), AddressFamily::IPv6);
    CHECK(v4Beside.verdict == Verdict::Unproven);
    CHECK(says(v4Beside, "sees IPv4 address 10.250.0.7"));
    CHECK(otherFamilyEgressLive(addresses(kLoopback + kGlobalV6 + kLinkLocal), AddressFamily::IPv6)
              .verdict == Verdict::Pass);
    // Dual stack: the target's one family was probed, the other was not.
    CHECK(otherFamilyEgressLive(addresses(kLoopback + kPodV4 + kGlobalV6), AddressFamily::Any)
              .verdict == Verdict::Unproven);
    CHECK(otherFamilyEgressLive(addresses(kLoopback + kPodV4), AddressFamily::Any).verdict ==
          Verdict::Pass);
}

TEST_CASE("attack 54 E1: addresses not read are unproven", "[verify]") {
    IsolationFacts none;
    none.failure = "the probe ran out of time";
    const Finding unread = otherFamilyEgressLive(none, AddressFamily::IPv4);
    CHECK(unread.verdict == Verdict::Unproven);
    CHECK(says(unread, "the probe ran out of time"));
}
