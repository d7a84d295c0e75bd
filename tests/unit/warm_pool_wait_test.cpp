// Waits on warm pools that know better (issue 21, point 8): `sandbox run --pool` taking a
// SandboxClaim and `sandbox pool --wait` stop with what keeps the pool's sandboxes from
// starting (quota, LimitRange, an image that cannot be pulled) instead of their time-out.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kExtensions = "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/team1";
const std::string kClaims = kExtensions + "/sandboxclaims";
const std::string kClaim = "rossoctl-run-x1";
const std::string kQuota =
    "pods \"pool-abc\" is forbidden: exceeded quota: sandbox-quota, requested: limits.cpu=500m, "
    "used: limits.cpu=4, limited: limits.cpu=4";
const app::run::RunPodShape kShape{app::run::kDefaultRunImage, "500m", "512Mi", "/workspace"};

json reconcilerError(const std::string& message) {
    return {{"type", "Ready"},
            {"status", "False"},
            {"reason", "ReconcilerError"},
            {"message", "Error seen: " + message}};
}

json poolSandbox(const json& ready) {
    return {{"metadata",
             {{"name", "pool-abc"},
              {"namespace", "team1"},
              {"uid", "uid-sandbox"},
              {"ownerReferences", {{{"kind", "SandboxWarmPool"}, {"uid", "uid-pool"}}}}}},
            {"status",
             {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
              {"conditions", json::array({ready})}}}};
}

json imagePullPod(const std::string& ownerUid, const json& labels, const json& annotations) {
    return {
        {"metadata",
         {{"name", "pool-abc"},
          {"namespace", "team1"},
          {"uid", "uid-pod"},
          {"labels", labels},
          {"annotations", annotations},
          {"ownerReferences", {{{"kind", "Sandbox"}, {"uid", ownerUid}, {"controller", true}}}}}},
        {"status",
         {{"phase", "Pending"},
          {"containerStatuses",
           {{{"name", "run"},
             {"image", "registry.invalid/python:3.12-slim"},
             {"state",
              {{"waiting",
                {{"reason", "ImagePullBackOff"}, {"message", "Back-off pulling image"}}}}}}}}}}};
}

void serveExtensions(TestHost& host) {
    host.server.on("GET", "/apis/extensions.agents.x-k8s.io", 200,
                   R"({"kind":"APIGroup","name":"extensions.agents.x-k8s.io",)"
                   R"("versions":[{"version":"v1beta1"}]})");
}

// `sandbox pool --wait`'s pool of the run's shape, `replicas` wanted and none ready yet.
void servePool(TestHost& host, int replicas) {
    serveExtensions(host);
    host.server.latency = std::chrono::milliseconds(200);
    const std::string name = app::run::warmPoolName(kShape);
    const json pool = {
        {"metadata",
         {{"name", name}, {"namespace", "team1"}, {"uid", "uid-pool"}, {"resourceVersion", "3"}}},
        {"status", {{"replicas", replicas}, {"readyReplicas", 0}}}};
    host.server.on("PATCH", kExtensions + "/sandboxtemplates/" + name, 200, "{}");
    host.server.onJson("PATCH", kExtensions + "/sandboxwarmpools/" + name, 200, pool);
    host.server.onJson("GET", kExtensions + "/sandboxwarmpools", 200, list({pool}));
    host.server.onStream("GET", kExtensions + "/sandboxwarmpools?watch=true", {});
}

// A warm pool of the run's shape, a claim the controller binds to sandbox pool-abc with
// `ready` as its Ready condition, and a quiet apiserver otherwise.
void serveClaim(TestHost& host, const json& ready) {
    serveExtensions(host);
    host.server.latency = std::chrono::milliseconds(200);
    const std::string pool = app::run::warmPoolName(kShape);
    host.server.onJson("GET", kExtensions + "/sandboxwarmpools/" + pool, 200,
                       app::run::sandboxWarmPoolManifest(kShape, 2));
    const json claim = {
        {"metadata", {{"name", kClaim}, {"namespace", "team1"}, {"resourceVersion", "7"}}},
        {"status", {{"sandbox", {{"name", "pool-abc"}}}, {"conditions", json::array({ready})}}}};
    host.server.onJson("POST", kClaims, 201, claim);
    host.server.onJson("GET", kClaims, 200, list({claim}));
    host.server.onStream("GET", kClaims + "?watch=true", {});
    host.server.on("DELETE", kClaims + "/" + kClaim, 200, "{}");
}

}  // namespace

TEST_CASE("sandbox run --pool: a claimed sandbox the quota refuses stops the run at once",
          "[wait][blocker][run]") {
    TestHost host;
    // The claim's Ready is its Sandbox's, forwarded by the claim controller.
    serveClaim(host, reconcilerError(kQuota));
    const auto started = host.clock.monotonic();
    CHECK(host.run({"sandbox", "run", "--pool", "--", "python", "-V"}) != 0);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.find("will not become ready: its pod cannot be created: " + kQuota) !=
          std::string::npos);
    CHECK(host.clock.monotonic() - started < std::chrono::seconds(10));  // not the 2m
    CHECK(host.server.requestsTo("DELETE", kClaims + "/" + kClaim).size() == 1);
}

TEST_CASE("sandbox run --pool: a claimed sandbox whose image cannot be pulled is named",
          "[wait][blocker][run]") {
    TestHost host;
    serveClaim(host, {{"type", "Ready"}, {"status", "False"}, {"reason", "DependenciesNotReady"}});
    host.server.onJson("GET", kSandboxes + "/pool-abc", 200,
                       poolSandbox({{"type", "Ready"}, {"status", "False"}}));
    host.server.onJson("GET", kPods, 200,
                       list({imagePullPod("uid-sandbox", json::object(), json::object())}));
    const auto started = host.clock.monotonic();
    CHECK(host.run({"sandbox", "run", "--pool", "--", "python", "-V"}) != 0);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.find("pod pool-abc: image registry.invalid/python:3.12-slim cannot be pulled "
                   "(ImagePullBackOff)") != std::string::npos);
    CHECK(host.clock.monotonic() - started < std::chrono::seconds(10));
}

TEST_CASE("sandbox pool --wait: sandboxes the quota refuses end the wait naming the quota",
          "[wait][blocker][run]") {
    TestHost host;
    servePool(host, 2);
    host.server.onJson("GET", kSandboxes, 200, list({poolSandbox(reconcilerError(kQuota))}));
    host.server.onJson("GET", kPods, 200, list({}));
    const auto started = host.clock.monotonic();
    CHECK(host.run({"sandbox", "pool", "--size", "2", "--wait", "--timeout", "2m"}) == kExitError);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.find("cannot fill: sandbox pool-abc: its pod cannot be created: " + kQuota) !=
          std::string::npos);
    CHECK(host.clock.monotonic() - started < std::chrono::seconds(10));
}

TEST_CASE("sandbox pool --wait --bare-pods: a warm pod whose image cannot be pulled ends it",
          "[wait][blocker][run]") {
    TestHost host;
    host.server.latency = std::chrono::milliseconds(200);
    const json pod = imagePullPod("", {{app::run::kPoolLabel, app::run::kPoolWarm}},
                                  {{app::run::kPoolShapeAnnotation, app::run::shapeKey(kShape)}});
    host.server.onJson("GET", kPods, 200, list({pod}));
    host.server.onStream("GET", kPods + "?watch=true", {});
    const auto started = host.clock.monotonic();
    CHECK(host.run({"sandbox", "pool", "--size", "1", "--bare-pods", "--wait"}) == kExitError);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.find("pod pool-abc: image registry.invalid/python:3.12-slim cannot be pulled") !=
          std::string::npos);
    CHECK(host.clock.monotonic() - started < std::chrono::seconds(10));
}

TEST_CASE("sandbox pool --wait: a pool short of node capacity says so when its time runs out",
          "[wait][run]") {
    TestHost host;
    servePool(host, 1);
    // Unschedulable is no blocker (capacity may free up), so the wait runs to its time-out.
    const json unschedulable = {{"type", "Ready"},
                                {"status", "False"},
                                {"reason", "DependenciesNotReady"},
                                {"message", "0/1 nodes are available: 1 Insufficient cpu."}};
    host.server.onJson("GET", kSandboxes, 200, list({poolSandbox(unschedulable)}));
    host.server.onJson("GET", kPods, 200, list({}));
    CHECK(host.run({"sandbox", "pool", "--size", "1", "--wait", "--timeout", "5s"}) == kExitError);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.find("did not reach 1 ready sandboxes within --timeout 5s (sandbox pool-abc: "
                   "Ready=False (DependenciesNotReady: 0/1 nodes are available: 1 Insufficient "
                   "cpu.))") != std::string::npos);
}
