// A trusted probe an earlier verify ended is still "running" in the pod's status for a second
// (the kubelet reports it late); the node then answers an exec into it with a 500 "container
// not found". Found in stop 53: the next verify waited that out as an outage for 60 s and
// ended "the run broke" (exit 1).
#include <catch2/catch.hpp>

#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;

namespace {

// The pod as the API server still reports it: an earlier run's probe, in another image, running.
json podWithEndedProbe(const std::string& uid) {
    json pod = hardenedPod(uid);
    pod["spec"]["ephemeralContainers"] =
        json::array({{{"name", "rossoctl-probe-0ld0ne"},
                      {"image", "curlimages/curl:8"},
                      {"command", {"sh", "-c", "trap 'exit 0' TERM; sleep 120 & wait"}},
                      {"securityContext",
                       {{"allowPrivilegeEscalation", false},
                        {"capabilities", {{"drop", {"ALL"}}}},
                        {"runAsNonRoot", true},
                        {"runAsUser", 65534},
                        {"runAsGroup", 65534},
                        {"readOnlyRootFilesystem", true},
                        {"seccompProfile", {{"type", "RuntimeDefault"}}}}}}});
    pod["status"]["ephemeralContainerStatuses"] = json::array(
        {{{"name", "rossoctl-probe-0ld0ne"}, {"state", {{"running", json::object()}}}}});
    return pod;
}

}  // namespace

TEST_CASE(
    "an ephemeral container that ended after the pod was read is no outage and no limit "
    "to prove",
    "[verify][trusted-probe]") {
    TestHost host;
    serveHardened(host, "curl", sandbox(), podWithEndedProbe("pod-uid-1"),
                  hardenedPod("pod-uid-2"));
    testing::ExecScript gone;
    gone.handshakeStatus = 500;
    gone.refusalBody = "container not found (\"rossoctl-probe-0ld0ne\")";
    host.server.onExecIn("team1", "orders", "rossoctl-probe-0ld0ne", gone);
    const int exitCode = runVerifyJson(host);
    INFO(host.out.str() << host.err.str());
    const json checks = verdicts(testing::printedJson(host.out.str()));
    // Exit 3 only for the forgeable egress (no --trusted-probe here), never 1 for the run.
    CHECK(exitCode == 3);
    CHECK_FALSE(contains(host.err.str(), "the run broke"));
    CHECK(checks["limits"]["result"] == "pass");
    CHECK(contains(checks["limits"]["live"]["evidence"].dump(),
                   "ephemeral container rossoctl-probe-0ld0ne: ended before it was read: nothing "
                   "to limit"));
    CHECK(checks["nothing-survives"]["result"] == "pass");
    CHECK(contains(checks["nothing-survives"]["live"]["evidence"].dump(),
                   "ephemeral container rossoctl-probe-0ld0ne ended before it was read"));
    // Each container was asked once: no retries of an answer that will not change.
    size_t asked = 0;
    for (const auto& session : host.server.execs)
        if (session.container == "rossoctl-probe-0ld0ne") ++asked;
    CHECK(asked == 2);  // its cgroup and its seccomp mode
}

TEST_CASE("an agent container the node no longer finds leaves its boundary unproven",
          "[verify][trusted-probe]") {
    TestHost host;
    serveHardened(host, "curl");
    testing::ExecScript gone;
    gone.handshakeStatus = 500;
    gone.refusalBody = "container not found (\"agent\")";
    host.server.onExecIn("team1", "orders", "agent", gone);
    const int exitCode = runVerifyJson(host);
    INFO(host.out.str() << host.err.str());
    const json checks = verdicts(testing::printedJson(host.out.str()));
    CHECK(exitCode == 3);
    CHECK(checks["limits"]["result"] != "pass");
}
