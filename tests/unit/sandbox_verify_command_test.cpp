// sandbox verify end to end, offline: the API objects of a hardened sandbox, a pod that answers
// each probe from its command line, and the positive control through the injected resolver.
#include <catch2/catch.hpp>

#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::Listener;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;

using namespace rossoctl::testing::verify_fixtures;

TEST_CASE("sandbox verify: every help example parses and validates", "[verify][command]") {
    testing::checkHelpExamples({"sandbox", "verify"});
}

TEST_CASE("sandbox verify rejects bad input before sending anything", "[verify][command]") {
    testing::checkUsageErrors({
        {"sandbox", "verify"},
        {"sandbox", "verify", "Orders!"},
        {"sandbox", "verify", "orders", "--all"},
        {"sandbox", "verify", "orders", "--egress-target", "ftp://example.com"},
        {"sandbox", "verify", "orders", "-o", "yaml"},
        {"sandbox", "verify", "orders", "--trusted-probe", "busy box"},
        {"sandbox", "verify", "orders", "--timeout", "soon"},
    });
}

TEST_CASE("sandbox verify of a hardened sandbox: every check but the forgeable egress passes",
          "[verify][command]") {
    Listener control;
    TestHost host;
    serveHardened(host, "curl");
    host.resolver.addresses["control.test"] = {"127.0.0.1"};
    const std::string target = "http://control.test:" + std::to_string(control.port) + "/";
    const int exitCode =
        host.run({"sandbox", "verify", "orders", "--egress-target", target, "-o", "json"});
    INFO(host.out.str() << host.err.str());
    // The egress denial came from the pod's own PID space: without --trusted-probe it is no
    // proof (issue 35 point 6).
    CHECK(exitCode == 3);
    const json report = testing::printedJson(host.out.str());
    CHECK(report["result"] == "unproven");
    const json checks = verdicts(report);
    CHECK(checks.size() == 7);
    for (const auto& [id, check] : checks.items()) {
        INFO(id << ": " << check.dump());
        // No runtime or registries required: reported (the node's kernel, a tag), not judged.
        if (id == "kernel-isolation" || id == "image-provenance")
            CHECK(check["required"] == false);
        else
            CHECK(check["result"] == (id == "egress" ? "unproven" : "pass"));
    }
    // The control looked the target up through the Context's resolver, not the system's.
    CHECK(host.resolver.asked == std::vector<std::string>{"control.test"});
    // The pod was deleted once, with its UID as precondition, to prove nothing survives.
    auto deletes = host.server.requestsTo("DELETE", kPods + "/orders");
    REQUIRE(deletes.size() == 1);
    CHECK(json::parse(deletes[0].body)["preconditions"]["uid"] == "pod-uid-1");
    CHECK(host.server.writes() == std::vector<std::string>{"DELETE " + kPods + "/orders"});
}

TEST_CASE("sandbox verify waits for a pod the controller is bringing back", "[verify][command]") {
    // CI: a verify whose restart was cut short left the pod deleted and the Sandbox still
    // Ready; the next verify failed at once ("has no pod named orders") instead of waiting.
    TestHost host;
    host.server.onJson("GET", kPods, 200, list({}));  // gone: answered first
    host.server.onJson("GET", kPods + "/orders", 200, hardenedPod("pod-uid-1"));  // not replaced
    serveHardened(host, "curl");
    CHECK(runVerifyJson(host, {"--no-restart"}) == 3);  // the egress seen from the pod: unproven
    INFO(host.err.str());
    CHECK(verdicts(testing::printedJson(host.out.str()))["limits"]["result"] == "pass");
    CHECK(host.server.writes().empty());
}

TEST_CASE("sandbox verify: an image with no egress tool leaves egress unproven (exit 3)",
          "[verify][command]") {
    Listener control;
    TestHost host;
    host.server.onJson("GET", kPods + "/orders", 200, hardenedPod("pod-uid-1"));  // not replaced
    serveHardened(host, "none");
    host.resolver.addresses["control.test"] = {"127.0.0.1"};
    const std::string target = "http://control.test:" + std::to_string(control.port) + "/";
    const int exitCode = host.run(
        {"sandbox", "verify", "orders", "--egress-target", target, "-o", "json", "--no-restart"});
    INFO(host.out.str() << host.err.str());
    CHECK(exitCode == 3);
    const json checks = verdicts(testing::printedJson(host.out.str()));
    CHECK(checks["egress"]["result"] == "unproven");
    CHECK(checks["egress"]["live"]["evidence"].dump().find("none of curl") != std::string::npos);
    CHECK(checks["nothing-survives"]["result"] == "unproven");  // --no-restart
    CHECK(checks["limits"]["result"] == "pass");
    CHECK(host.server.writes().empty());
}

TEST_CASE("sandbox verify: a missing sandbox, a refused read, a pod not running",
          "[verify][command]") {
    TestHost missing;
    missing.serveSandboxGroup();
    CHECK(missing.run({"sandbox", "verify", "ghost"}) == kExitError);
    CHECK(missing.err.str() ==
          "error: sandbox/ghost not found in namespace team1; run \"rossoctl sandbox list -n "
          "team1\"\n");

    TestHost forbidden;
    forbidden.serveSandboxGroup();
    forbidden.server.on("GET", kSandboxes + "/orders", 403,
                        statusBody(403, "Forbidden", "sandboxes \"orders\" is forbidden"));
    CHECK(forbidden.run({"sandbox", "verify", "orders"}) == kExitError);
    CHECK(contains(forbidden.err.str(), "sandboxes \"orders\" is forbidden"));
    CHECK(forbidden.server.writes().empty());

    TestHost pending;
    pending.serveSandboxGroup();
    pending.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
    json pod = hardenedPod("pod-uid-1");
    pod["status"]["phase"] = "Pending";
    pending.server.onJson("GET", kPods, 200, list({pod}));
    CHECK(pending.run({"sandbox", "verify", "orders"}) == kExitError);
    CHECK(contains(pending.err.str(), "in phase Pending, not Running"));
    CHECK(pending.server.execs.empty());

    TestHost none;  // --all in an empty namespace
    none.serveSandboxGroup();
    none.server.onJson("GET", kSandboxes, 200, list({}));
    CHECK(none.run({"sandbox", "verify", "--all"}) == kExitError);
    CHECK(contains(none.err.str(), "nothing to verify"));
}

TEST_CASE(
    "sandbox verify --require-runtime-class judges kernel isolation; the flags are checked "
    "first",
    "[verify][command][isolation]") {
    testing::checkUsageErrors({
        {"sandbox", "verify", "orders", "--require-runtime-class", "G Visor"},
        {"sandbox", "verify", "orders", "--junit", "/nonexistent-dir/verify.xml"},
        {"sandbox", "verify", "orders", "--sarif", "/"},
    });
    Listener control;
    TestHost host;
    serveHardened(host, "curl");
    host.resolver.addresses["control.test"] = {"127.0.0.1"};
    const std::string target = "http://control.test:" + std::to_string(control.port) + "/";
    const int exitCode =
        host.run({"sandbox", "verify", "orders", "--egress-target", target, "--no-restart",
                  "--require-runtime-class", "gvisor", "-o", "json"});
    INFO(host.out.str() << host.err.str());
    CHECK(exitCode == 3);
    const json kernel = verdicts(testing::printedJson(host.out.str()))["kernel-isolation"];
    CHECK(kernel["required"] == true);
    CHECK(kernel["result"] == "fail");
    CHECK(kernel["static"]["evidence"].dump().find(
              "spec.runtimeClassName is unset; --require-runtime-class requires gvisor") !=
          std::string::npos);
}

TEST_CASE("sandbox verify writes JSON, JUnit and SARIF from one run", "[verify][command]") {
    Listener control;
    testing::TempDir dir;
    TestHost host;
    serveHardened(host, "curl");
    host.resolver.addresses["control.test"] = {"127.0.0.1"};
    const std::string target = "http://control.test:" + std::to_string(control.port) + "/";
    const int exitCode =
        host.run({"sandbox", "verify", "orders", "--egress-target", target, "-o", "json", "--junit",
                  dir.file("verify.xml"), "--sarif", dir.file("verify.sarif")});
    INFO(host.out.str() << host.err.str());
    // Unproven: the egress denial came from the pod itself (no --trusted-probe).
    CHECK(exitCode == 3);
    CHECK(testing::printedJson(host.out.str())["result"] == "unproven");
    const std::string junit = testing::slurp(dir.file("verify.xml"));
    CHECK(junit.find("<testcase classname=\"rossoctl.sandbox.verify.team1.orders\" name=\"no "
                     "way to the host\"") != std::string::npos);
    const json sarif = json::parse(testing::slurp(dir.file("verify.sarif")));
    CHECK(sarif["version"] == "2.1.0");
    CHECK(sarif["runs"][0]["tool"]["driver"]["rules"].size() == 8);
    // One pod restart served all three.
    CHECK(host.server.requestsTo("DELETE", kPods + "/orders").size() == 1);
}

TEST_CASE("sandbox verify: a host-network pod's egress fails statically, whatever the policies",
          "[verify][command][isolation]") {
    // Found by a hostile reviewer: hostNetwork under default-deny gave egress "pass" on both
    // halves, though no NetworkPolicy selects a host-network pod.
    Listener control;
    TestHost host;
    json pod = hardenedPod("pod-uid-1");
    pod["spec"]["hostNetwork"] = true;
    serveHardened(host, "curl", sandbox(), pod);
    host.resolver.addresses["control.test"] = {"127.0.0.1"};
    const std::string target = "http://control.test:" + std::to_string(control.port) + "/";
    const int exitCode = host.run(
        {"sandbox", "verify", "orders", "--egress-target", target, "--no-restart", "-o", "json"});
    INFO(host.out.str() << host.err.str());
    CHECK(exitCode == 3);
    const json checks = verdicts(testing::printedJson(host.out.str()));
    CHECK(checks["egress"]["static"]["result"] == "fail");
    CHECK(checks["egress"]["static"]["evidence"][0] ==
          "pod: spec.hostNetwork: true: no NetworkPolicy selects a host-network pod, its egress "
          "is the node's");
}

TEST_CASE("sandbox verify: an --egress-target the project allows is unproven, not a fail",
          "[verify][command][isolation]") {
    // Found by a newcomer: a target on the allow-list gave egress "fail" beside a static
    // "within what the project allows".
    Listener control;
    TestHost host;
    const auto answers = hardenedPodAnswers("curl");
    serveHardened(host, "curl", sandbox(), hardenedPod("pod-uid-1"), hardenedPod("pod-uid-2"),
                  [answers](const std::vector<std::string>& command) {
                      if (command.size() > 2 && contains(command[2], "rossoctl-tool"))
                          return testing::execRan(
                              "rossoctl-tool=curl\nrossoctl-curl=http:200 connect:0.000300 "
                              "ip:127.0.0.1\nrossoctl-exit=0\n",
                              "", 0);
                      return answers(command);
                  });
    host.server.onJson("GET", "/api/v1/namespaces/team1", 200,
                       {{"metadata",
                         {{"name", "team1"},
                          {"annotations",
                           {{"rossoctl.dev/allowed-egress",
                             R"({"dns":true,"cidrs":["127.0.0.0/8"],"hosts":[]})"}}}}}});
    const std::string target = "http://127.0.0.1:" + std::to_string(control.port) + "/";
    const int exitCode = host.run(
        {"sandbox", "verify", "orders", "--egress-target", target, "--no-restart", "-o", "json"});
    INFO(host.out.str() << host.err.str());
    CHECK(exitCode == 3);
    const json egress = verdicts(testing::printedJson(host.out.str()))["egress"];
    CHECK(egress["result"] == "unproven");
    CHECK(egress["live"]["evidence"].dump().find(
              "unproven: the target is on the allow-list (127.0.0.1 TCP " +
              std::to_string(control.port) + " is within the allowed 127.0.0.0/8") !=
          std::string::npos);
}

TEST_CASE("sandbox verify: a probe that floods its output is unproven, its prefix never parsed",
          "[verify][command][hostile]") {
    TestHost host;
    // The token probe's right answer, then more than any probe's cap: what a pod that prints
    // the compliant text first and then 1.5 GiB would send.
    const auto honest = hardenedPodAnswers("none");
    serveHardened(host, "none", sandbox(), hardenedPod("pod-uid-1"), hardenedPod("pod-uid-2"),
                  [honest](const std::vector<std::string>& command) {
                      auto script = honest(command);
                      if (command.size() > 2 && contains(command[2], "rossoctl-token"))
                          script.stdoutText += std::string(200 * 1024, 'A');
                      return script;
                  });
    const int exitCode = host.run({"sandbox", "verify", "orders", "-o", "json", "--no-restart"});
    INFO(host.out.str() << host.err.str());
    CHECK(exitCode == 3);
    const json checks = verdicts(testing::printedJson(host.out.str()));
    CHECK(checks["service-account-token"]["live"]["result"] == "unproven");
    CHECK(checks["service-account-token"]["live"]["evidence"].dump().find(
              "printed more than 65536 bytes") != std::string::npos);
}

TEST_CASE(
    "sandbox verify: a Service's external IP on the API server's address is read as a "
    "claim on the gate's target (review 58 G2)",
    "[verify][command][gate]") {
    TestHost host;
    host.server.onJson("GET", "/api/v1/services", 200,
                       list({json::parse(R"({"metadata": {"name": "decoy", "namespace": "team1"},
                              "spec": {"clusterIP": "10.96.0.21", "externalIPs": ["10.96.0.1"],
                                       "ports": [{"port": 443}]}})")}));
    host.server.onJson("GET", "/api/v1/namespaces/default/services/kubernetes", 200,
                       json::parse(R"({"metadata": {"name": "kubernetes", "namespace": "default"},
                                       "spec": {"clusterIP": "10.96.0.1",
                                                "clusterIPs": ["10.96.0.1"],
                                                "ports": [{"port": 443}]}})"));
    serveHardened(host, "curl");
    runVerifyJson(host, {"--no-restart"});
    INFO(host.out.str() << host.err.str());
    const json egress = verdicts(testing::printedJson(host.out.str()))["egress"];
    CHECK(egress["live"]["result"] == "unproven");
    CHECK_THAT(egress["live"]["evidence"].dump(),
               Catch::Contains("Service team1/decoy claims 10.96.0.1, the API server's address "
                               "the gate connects to, as an external IP"));
}

TEST_CASE("review 61 #7: an ephemeral container added while verify ran leaves limits unproven",
          "[verify][command][false-pass]") {
    // Read once, the pod showed none: one added a second later runs with no limits of its own,
    // and `kubectl debug` into the certified pod ran unbounded.
    for (const bool added : {false, true}) {
        TestHost host;
        json atEnd = hardenedPod("pod-uid-1");
        if (added) atEnd["spec"]["ephemeralContainers"] = json::array({{{"name", "dbg"}}});
        host.server.onJson("GET", kPods + "/orders", 200, atEnd);
        serveHardened(host, "curl");
        runVerifyJson(host, {"--no-restart"});
        const json limits = verdicts(testing::printedJson(host.out.str()))["limits"];
        INFO(limits.dump(2));
        CHECK(limits["result"] == (added ? "unproven" : "pass"));
        CHECK((limits["live"]["evidence"].dump().find(
                   "ephemeral container dbg added to pod orders while verify ran") !=
               std::string::npos) == added);
        // Review 64 H4: it reads a Secret through env, or the pod's volumes, as well.
        const json token = verdicts(testing::printedJson(host.out.str()))["service-account-token"];
        CHECK((token["live"]["evidence"].dump().find("ephemeral container dbg added") !=
               std::string::npos) == added);
    }
    // Replaced under verify: the pod read at the end is not the one judged.
    TestHost host;
    host.server.onJson("GET", kPods + "/orders", 200, hardenedPod("pod-uid-9"));
    serveHardened(host, "curl");
    runVerifyJson(host, {"--no-restart"});
    const json limits = verdicts(testing::printedJson(host.out.str()))["limits"];
    CHECK(limits["result"] == "unproven");
    CHECK_THAT(limits["live"]["evidence"].dump(),
               Catch::Contains("pod orders (uid pod-uid-…) is gone at the end of verify"));
    // Attack 64 R1: a project user's own pod in its place, adopted, was judged by no check.
    const json token = verdicts(testing::printedJson(host.out.str()))["service-account-token"];
    CHECK(token["result"] == "unproven");
    CHECK_THAT(token["live"]["evidence"].dump(), Catch::Contains("is gone at the end of verify"));
}
