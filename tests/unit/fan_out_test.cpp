// A server's one big string is kept and printed once, however many owner references, sandboxes
// under one UID or agents under one name point at it: memory and output stay linear in the
// response, not response times fan-out.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/ui/printer.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kSummary = "/api/v1/nodes/node-a/proxy/stats/summary";

json sandboxWithUid(const std::string& name, const std::string& uid) {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata", {{"name", name}, {"namespace", "team1"}, {"uid", uid}}}};
}

// One pod controlled (it says) by every UID of `owners`.
json podOwnedBy(const std::string& name, const std::vector<std::string>& owners) {
    json refs = json::array();
    for (const auto& uid : owners)
        refs.push_back({{"kind", "Sandbox"}, {"uid", uid}, {"controller", true}});
    return {{"metadata",
             {{"name", name},
              {"namespace", "team1"},
              {"uid", "pod-uid"},
              {"creationTimestamp", "2023-11-14T22:00:05Z"},
              {"ownerReferences", refs}}},
            {"spec", {{"nodeName", "node-a"}}},
            {"status", {{"phase", "Running"}}}};
}

size_t count(const std::string& text, const std::string& what) {
    size_t found = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++found;
    return found;
}

}  // namespace

TEST_CASE("sandbox list: a pod naming many controllers is the first one's only",
          "[fanout][sandbox]") {
    TestHost host;
    host.serveSandboxGroup();
    const std::string podName(4096, 'p');
    host.server.onJson(
        "GET", kSandboxes, 200,
        list({sandboxWithUid("s0", "u0"), sandboxWithUid("s1", "u1"), sandboxWithUid("s2", "u2")}));
    host.server.onJson("GET", kPods, 200, list({podOwnedBy(podName, {"u0", "u1", "u2"})}));
    REQUIRE(host.run({"sandbox", "list"}) == 0);
    CHECK(count(host.out.str(), podName) == 1);  // the old code: in all three rows
    CHECK(count(host.out.str(), "<none>") >= 2);
}

TEST_CASE("sandbox list: sandboxes repeating a UID do not each get its pod, and it is told",
          "[fanout][sandbox]") {
    TestHost host;
    host.serveSandboxGroup();
    const std::string podName(4096, 'p');
    std::vector<json> sandboxes;
    for (int i = 0; i < 20; ++i) sandboxes.push_back(sandboxWithUid("s" + std::to_string(i), "X"));
    host.server.onJson("GET", kSandboxes, 200, list(sandboxes));
    host.server.onJson("GET", kPods, 200, list({podOwnedBy(podName, {"X"})}));
    REQUIRE(host.run({"sandbox", "list"}) == 0);
    CHECK(count(host.out.str(), podName) == 1);  // the old code: 20 times
    CHECK(host.out.str().size() < 20 * 2048);    // nor is <none> padded to the name's width
    CHECK(host.err.str().find("19 more sandboxes under a UID already listed") != std::string::npos);
}

TEST_CASE("sandbox list: a sandbox without a UID is not matched to a pod without one",
          "[fanout][sandbox]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes, 200,
                       list({{{"metadata", {{"name", "nouid"}, {"namespace", "team1"}}}}}));
    host.server.onJson("GET", kPods, 200, list({podOwnedBy("stray-pod", {""})}));
    REQUIRE(host.run({"sandbox", "list"}) == 0);
    CHECK(host.out.str().find("stray-pod") == std::string::npos);
}

TEST_CASE("sandbox top: one pod per controller, one row per UID", "[fanout][top]") {
    TestHost host;
    host.serveSandboxGroup();
    const std::string podName(4096, 'p');
    host.server.onJson("GET", kSandboxes, 200,
                       list({sandboxWithUid("s0", "u0"), sandboxWithUid("s1", "u1"),
                             sandboxWithUid("again", "u0")}));
    host.server.onJson("GET", kPods, 200, list({podOwnedBy(podName, {"u0", "u1"})}));
    host.server.onJson("GET", kSummary, 200, json{{"pods", json::array()}});
    REQUIRE(host.run({"sandbox", "top", "-o", "json"}) == 0);
    const json printed = testing::printedJson(host.out.str());
    REQUIRE(printed["items"].size() == 3);
    CHECK(printed["items"][0]["pod"] == podName);
    CHECK(printed["items"][1]["pod"].is_null());  // the old code: the same pod again
    CHECK(printed["items"][2]["pod"].is_null());  // the old code: u0's pod copied
}

TEST_CASE("agents list: agents repeating a kind and name share one pod STATUS, not a copy each",
          "[fanout][agents]") {
    TestHost host;
    host.serveSandboxGroup();
    json deployment = {{"apiVersion", "apps/v1"},
                       {"kind", "Deployment"},
                       {"metadata",
                        {{"name", "orders"},
                         {"namespace", "team1"},
                         {"uid", "uid-orders"},
                         {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}},
                       {"spec", {{"replicas", 1}}},
                       {"status", {{"replicas", 1}}}};
    const std::string reason = "Err" + std::string(4096, 'r');
    json pod = {
        {"metadata",
         {{"name", "orders-1"},
          {"namespace", "team1"},
          {"creationTimestamp", "2023-11-14T22:00:05Z"},
          {"labels",
           {{"app.kubernetes.io/managed-by", "rossoctl"}, {"app.kubernetes.io/name", "orders"}}}}},
        {"status",
         {{"phase", "Pending"},
          {"containerStatuses",
           {{{"name", "agent"}, {"state", {{"waiting", {{"reason", reason}}}}}}}}}}};
    host.server.onJson("GET", "/apis/apps/v1/namespaces/team1/deployments", 200,
                       list({deployment, deployment, deployment}));
    for (const char* path :
         {"/apis/apps/v1/namespaces/team1/statefulsets", "/apis/batch/v1/namespaces/team1/jobs",
          "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes"})
        host.server.onJson("GET", path, 200, list({}));
    host.server.onJson("GET", kPods, 200, list({pod}));
    REQUIRE(host.run({"agents", "list"}) == 0);
    CHECK(count(host.out.str(), reason) == 1);  // the old code: in each of the three rows
}

TEST_CASE("a table pads no column past 1024 characters for one long cell", "[fanout][printer]") {
    ui::Table table;
    table.headers = {"NAME", "POD", "AGE"};
    table.rows = {{"a", std::string(100'000, 'p'), "1m"}, {"b", "<none>", "2m"}};
    std::ostringstream out;
    ui::printTable(out, table, false, false);
    CHECK(out.str().size() < 100'000 + 3 * 1100);  // the old code: 300 KB, each row padded
    CHECK(out.str().find(std::string(100'000, 'p')) != std::string::npos);  // the cell is whole
    std::istringstream lines(out.str());
    std::string header;
    std::getline(lines, header);
    CHECK(header.find("AGE") == 1024 + 3 + 4 + 3);  // short columns still line up
}
