// sandbox top offline: sandboxes, their pods and the kubelet's Summary answer, scripted.
#include "rossoctl/app/sandbox_top.hpp"

#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kSummary = "/api/v1/nodes/node-a/proxy/stats/summary";

json sandbox(const std::string& name) {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata", {{"name", name}, {"namespace", "team1"}, {"uid", "uid-" + name}}}};
}

json pod(const std::string& name, const std::string& node) {
    return {{"metadata",
             {{"name", name},
              {"namespace", "team1"},
              {"uid", "pod-" + name},
              {"creationTimestamp", "2023-11-14T22:00:05Z"},
              {"labels", {{"agents.x-k8s.io/sandbox-name-hash", "h"}}},
              {"ownerReferences",
               {{{"kind", "Sandbox"}, {"uid", "uid-" + name}, {"controller", true}}}}}},
            {"spec", {{"nodeName", node}}},
            {"status", {{"phase", "Running"}}}};
}

// A Summary as the kubelet writes it (trimmed to what top reads, plus a little it does not).
json summaryFor(const std::string& podName, json cpu, json memory, json rootfs, json processes) {
    return {{"node", {{"nodeName", "node-a"}}},
            {"pods",
             {{{"podRef", {{"name", podName}, {"namespace", "team1"}, {"uid", "pod-" + podName}}},
               {"cpu", {{"time", "2026-12-02T05:00:00Z"}, {"usageNanoCores", cpu}}},
               {"memory", {{"workingSetBytes", memory}, {"usageBytes", 999999999}}},
               {"containers",
                {{{"name", "agent"}, {"rootfs", {{"usedBytes", rootfs}}}},
                 {{"name", "sidecar"}, {"rootfs", {{"usedBytes", 4096}}}}}},
               {"process_stats", {{"process_count", processes}}}}}}};
}

void serveTeam(TestHost& host, const json& summary) {
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes, 200, list({sandbox("orders"), sandbox("idle")}));
    host.server.onJson("GET", kPods, 200, list({pod("orders", "node-a")}));
    host.server.onJson("GET", kSummary, 200, summary);
}

}  // namespace

TEST_CASE("sandbox top: every help example parses and validates", "[top]") {
    testing::checkHelpExamples({"sandbox", "top"});
}

TEST_CASE("sandbox top rejects bad input before sending anything", "[top]") {
    testing::checkUsageErrors({{"sandbox", "top", "Bad!"},
                               {"sandbox", "top", "orders", "-A"},
                               {"sandbox", "top", "-o", "yaml"}});
}

TEST_CASE("sandbox top shows each sandbox's usage from the node's Summary", "[top]") {
    TestHost host;
    serveTeam(host, summaryFor("orders", 12'400'000, 48 * 1024 * 1024, 3 * 1024 * 1024, 4));
    REQUIRE(host.run({"sandbox", "top"}) == 0);
    CHECK(host.out.str() ==
          "NAME     POD      CPU(cores)   MEMORY(bytes)   DISK(bytes)   PROCESSES\n"
          "orders   orders   12m          48Mi            3Mi           4\n"
          "idle     <none>   -            -               -             -\n");
    // One pod list, one Summary for the one node: never a request per pod.
    CHECK(host.sent() == std::vector<std::string>{"GET /apis/agents.x-k8s.io", "GET " + kSandboxes,
                                                  "GET " + kPods, "GET " + kSummary});
    CHECK(host.server.requestsTo("GET", kPods)
              .front()
              .url.find("labelSelector=agents.x-k8s.io%2Fsandbox-name-hash") != std::string::npos);
}

TEST_CASE("sandbox top -o json gives the raw figures, null for what is unknown", "[top]") {
    TestHost host;
    serveTeam(host, summaryFor("orders", 12'400'000, 50331648, 3145728, 4));
    REQUIRE(host.run({"sandbox", "top", "-o", "json"}) == 0);
    const json printed = testing::printedJson(host.out.str());
    REQUIRE(printed["items"].size() == 2);
    const json& orders = printed["items"][0];
    CHECK(orders["sandbox"] == "orders");
    CHECK(orders["pod"] == "orders");
    CHECK(orders["node"] == "node-a");
    CHECK(orders["cpuNanoCores"] == 12'400'000);
    CHECK(orders["memoryWorkingSetBytes"] == 50331648);
    CHECK(orders["writableLayerBytes"] == 3145728 + 4096);  // both containers' layers
    CHECK(orders["processes"] == 4);
    CHECK(orders["time"] == "2026-12-02T05:00:00Z");
    CHECK(printed["items"][1]["pod"].is_null());
    CHECK(printed["items"][1]["cpuNanoCores"].is_null());
}

TEST_CASE("sandbox top names sandboxes one by one and matches pods by UID", "[top]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox("orders"));
    host.server.onJson("GET", kPods, 200, list({pod("orders", "node-a")}));
    json summary = summaryFor("orders", 1'000'000, 1024, 0, 1);
    summary["pods"][0]["podRef"]["uid"] = "another-pod-of-that-name";
    host.server.onJson("GET", kSummary, 200, summary);
    REQUIRE(host.run({"sandbox", "top", "orders", "--no-headers"}) == 0);
    CHECK(host.out.str() == "orders   orders   -   -   -   -\n");
}

TEST_CASE("sandbox top parses a hostile Summary without trusting its types", "[top][hostile]") {
    // Strings, negatives, floats and objects where counts belong: unknown, never thrown on.
    const json hostile = summaryFor("orders", "lots", -5, 1.5, json::object());
    const auto pods = app::parseSummary(hostile, {"pod-orders"});
    REQUIRE(pods.count("pod-orders") == 1);
    const auto& usage = pods.at("pod-orders");
    CHECK(!usage.cpuNanoCores);
    CHECK(!usage.memoryWorkingSet);
    CHECK(usage.writableLayerBytes == 4096u);  // the sidecar's layer alone was a count
    CHECK(!usage.processes);
    // Shapes that are not a Summary's.
    CHECK(app::parseSummary(json{{"pods", "none"}}, {"pod-orders"}).empty());
    CHECK(app::parseSummary(json{{"pods", {1, "x", nullptr, json::array()}}}, {"pod-orders"})
              .empty());
    CHECK_THROWS_AS(app::parseSummary(json::array(), {}), Error);
    // Layers that add up past 2^64 saturate instead of wrapping round to a small number.
    json huge = summaryFor("orders", 1, 1, UINT64_MAX, 1);
    huge["pods"][0]["containers"][1]["rootfs"]["usedBytes"] = UINT64_MAX;
    CHECK(app::parseSummary(huge, {"pod-orders"}).at("pod-orders").writableLayerBytes ==
          UINT64_MAX);
}

TEST_CASE("sandbox top: a Summary answer past its size cap is refused, not held",
          "[top][hostile]") {
    TestHost host;
    serveTeam(host, summaryFor("orders", 1, 1, 1, 1));
    REQUIRE(host.run({"sandbox", "top"}) == 0);
    const auto summaries = host.server.requestsTo("GET", kSummary);
    REQUIRE(summaries.size() == 1);
    CHECK(summaries.front().maxBodyBytes == app::kMaxSummaryBytes);
}

TEST_CASE("sandbox top says what permission is missing when the node proxy is forbidden", "[top]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes, 200, list({sandbox("orders")}));
    host.server.onJson("GET", kPods, 200, list({pod("orders", "node-a")}));
    host.server.on("GET", kSummary, 403,
                   testing::statusBody(403, "Forbidden",
                                       "nodes \"node-a\" is forbidden: User \"limited\" cannot "
                                       "get resource \"nodes/proxy\" in API group \"\" at the "
                                       "cluster scope"));
    CHECK(host.run({"sandbox", "top"}) == 1);
    CHECK(host.out.str().empty());
    CHECK(host.err.str() ==
          "error: reading usage needs get on nodes/proxy (the kubelet's Summary API of node "
          "node-a through the API server), which these credentials lack: nodes \"node-a\" is "
          "forbidden: User \"limited\" cannot get resource \"nodes/proxy\" in API group \"\" at "
          "the cluster scope; ask a cluster admin for it (e.g. a ClusterRole with resources "
          "nodes/proxy, verbs get)\n");
}

TEST_CASE("sandbox top: a sandbox that is not there is said as sandbox get says it, exit 1",
          "[top]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.on(
        "GET", kSandboxes + "/nope", 404,
        testing::statusBody(404, "NotFound", "sandboxes.agents.x-k8s.io \"nope\" not found"));
    CHECK(host.run({"sandbox", "top", "nope"}) == 1);
    CHECK(host.err.str() ==
          "error: sandbox \"nope\" not found in namespace \"team1\"; run "
          "\"rossoctl sandbox list -n team1\"\n");
}

TEST_CASE("sandbox top -A lists every namespace and shows the NAMESPACE column", "[top]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", "/apis/agents.x-k8s.io/v1beta1/sandboxes", 200,
                       list({sandbox("orders")}));
    host.server.onJson("GET", "/api/v1/pods", 200, list({pod("orders", "node-a")}));
    host.server.onJson("GET", kSummary, 200, summaryFor("orders", 2'000'000, 2048, 512, 2));
    REQUIRE(host.run({"sandbox", "top", "-A", "-o", "wide"}) == 0);
    CHECK(host.out.str() ==
          "NAMESPACE   NAME     POD      CPU(cores)   MEMORY(bytes)   DISK(bytes)   PROCESSES   "
          "NODE\n"
          "team1       orders   orders   2m           2Ki             4Ki           2           "
          "node-a\n");
}

// Review 48 finding 3: every pod of every node's answer was kept, though only the rows' are
// shown: a server listing 300,000 pods per node took 52 MB a node, without bound.
TEST_CASE("sandbox top keeps only the rows' pods of a node's Summary", "[top][hostile][review48]") {
    json summary = summaryFor("orders", 1, 1, 1, 1);
    for (int i = 0; i < 1000; ++i) {
        json other = summary["pods"][0];
        other["podRef"]["uid"] = "stranger-" + std::to_string(i);
        summary["pods"].push_back(other);
    }
    const auto pods = app::parseSummary(summary, {"pod-orders"});
    CHECK(pods.size() == 1);
    CHECK(pods.count("pod-orders") == 1);
}
