// Attack 54 E1 against the local cluster: kube-router filters IPv4 only, so a pod with an IPv6
// address reaches other pods and the node over link-local IPv6 while every IPv4 probe is
// refused. The cluster gives pods no IPv6; this pod turns it back on (an unsafe sysctl the
// local kubelet allows), and verify must not call its egress denied.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "verify_report.hpp"

using nlohmann::json;

// [outage]: its privileged namespace leaves every sandbox verified meanwhile unproven (K1).
TEST_CASE("sandbox verify: a pod with IPv6 where only IPv4 is probed leaves egress unproven",
          "[verify-ipv6][outage]") {
    harness::TestNamespace project("verify54-ipv6", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    // Unsafe sysctls are refused by Pod Security baseline and restricted alike.
    auto labelled = harness::run({harness::kubectlPath(), "--kubeconfig", harness::kubeconfigPath(),
                                  "label", "namespace", ns,
                                  "pod-security.kubernetes.io/enforce=privileged", "--overwrite"});
    INFO(labelled.out << labelled.err);
    REQUIRE(labelled.exitCode == 0);
    json box = harness::smallSandbox(ns, "dual");
    box["spec"]["podTemplate"]["spec"]["securityContext"]["sysctls"] =
        json::array({{{"name", "net.ipv6.conf.all.disable_ipv6"}, {"value", "0"}}});
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "dual"); }, 180));
    const auto [result, report] = harness::verifyTrusted(ns, "dual");
    INFO(result.out << result.err);
    const json& egress = harness::checkNamed(report, "egress");
    // The IPv4 probe was refused; the IPv6 link-local address is what keeps it from a pass.
    CHECK(egress["live"]["result"] == "unproven");
    CHECK_THAT(harness::evidenceOf(egress),
               Catch::Contains("the trusted probe sees IPv6 address fe80:") &&
                   Catch::Contains("went over IPv4 only"));
    CHECK(result.exitCode == 3);
}
