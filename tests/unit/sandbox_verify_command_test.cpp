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
    CHECK(checks.size() == 4);
    for (const auto& [id, check] : checks.items()) {
        INFO(id << ": " << check.dump());
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

TEST_CASE("sandbox verify: an image with no egress tool leaves egress unproven (exit 3)",
          "[verify][command]") {
    Listener control;
    TestHost host;
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
