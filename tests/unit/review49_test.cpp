// Review 49's findings, each a case that failed on a637b38.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/model/validation.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::condition;
using rossoctl::testing::list;
using rossoctl::testing::ordersSandbox;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";

json runningSandbox() {
    return ordersSandbox("Running", {condition("Ready", "True")});
}

// A running pod that names the Sandbox as its controller (anyone who may create pods can).
json controlledPod(const std::string& name, const std::string& uid, const std::string& created) {
    return {
        {"metadata",
         {{"name", name},
          {"namespace", "team1"},
          {"uid", uid},
          {"resourceVersion", "7"},
          {"creationTimestamp", created},
          {"labels", {{"agents.x-k8s.io/sandbox-name-hash", "abc"}}},
          {"ownerReferences",
           {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}}},
        {"spec", {{"nodeName", "node-a"}, {"containers", {{{"name", "agent"}}}}}},
        {"status",
         {{"phase", "Running"},
          {"containerStatuses",
           {{{"name", "agent"}, {"restartCount", 0}, {"state", {{"running", json::object()}}}}}}}}};
}

}  // namespace

// Finding 1 (LOW): once a stream ended, logs -f followed any pod with a controller reference
// to the Sandbox, whatever its name: a pod anyone may create read as the sandbox's log.
TEST_CASE("review49: logs -f never switches to a pod the Sandbox does not record", "[review49]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, runningSandbox());
    host.server.onJson("GET", kSandboxes + "/orders", 200, runningSandbox());
    host.server.on("GET", kSandboxes + "/orders", 404, testing::kNotFoundBody);
    const json orders = controlledPod("orders", "a1b2c3d4-real", "2023-11-14T22:00:05Z");
    const json decoy = controlledPod("aaa-decoy", "d0d0d0d0-decoy", "2023-11-14T22:01:00Z");
    host.server.onJson("GET", kPods, 200, list({orders}));
    host.server.onJson("GET", kPods, 200, list({orders, decoy}));
    host.server.onStream("GET", kPods + "/orders/log", {"from the sandbox\n"});
    host.server.onStream("GET", kPods + "/aaa-decoy/log", {"from the decoy\n"});
    host.run({"sandbox", "logs", "orders", "-f"});
    INFO(host.out.str() << host.err.str());
    CHECK(host.server.requestsTo("GET", kPods + "/aaa-decoy/log").empty());
    CHECK(host.out.str().find("from the decoy") == std::string::npos);
}

// Finding 3 (LOW): a duration past ~292 years wrapped a deadline or a claim's shutdownTime
// (now + it in nanoseconds) into the past; --timeout 2200000h passed.
TEST_CASE("review49: a duration past 100 years is refused", "[review49]") {
    CHECK(model::parseDuration("876000h", "--timeout") == std::chrono::hours(876000));
    CHECK_THROWS_WITH(model::parseDuration("2200000h", "--timeout"),
                      "invalid value \"2200000h\" for --timeout: at most 876000h (100 years)");
}
