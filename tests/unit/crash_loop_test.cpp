// walk5 J1: an agent whose container keeps exiting is not ready. `agents wait` took the Ready
// blip between two restarts (or after waiting out the back-off) for success; it now stops with
// "keeps exiting (exit 3, 3 restarts)", and a healthy pod still counts at once, or once it has
// stayed up for a moment after its start.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/model/pod_failure.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;
using rossoctl::testing::watchEvent;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
// FakeClock's wall time: 1'700'000'000 s.
const std::string kNow = "2023-11-14T22:13:20Z";
const std::string kHourAgo = "2023-11-14T21:13:20Z";

json sandbox(bool ready) {
    json object = {{"apiVersion", "agents.x-k8s.io/v1beta1"},
                   {"kind", "Sandbox"},
                   {"metadata",
                    {{"name", "dies"},
                     {"namespace", "team1"},
                     {"uid", "uid-dies"},
                     {"resourceVersion", "5"},
                     {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}},
                   {"status",
                    {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
                     {"conditions",
                      {{{"type", "Ready"},
                        {"status", ready ? "True" : "False"},
                        {"reason", ready ? "DependenciesReady" : "DependenciesNotReady"}}}}}}};
    return object;
}

// The sandbox's pod with one container status `agent`; Ready when the container runs.
json pod(const json& state, int restarts, const json& lastState = json::object()) {
    const bool running = state.contains("running");
    return {
        {"metadata",
         {{"name", "dies"},
          {"namespace", "team1"},
          {"uid", "pod-uid"},
          {"resourceVersion", "7"},
          {"creationTimestamp", "2023-11-14T22:00:05Z"},
          {"labels", {{"agents.x-k8s.io/sandbox-name-hash", "abc"}}},
          {"ownerReferences", {{{"kind", "Sandbox"}, {"uid", "uid-dies"}, {"controller", true}}}}}},
        {"status",
         {{"phase", "Running"},
          {"conditions", {{{"type", "Ready"}, {"status", running ? "True" : "False"}}}},
          {"containerStatuses",
           {{{"name", "agent"},
             {"image", "busybox:1.36"},
             {"restartCount", restarts},
             {"state", state},
             {"lastState", lastState}}}}}}};
}

json runningSince(const std::string& when) {
    return {{"running", {{"startedAt", when}}}};
}

json exited(int code, const std::string& reason = "Error") {
    return {{"terminated", {{"exitCode", code}, {"reason", reason}}}};
}

json backingOff() {
    return {{"waiting", {{"reason", "CrashLoopBackOff"}, {"message", "back-off 40s"}}}};
}

}  // namespace

TEST_CASE("a container that keeps exiting is named with its exit code and restarts",
          "[wait][crashloop]") {
    CHECK(model::podCrashLoop(pod(backingOff(), 3, exited(3))) ==
          "container agent keeps exiting (exit 3, 3 restarts)");
    CHECK(model::podCrashLoop(pod(exited(137, "OOMKilled"), 1)) ==
          "container agent keeps exiting (OOMKilled, exit 137, 1 restart)");
    // It is a start failure, as an image that cannot be pulled is.
    CHECK(model::podStartFailure(pod(backingOff(), 3, exited(3))));
    // The first exit is restarted at once; a container running again is not a loop (yet).
    CHECK_FALSE(model::podCrashLoop(pod(exited(3), 0)));
    CHECK_FALSE(model::podCrashLoop(pod(runningSince(kNow), 3, exited(3))));
    CHECK_FALSE(model::podCrashLoop(json::object()));
}

TEST_CASE("a pod counts as up once its containers have run a moment, longer after a crash",
          "[wait][crashloop]") {
    using std::chrono::seconds;
    const auto now = std::chrono::system_clock::time_point(seconds(1'700'000'000));
    CHECK(model::podSettledAt(pod(runningSince(kNow), 0)) == now + model::kSettle);
    CHECK(model::podSettledAt(pod(runningSince(kNow), 3, exited(3))) ==
          now + model::kSettleAfterCrash);
    CHECK(model::podSettledAt(pod(runningSince(kHourAgo), 3, exited(3))) < now);
    CHECK(model::podSettledAt(json::object()) == std::chrono::system_clock::time_point{});
}

TEST_CASE("agents wait: the Ready blip between two restarts is not ready; the loop is an error",
          "[wait][crashloop][agents]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.latency = std::chrono::milliseconds(200);
    host.server.onJson("GET", kSandboxes + "/dies", 200, sandbox(true));
    // Read the moment the container started for the fourth time: Ready, for now.
    host.server.onJson("GET", kPods, 200, list({pod(runningSince(kNow), 3, exited(3))}));
    host.server.onStream("GET", kPods + "?watch=true",
                         {watchEvent("MODIFIED", pod(backingOff(), 3, exited(3)))});
    const auto started = host.clock.monotonic();
    CHECK(host.run({"agents", "wait", "dies", "--timeout", "10m"}) == kExitError);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(host.out.str().find("is ready") == std::string::npos);
    CHECK(err.find("sandbox.agents.x-k8s.io/dies will not become ready") != std::string::npos);
    CHECK(err.find("pod dies: container agent keeps exiting (exit 3, 3 restarts)") !=
          std::string::npos);
    CHECK(host.clock.monotonic() - started < std::chrono::seconds(10));  // not the 10m
}

TEST_CASE("agents wait: a sandbox not Ready whose pod is in CrashLoopBackOff fails at the check",
          "[wait][crashloop][agents]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.latency = std::chrono::milliseconds(200);
    host.server.onJson("GET", kSandboxes + "/dies", 200, sandbox(false));
    host.server.onJson("GET", kSandboxes, 200, list({sandbox(false)}));
    host.server.onStream("GET", kSandboxes + "?watch=true", {});
    host.server.onJson("GET", kPods, 200, list({pod(backingOff(), 2, exited(3))}));
    const auto started = host.clock.monotonic();
    CHECK(host.run({"agents", "wait", "dies", "--timeout", "10m"}) == kExitError);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.find("keeps exiting (exit 3, 2 restarts)") != std::string::npos);
    CHECK(host.clock.monotonic() - started < std::chrono::seconds(10));  // not the 10m
}

TEST_CASE("agents wait: a healthy pod is ready at once, or once it has stayed up a moment",
          "[wait][crashloop][agents]") {
    SECTION("running for an hour, after a crash long ago") {
        TestHost host;
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes + "/dies", 200, sandbox(true));
        host.server.onJson("GET", kPods, 200, list({pod(runningSince(kHourAgo), 1, exited(1))}));
        CHECK(host.run({"agents", "wait", "dies"}) == 0);
        CHECK(host.out.str() == "sandbox.agents.x-k8s.io/dies is ready (DependenciesReady)\n");
        CHECK(host.server.requestsTo("GET", kPods).size() == 1);  // no wait for the pod
    }
    SECTION("started just now") {
        TestHost host;
        host.serveSandboxGroup();
        host.server.latency = std::chrono::milliseconds(200);
        host.server.onJson("GET", kSandboxes + "/dies", 200, sandbox(true));
        host.server.onJson("GET", kSandboxes, 200, list({sandbox(true)}));
        host.server.onJson("GET", kPods, 200, list({pod(runningSince(kNow), 0)}));
        host.server.onStream("GET", kPods + "?watch=true", {});
        const auto started = host.clock.monotonic();
        CHECK(host.run({"agents", "wait", "dies", "--timeout", "2m"}) == 0);
        INFO(host.err.str());
        CHECK(host.out.str() == "sandbox.agents.x-k8s.io/dies is ready (DependenciesReady)\n");
        CHECK(host.clock.monotonic() - started >= model::kSettle);
        CHECK(host.clock.monotonic() - started < std::chrono::seconds(8));
    }
}
