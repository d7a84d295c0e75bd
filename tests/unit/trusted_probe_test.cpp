#include <catch2/catch.hpp>

#include "kube_fakes.hpp"
#include "rossoctl/verify/probe_site.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using namespace rossoctl::verify;
using nlohmann::json;
using rossoctl::testing::ClientFixture;

namespace {

json pod(const json& ephemeralStatuses = json::array(),
         const json& ephemeralContainers = json::array()) {
    return {{"metadata",
             {{"name", "orders-pod"},
              {"namespace", "team1"},
              {"uid", "pod-uid"},
              {"resourceVersion", "5"}}},
            {"spec", {{"ephemeralContainers", ephemeralContainers}}},
            {"status", {{"phase", "Running"}, {"ephemeralContainerStatuses", ephemeralStatuses}}}};
}

json probeStatus(const json& state) {
    return {{"name", "rossoctl-probe-1"}, {"state", state}};
}

std::string list(const json& items) {
    return json{{"metadata", {{"resourceVersion", "7"}}}, {"items", items}}.dump();
}

std::string event(const std::string& type, const json& object) {
    return json{{"type", type}, {"object", object}}.dump() + "\n";
}

TrustedProbeOptions options() {
    TrustedProbeOptions trusted;
    trusted.image = "busybox:1.36";
    trusted.name = "rossoctl-probe-1";
    return trusted;
}

// The probe as the API server stores it: as written, with the defaults it fills in.
json storedProbe() {
    json container = trustedProbeContainer("rossoctl-probe-1", options());
    container["imagePullPolicy"] = "IfNotPresent";
    container["terminationMessagePath"] = "/dev/termination-log";
    return container;
}

json runningPod(const json& stored = json::array({storedProbe()})) {
    return pod(json::array({probeStatus({{"running", {{"startedAt", "x"}}}})}), stored);
}

}  // namespace

TEST_CASE("the trusted probe container passes PodSecurity restricted and ends on its own",
          "[trusted-probe]") {
    auto trusted = options();
    trusted.lifetime = std::chrono::seconds(300);
    const json container = trustedProbeContainer("rossoctl-probe-1", trusted);
    CHECK(container["image"] == "busybox:1.36");
    // Not in the agent's process namespace: the agent could write into the probe's output.
    CHECK_FALSE(container.contains("targetContainerName"));
    // PID 1 with a TERM handler: a bare sleep made the pod's deletion wait its grace period.
    CHECK(container["command"] ==
          json::array({"sh", "-c", "trap 'exit 0' TERM; sleep 300 & wait"}));
    const auto& security = container["securityContext"];
    CHECK(security["allowPrivilegeEscalation"] == false);
    CHECK(security["runAsNonRoot"] == true);
    CHECK(security["runAsUser"] != 0);
    CHECK(security["capabilities"]["drop"] == json::array({"ALL"}));
    CHECK(security["seccompProfile"]["type"] == "RuntimeDefault");
    CHECK_FALSE(container.contains("resources"));  // not allowed on ephemeral containers
}

TEST_CASE("the trusted probe is added through pods/ephemeralcontainers and waited for",
          "[trusted-probe]") {
    ClientFixture fixture;
    fixture.server.reply(200, pod().dump());                // PATCH
    fixture.server.reply(200, list(json::array({pod()})));  // LIST: not reported yet
    fixture.server.stream(
        {event("MODIFIED",
               pod(json::array({probeStatus({{"waiting", {{"reason", "ContainerCreating"}}}})}))),
         event("MODIFIED", runningPod())});
    const auto site = startTrustedProbe(*fixture.client, fixture.clock, pod(), options());
    CHECK(site.container == "rossoctl-probe-1");
    CHECK(site.trusted());
    CHECK(site.label() ==
          "ran in a trusted probe container (busybox:1.36), not with the pod's tools");
    const auto& patch = fixture.server.requests.at(0);
    CHECK(patch.method == "PATCH");
    CHECK(patch.url.find("/api/v1/namespaces/team1/pods/orders-pod/ephemeralcontainers") !=
          std::string::npos);
    bool strategic = false;
    for (const auto& [key, value] : patch.headers)
        strategic = strategic || value == "application/strategic-merge-patch+json";
    CHECK(strategic);
    const json body = json::parse(patch.body);
    CHECK(body["spec"]["ephemeralContainers"][0]["name"] == "rossoctl-probe-1");
    CHECK_FALSE(body["spec"]["ephemeralContainers"][0].contains("targetContainerName"));
}

TEST_CASE("RBAC refusing pods/ephemeralcontainers is an error, not an unproven verdict",
          "[trusted-probe]") {
    ClientFixture fixture;
    fixture.server.reply(403, json{{"kind", "Status"},
                                   {"code", 403},
                                   {"reason", "Forbidden"},
                                   {"message",
                                    "pods \"orders-pod\" is forbidden: User \"dev\" "
                                    "cannot patch resource \"pods/ephemeralcontainers\""}}
                                  .dump());
    try {
        startTrustedProbe(*fixture.client, fixture.clock, pod(), options());
        FAIL("no error");
    } catch (const TrustedProbeUnavailable&) {
        FAIL("forbidden must not be reported as unavailable");
    } catch (const Error& error) {
        CHECK_THAT(error.what(), Catch::Contains("patch pods/ephemeralcontainers") &&
                                     Catch::Contains("without --trusted-probe"));
    }
}

TEST_CASE("a cluster without ephemeral containers leaves the live probes unproven",
          "[trusted-probe]") {
    SECTION("the subresource is not served") {
        ClientFixture fixture;
        fixture.server.reply(404,
                             json{{"kind", "Status"},
                                  {"code", 404},
                                  {"reason", "NotFound"},
                                  {"message", "the server could not find the requested resource"}}
                                 .dump());
        CHECK_THROWS_AS(startTrustedProbe(*fixture.client, fixture.clock, pod(), options()),
                        TrustedProbeUnavailable);
    }
    SECTION("the node never reports the container") {
        ClientFixture fixture;
        fixture.server.latency = std::chrono::seconds(60);  // the LIST uses up the wait
        auto trusted = options();
        trusted.startTimeout = std::chrono::seconds(60);
        fixture.server.reply(200, pod().dump());
        fixture.server.reply(200, list(json::array({pod()})));
        CHECK_THROWS_WITH(
            startTrustedProbe(*fixture.client, fixture.clock, pod(), trusted),
            Catch::Contains("did not start within 60s") && Catch::Contains("unproven"));
    }
    SECTION("the image cannot be pulled") {
        ClientFixture fixture;
        fixture.server.reply(200, pod().dump());
        fixture.server.reply(
            200, list(json::array({pod(json::array({probeStatus(
                     {{"waiting",
                       {{"reason", "ImagePullBackOff"}, {"message", "no such image"}}}})}))})));
        CHECK_THROWS_WITH(startTrustedProbe(*fixture.client, fixture.clock, pod(), options()),
                          Catch::Contains("ImagePullBackOff: no such image"));
    }
    SECTION("the pod is replaced while waiting") {
        ClientFixture fixture;
        json other = pod();
        other["metadata"]["uid"] = "new-uid";
        fixture.server.reply(200, pod().dump());
        fixture.server.reply(200, list(json::array({other})));
        CHECK_THROWS_AS(startTrustedProbe(*fixture.client, fixture.clock, pod(), options()),
                        TrustedProbeUnavailable);
    }
}

TEST_CASE("review46: a probe the server stored other than written is not trusted",
          "[trusted-probe]") {
    // A mutating webhook puts the probe into the agent's PID namespace, as the agent's user,
    // or swaps its image: the agent could write its output, so nothing it says is a denial.
    std::vector<std::pair<std::string, json>> changes;
    for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{
             {"targetContainerName", "agent"},
             {"image", "busybox:latest"},
             {"command", {"sh", "-c", "trap 'exit 0' TERM; sleep 1 & wait"}},
             {"env", {{{"name", "PATH"}, {"value", "/agent/bin"}}}}}) {
        json stored = storedProbe();
        stored[key] = value;
        changes.emplace_back(key, json::array({stored}));
    }
    json otherUser = storedProbe();
    otherUser["securityContext"]["runAsUser"] = 1000;
    changes.emplace_back("runAsUser", json::array({otherUser}));
    changes.emplace_back("missing", json::array());
    for (const auto& [what, stored] : changes) {
        INFO(what);
        ClientFixture fixture;
        fixture.server.reply(200, pod().dump());
        fixture.server.reply(200, list(json::array({runningPod(stored)})));
        CHECK_THROWS_AS(startTrustedProbe(*fixture.client, fixture.clock, pod(), options()),
                        TrustedProbeUnavailable);
    }
    for (const std::string field : {"shareProcessNamespace", "hostPID"}) {
        INFO(field);
        ClientFixture fixture;
        json shared = runningPod();
        shared["spec"][field] = true;
        fixture.server.reply(200, pod().dump());
        fixture.server.reply(200, list(json::array({shared})));
        CHECK_THROWS_WITH(startTrustedProbe(*fixture.client, fixture.clock, pod(), options()),
                          Catch::Contains("shares a PID namespace") && Catch::Contains("unproven"));
    }
    ClientFixture fixture;  // as written: trusted
    fixture.server.reply(200, pod().dump());
    fixture.server.reply(200, list(json::array({runningPod()})));
    CHECK(startTrustedProbe(*fixture.client, fixture.clock, pod(), options()).trusted());
}

TEST_CASE("evidence says where a live probe ran", "[trusted-probe]") {
    Finding finding{Verdict::Pass, {"could not connect"}, "curl"};
    noteProbeSite(finding, podProbeSite("agent"));
    CHECK(finding.evidence.front() ==
          "ran in the pod, with the pod's own tools: from the pod, forgeable (the agent shares "
          "its processes and user)");
    CHECK(finding.forgeable);
    noteProbeSite(finding, ProbeSite{"rossoctl-probe-1", "busybox:1.36"});
    CHECK(finding.evidence.front() ==
          "ran in a trusted probe container (busybox:1.36), not with the pod's tools");
    CHECK_FALSE(finding.forgeable);
}

TEST_CASE("a denial from the pod's own PID space is unproven; a connection still fails",
          "[trusted-probe]") {
    // Issue 35 point 6: an agent of the same user takes the probe's stdout and writes the
    // denial markers first, so such a denial is what the agent chose to say.
    Finding denied{Verdict::Pass, {"curl could not connect"}, "curl"};
    noteProbeSite(denied, podProbeSite("agent"));
    const Finding fromPod = withoutForgeableDenial(denied);
    CHECK(fromPod.verdict == Verdict::Unproven);
    CHECK_THAT(fromPod.evidence.back(),
               Catch::Contains("pidfd_getfd") && Catch::Contains("--trusted-probe"));
    Finding connected{Verdict::Fail, {"curl connected"}, "curl"};
    noteProbeSite(connected, podProbeSite("agent"));
    CHECK(withoutForgeableDenial(connected).verdict == Verdict::Fail);
    Finding trusted{Verdict::Pass, {"curl could not connect"}, "curl"};
    noteProbeSite(trusted, ProbeSite{"rossoctl-probe-1", "curlimages/curl:8"});
    CHECK(withoutForgeableDenial(trusted).verdict == Verdict::Pass);
}

TEST_CASE("verify ends the trusted probe it started: a later verify finds no unbounded probe",
          "[trusted-probe]") {
    SECTION("its PID 1 gets SIGTERM in the probe's own container") {
        rossoctl::testing::TestHost host;
        host.server.onExec("team1", "orders-pod", rossoctl::testing::ExecScript{});
        endTrustedProbe(host.context().client(), "team1", "orders-pod",
                        ProbeSite{"rossoctl-probe-1", "busybox:1.36"});
        REQUIRE(host.server.execs.size() == 1);
        CHECK(host.server.execs[0].pod == "team1/orders-pod");
        CHECK(host.server.execs[0].container == "rossoctl-probe-1");
        CHECK(host.server.execs[0].command == std::vector<std::string>{"sh", "-c", "kill -TERM 1"});
    }
    SECTION("a probe in the pod's own container is not a container of verify's: left alone") {
        rossoctl::testing::TestHost host;
        endTrustedProbe(host.context().client(), "team1", "orders-pod", podProbeSite("agent"));
        CHECK(host.server.execs.empty());
    }
    SECTION("a pod already gone is no error: the probe's lifetime ends it") {
        rossoctl::testing::TestHost host;  // every exec is refused with 404
        CHECK_NOTHROW(endTrustedProbe(host.context().client(), "team1", "orders-pod",
                                      ProbeSite{"rossoctl-probe-1", "busybox:1.36"}));
    }
}
