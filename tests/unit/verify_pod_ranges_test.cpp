// Attack 63 (read): the nodes' spec.podCIDRs are not where every network plugin puts pods
// (Calico, Cilium's cluster pool and Antrea hand out addresses from pools of their own), and
// IPv6 pods often have global addresses: an allowed range there may hold a relay pod later.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <catch2/catch.hpp>
#include <string>

#include "rossoctl/model/egress.hpp"
#include "rossoctl/verify/checks.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::testing;

namespace {

// verify of the hardened sandbox in a project that allows `cidr`, on a node whose pod range is
// 10.250.0.0/24; `pools` the Calico IPPools served (null: the kind is not served), or those of
// the kind at `poolsPath`.
json egressWith(const std::string& cidr, const json& pools,
                const std::string& poolsPath = "/apis/crd.projectcalico.org/v1/ippools",
                const json& otherPod = nullptr) {
    namespace model = rossoctl::model;
    TestHost host;
    if (!otherPod.is_null())  // the cluster's pod list, read before the fixture's
        host.server.onJson(
            "GET", "/api/v1/pods", 200,
            verify_fixtures::list({verify_fixtures::hardenedPod("pod-uid-1"), otherPod}));
    host.server.onJson("GET", "/api/v1/namespaces/team1", 200,
                       {{"metadata",
                         {{"name", "team1"},
                          {"labels", {{"pod-security.kubernetes.io/enforce", "restricted"}}},
                          {"annotations",
                           {{model::kAllowedEgressAnnotation,
                             model::allowedEgressAnnotation(true, false, {cidr}, {}, {})}}}}}});
    json node = verify_fixtures::node();
    node["spec"]["podCIDRs"] = {"10.250.0.0/24"};
    host.server.onJson("GET", "/api/v1/nodes", 200, verify_fixtures::list({node}));
    if (!pools.is_null()) host.server.onJson("GET", poolsPath, 200, pools);
    verify_fixtures::serveHardened(host, "curl");
    verify_fixtures::runVerifyJson(host, {"--no-restart"});
    INFO(host.err.str());
    return verify_fixtures::verdicts(printedJson(host.out.str()))["egress"]["static"];
}

}  // namespace

TEST_CASE("attack 63: a network plugin's own pools count as the pod network",
          "[verify][false-pass]") {
    // Beside the node's range, and no plugin pool served: nothing there is a pod's.
    const json beside = egressWith("192.168.5.0/24", nullptr);
    CHECK_THAT(beside["evidence"].dump(),
               !Catch::Contains("which overlaps") && !Catch::Contains("where a pod may be given"));
    // Calico gives pods addresses from its IPPool, not from the node's range.
    const json calico = egressWith(
        "192.168.5.0/24",
        verify_fixtures::list({json::parse(
            R"({"metadata": {"name": "default-pool"}, "spec": {"cidr": "192.168.0.0/16"}})")}));
    CHECK(calico["result"] == "unproven");
    CHECK_THAT(calico["evidence"].dump(),
               Catch::Contains("the project allows 192.168.5.0/24, which overlaps") &&
                   Catch::Contains("default-pool (192.168.0.0/16)"));
    // A pool whose ranges verify does not read leaves the pod network unknown.
    const json odd = egressWith(
        "192.168.5.0/24",
        verify_fixtures::list({json::parse(R"({"metadata": {"name": "odd"}, "spec": {}})")}));
    CHECK(odd["result"] == "unproven");
    CHECK_THAT(odd["evidence"].dump(), Catch::Contains("odd names no range verify reads"));
}

TEST_CASE("review 64 M3: Antrea's start-end ranges, Cilium's pod pools and ENI addresses",
          "[verify][false-pass]") {
    // Antrea: a {start, end} range beside a CIDR was dropped, so its addresses were not pods'.
    const json antrea =
        egressWith("192.168.5.0/24", verify_fixtures::list({json::parse(R"({"metadata":
        {"name": "tenant-pool"}, "spec": {"ipRanges": [{"cidr": "10.99.0.0/24"},
        {"start": "192.168.5.10", "end": "192.168.5.20"}]}})")}),
                   "/apis/crd.antrea.io/v1beta1/ippools");
    CHECK(antrea["result"] == "unproven");
    CHECK_THAT(antrea["evidence"].dump(),
               Catch::Contains("tenant-pool names no range verify reads"));
    // Cilium multi-pool: a pod annotated for a CiliumPodIPPool gets an address from it.
    const json multi =
        egressWith("192.168.5.0/24", verify_fixtures::list({json::parse(R"({"metadata":
        {"name": "blue"}, "spec": {"ipv4": {"cidrs": ["192.168.0.0/16"], "maskSize": 27}}})")}),
                   "/apis/cilium.io/v2alpha1/ciliumpodippools");
    CHECK(multi["result"] == "unproven");
    CHECK_THAT(multi["evidence"].dump(),
               Catch::Contains("which overlaps") && Catch::Contains("blue (192.168.0.0/16)"));
    // ENI mode: the node's pod addresses are the keys of its pool, with no podCIDRs.
    const json eni = egressWith("192.168.5.0/24", verify_fixtures::list({json::parse(R"({"metadata":
        {"name": "node-1"}, "spec": {"ipam": {"pool": {"192.168.5.7": {"resource": "eni-1"}}}}})")}),
                                "/apis/cilium.io/v2/ciliumnodes");
    CHECK(eni["result"] == "unproven");
    CHECK_THAT(eni["evidence"].dump(), Catch::Contains("192.168.5.7/32"));
}

TEST_CASE("attack 63: pod ranges not known, an allowed global IPv6 range is unproven",
          "[verify][false-pass]") {
    namespace model = rossoctl::model;
    using namespace rossoctl::verify;
    const json pod =
        json::parse(R"({"metadata": {"name": "cs", "namespace": "team1"}, "spec": {}})");
    EgressInputs inputs;
    const json ns = {
        {"metadata",
         {{"annotations",
           {{model::kAllowedEgressAnnotation,
             model::allowedEgressAnnotation(true, false, {"2600:1f18::/32"}, {}, {})}}}}}};
    inputs.allowance = model::projectAllowance(ns);
    const Finding unknown = egressStatic(pod, verify_fixtures::policies(), inputs);
    CHECK(unknown.verdict == Verdict::Unproven);
    CHECK_THAT(fmt::format("{}", fmt::join(unknown.evidence, "\n")),
               Catch::Contains("the project allows 2600:1f18::/32, addresses where a pod may be "
                               "given one later"));
}

TEST_CASE("review 66 L1: a pod's address outside every range read leaves the pod network unknown",
          "[verify][false-pass]") {
    // An IPAM verify does not read (Kube-OVN's subnets, Whereabouts) gave this pod its address.
    const json elsewhere = json::parse(R"({"metadata": {"name": "ovn", "namespace": "team2",
        "uid": "ovn-uid"}, "spec": {"nodeName": "node-1", "containers": [{"name": "c",
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}]},
        "status": {"phase": "Running", "podIPs": [{"ip": "172.20.3.4"}]}})");
    const json unknown =
        egressWith("192.168.5.0/24", nullptr, "/apis/crd.projectcalico.org/v1/ippools", elsewhere);
    INFO(unknown.dump(2));
    CHECK(unknown["result"] == "unproven");
    CHECK_THAT(unknown["evidence"].dump(),
               Catch::Contains("where a pod may be given one later") &&
                   Catch::Contains("has address 172.20.3.4, outside every pod range read"));
    // An ended pod's stale address says nothing (review 68 L2).
    json ended = elsewhere;
    ended["status"]["phase"] = "Succeeded";
    CHECK_THAT(egressWith("192.168.5.0/24", nullptr, "/apis/crd.projectcalico.org/v1/ippools",
                          ended)["evidence"]
                   .dump(),
               !Catch::Contains("where a pod may be given"));
    // Inside the node's range: the ranges stand.
    json inside = elsewhere;
    inside["status"]["podIPs"] = {{{"ip", "10.250.0.9"}}};
    const json known =
        egressWith("192.168.5.0/24", nullptr, "/apis/crd.projectcalico.org/v1/ippools", inside);
    CHECK_THAT(known["evidence"].dump(),
               !Catch::Contains("which overlaps") && !Catch::Contains("where a pod may be given"));
}
