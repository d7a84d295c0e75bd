// sandbox logs/suspend/resume end to end against a routed fake apiserver: bad input sends
// nothing, happy paths, -f across a pod replacement, 404/403/409 read well.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::condition;
using rossoctl::testing::list;
using rossoctl::testing::ordersSandbox;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kLog = kPods + "/orders/log";

json running() {
    return ordersSandbox("Running", {condition("Ready", "True")});
}
json suspended() {
    return ordersSandbox("Suspended",
                         {condition("Ready", "False"), condition("Suspended", "True")});
}

json podOf(const std::string& uid, const std::string& resourceVersion = "7") {
    return {
        {"metadata",
         {{"name", "orders"},
          {"namespace", "team1"},
          {"uid", uid},
          {"resourceVersion", resourceVersion},
          {"creationTimestamp", "2023-11-14T22:00:05Z"},
          {"ownerReferences",
           {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}}},
        {"spec", {{"containers", {{{"name", "agent"}}}}}},
        {"status",
         {{"phase", "Running"},
          {"containerStatuses",
           {{{"name", "agent"}, {"restartCount", 0}, {"state", {{"running", json::object()}}}}}}}}};
}

void serveOrders(TestHost& host) {
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, running());
    host.server.onJson("GET", kPods, 200, list({podOf("a1b2c3d4-old")}));
}

std::string queryOf(const kube::HttpRequest& request) {
    return request.url.substr(request.url.find('?') + 1);
}

}  // namespace

TEST_CASE("sandbox logs/suspend/resume: every help example parses and validates",
          "[sandbox][command]") {
    for (const char* command : {"logs", "suspend", "resume"})
        testing::checkHelpExamples({"sandbox", command});
}

TEST_CASE("sandbox logs rejects bad input before sending anything", "[sandbox][command]") {
    std::vector<std::vector<std::string>> bad = {
        {"sandbox", "logs"},
        {"sandbox", "logs", "Orders!"},
        {"sandbox", "logs", "orders", "-c", "Side_Car"},
        {"sandbox", "logs", "orders", "--since", "soon"},
        {"sandbox", "logs", "orders", "--since", "0s"},
        {"sandbox", "logs", "orders", "--tail", "-2"},
        {"sandbox", "logs", "orders", "--tail", "many"},
        {"sandbox", "logs", "orders", "-f", "--previous"},
    };
    testing::checkUsageErrors(bad);
}

TEST_CASE("sandbox logs reads the current pod's log with the flags as query",
          "[sandbox][command]") {
    TestHost host;
    serveOrders(host);
    host.server.onStream("GET", kLog, {"hello\n", "\x1b[2Jworld\n"});
    REQUIRE(host.run({"sandbox", "logs", "orders", "--since", "90s", "--tail", "5", "--timestamps",
                      "-c", "agent"}) == 0);
    CHECK(host.sent() == std::vector<std::string>{"GET /apis/agents.x-k8s.io",
                                                  "GET " + kSandboxes + "/orders", "GET " + kPods,
                                                  "GET " + kLog});
    CHECK(queryOf(host.server.last()) ==
          "container=agent&sinceSeconds=90&tailLines=5&timestamps=true&limitBytes=67108864");
    // Into a pipe the bytes pass unchanged, as kubectl passes them.
    CHECK(host.out.str() == "hello\n\x1b[2Jworld\n");
    CHECK(host.err.str().empty());

    TestHost terminal;  // on a terminal the pod's escape sequences are shown, not obeyed
    terminal.stdoutIsTerminal = true;
    serveOrders(terminal);
    terminal.server.onStream("GET", kLog, {"hello\n", "\x1b[2Jworld\n"});
    REQUIRE(terminal.run({"sandbox", "logs", "orders", "--previous"}) == 0);
    CHECK(queryOf(terminal.server.last()) == "container=agent&previous=true&limitBytes=67108864");
    CHECK(terminal.out.str() == "hello\n\\x1b[2Jworld\n");
}

TEST_CASE("sandbox logs -c reads an init container's log, as kubectl logs -c does",
          "[sandbox][command]") {
    // Walk 7 C4: verify's evidence names the egress gate, an init container; its log is there.
    json pod = podOf("a1b2c3d4-old");
    pod["spec"]["initContainers"] = {{{"name", "rossoctl-egress-gate"}}};
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, running());
    host.server.onJson("GET", kPods, 200, list({pod}));
    host.server.onStream("GET", kLog, {"rossoctl-egress-gate: policies held after 3 tries\n"});
    REQUIRE(host.run({"sandbox", "logs", "orders", "-c", "rossoctl-egress-gate"}) == 0);
    CHECK(queryOf(host.server.last()) == "container=rossoctl-egress-gate&limitBytes=67108864");
    CHECK(host.out.str() == "rossoctl-egress-gate: policies held after 3 tries\n");

    TestHost wrong;  // a name that is neither lists both kinds
    wrong.serveSandboxGroup();
    wrong.server.onJson("GET", kSandboxes + "/orders", 200, running());
    wrong.server.onJson("GET", kPods, 200, list({pod}));
    CHECK(wrong.run({"sandbox", "logs", "orders", "-c", "nope"}) == kExitError);
    CHECK(wrong.err.str() ==
          "error: sandbox/orders pod orders has no container \"nope\"; it has: agent (init "
          "containers, for logs: rossoctl-egress-gate)\n");
}

TEST_CASE("sandbox logs -f follows the sandbox's new pod after a restart", "[sandbox][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, running());
    host.server.onJson("GET", kSandboxes + "/orders", 200, running());
    host.server.on("GET", kSandboxes + "/orders", 404, testing::kNotFoundBody);
    host.server.onJson("GET", kPods, 200, list({podOf("a1b2c3d4-old")}));
    host.server.onJson("GET", kPods, 200, list({podOf("e5f6a7b8-new")}));
    host.server.onStream("GET", kLog, {"from the old pod\n"});
    host.server.onStream("GET", kLog, {"from the new pod\n"});
    REQUIRE(host.run({"sandbox", "logs", "orders", "-f", "--tail", "1"}) == 0);
    CHECK(host.out.str() == "from the old pod\nfrom the new pod\n");
    CHECK(host.err.str() ==
          "note: pod orders was replaced (uid a1b2c3d4… → e5f6a7b8…); following the new pod\n"
          "note: sandbox/orders was deleted; no more logs to follow\n");
    const auto logs = host.server.requestsTo("GET", kLog);
    REQUIRE(logs.size() == 2);
    CHECK(queryOf(logs[0]) == "container=agent&follow=true&tailLines=1");
    CHECK(queryOf(logs[1]) == "container=agent&follow=true");  // the new pod is read whole
    CHECK(host.server.writes().empty());
}

TEST_CASE("sandbox logs -f stops when the sandbox is suspended; a cut stream goes on",
          "[sandbox][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, running());
    host.server.onJson("GET", kSandboxes + "/orders", 200, running());
    host.server.onJson("GET", kSandboxes + "/orders", 200, suspended());
    host.server.onJson("GET", kPods, 200, list({podOf("a1b2c3d4-old")}));
    host.server.onStream("GET", kLog, {"one\n"});  // ended while the pod still runs: cut
    host.server.onStream("GET", kLog, {"two\n"});
    REQUIRE(host.run({"sandbox", "logs", "orders", "-f"}) == 0);
    CHECK(host.out.str() == "one\ntwo\n");
    CHECK(host.err.str() ==
          "note: the log stream of pod orders was cut; continuing from now (lines written "
          "meanwhile may be missing)\n"
          "note: sandbox/orders is suspended (operatingMode Suspended); no more logs to follow\n");
    const auto logs = host.server.requestsTo("GET", kLog);
    REQUIRE(logs.size() == 2);
    CHECK(queryOf(logs[1]) == "container=agent&follow=true&tailLines=0");
}

TEST_CASE("sandbox logs -f follows a container restart and stops when the pod has ended",
          "[sandbox][command]") {
    json restarted = podOf("a1b2c3d4-old", "8");
    restarted["status"]["containerStatuses"][0]["restartCount"] = 1;
    json ended = restarted;
    ended["metadata"]["resourceVersion"] = "9";
    ended["status"]["phase"] = "Succeeded";
    ended["status"]["containerStatuses"][0]["state"] = {{"terminated", {{"exitCode", 0}}}};
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, running());
    host.server.onJson("GET", kPods, 200, list({podOf("a1b2c3d4-old")}));
    host.server.onJson("GET", kPods, 200, list({restarted}));
    host.server.onJson("GET", kPods, 200, list({ended}));
    host.server.onStream("GET", kLog, {"first run\n"});
    host.server.onStream("GET", kLog, {"second run\n"});
    REQUIRE(host.run({"sandbox", "logs", "orders", "-f", "--since", "1h"}) == 0);
    CHECK(host.out.str() == "first run\nsecond run\n");
    CHECK(host.err.str() ==
          "note: container agent in pod orders restarted (restart 1); following it\n"
          "note: pod orders ended (phase Succeeded) and is not recreated; no more logs to "
          "follow\n");
    const auto logs = host.server.requestsTo("GET", kLog);
    REQUIRE(logs.size() == 2);
    CHECK(queryOf(logs[0]) == "container=agent&follow=true&sinceSeconds=3600");
    CHECK(queryOf(logs[1]) == "container=agent&follow=true");
}

TEST_CASE("sandbox logs: a missing sandbox, no pod, a wrong container, a refused read",
          "[sandbox][command]") {
    TestHost missing;
    missing.serveSandboxGroup();
    CHECK(missing.run({"sandbox", "logs", "ghost"}) == kExitError);
    CHECK(missing.err.str() ==
          "error: sandbox/ghost not found in namespace team1; run \"rossoctl sandbox list -n "
          "team1\"\n");

    TestHost none;
    none.serveSandboxGroup();
    none.server.onJson("GET", kSandboxes + "/orders", 200, suspended());
    none.server.onJson("GET", kPods, 200, list({}));
    CHECK(none.run({"sandbox", "logs", "orders"}) == kExitError);
    CHECK(none.err.str() ==
          "error: sandbox/orders is suspended (operatingMode Suspended); it has "
          "no pod to read logs from: resume it with \"rossoctl sandbox resume orders -n team1\"\n");

    TestHost container;
    serveOrders(container);
    CHECK(container.run({"sandbox", "logs", "orders", "-c", "sidecar"}) == kExitError);
    CHECK(container.err.str() ==
          "error: sandbox/orders pod orders has no container \"sidecar\"; it has: agent\n");
    CHECK(container.server.requestsTo("GET", kLog).empty());

    TestHost forbidden;
    serveOrders(forbidden);
    forbidden.server.on("GET", kLog, 403,
                        statusBody(403, "Forbidden", "pods \"orders\" is forbidden: log"));
    CHECK(forbidden.run({"sandbox", "logs", "orders", "-f"}) == kExitError);
    CHECK(forbidden.err.str() ==
          "Error from server (Forbidden): pods \"orders\" is forbidden: "
          "log\n");
}

TEST_CASE("sandbox suspend/resume reject bad input before sending anything", "[sandbox][command]") {
    std::vector<std::vector<std::string>> bad = {
        {"sandbox", "suspend"},
        {"sandbox", "resume"},
        {"sandbox", "suspend", "Orders!"},
        {"sandbox", "resume", "orders", "deployment/x"},
        {"sandbox", "suspend", "orders", "--timeout", "soon"},
    };
    testing::checkUsageErrors(bad);
}

TEST_CASE("sandbox suspend patches operatingMode and waits for no pod and Suspended=True",
          "[sandbox][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, running());
    host.server.onJson("PATCH", kSandboxes + "/orders", 200, ordersSandbox("Suspended", {}));
    host.server.onJson("GET", kPods, 200, list({}));
    host.server.onJson("GET", kSandboxes, 200, list({suspended()}));
    REQUIRE(host.run({"sandbox", "suspend", "orders"}) == 0);
    CHECK(host.server.writes() == std::vector<std::string>{"PATCH " + kSandboxes + "/orders"});
    const auto patch = host.server.requestsTo("PATCH", kSandboxes + "/orders").at(0);
    CHECK(patch.body == R"({"spec":{"operatingMode":"Suspended"}})");
    CHECK(host.out.str() == "sandbox/orders suspended (pod gone, Suspended=True, 0.0s)\n");

    TestHost again;  // idempotent: nothing written, says so
    again.serveSandboxGroup();
    again.server.onJson("GET", kSandboxes + "/orders", 200, suspended());
    again.server.onJson("GET", kPods, 200, list({}));
    again.server.onJson("GET", kSandboxes, 200, list({suspended()}));
    REQUIRE(again.run({"sandbox", "suspend", "orders"}) == 0);
    CHECK(again.server.writes().empty());
    CHECK(again.out.str() == "sandbox/orders already suspended\n");

    TestHost nowait;
    nowait.serveSandboxGroup();
    nowait.server.onJson("GET", kSandboxes + "/orders", 200, running());
    nowait.server.onJson("PATCH", kSandboxes + "/orders", 200, ordersSandbox("Suspended", {}));
    REQUIRE(nowait.run({"sandbox", "suspend", "orders", "--wait=false"}) == 0);
    CHECK(nowait.sent().back() == "PATCH " + kSandboxes + "/orders");
    CHECK(nowait.out.str() == "sandbox/orders suspend requested; not waiting\n");
}

TEST_CASE("sandbox suspend on v1alpha1 sets replicas 0; a stale condition does not count",
          "[sandbox][command]") {
    const std::string alpha = "/apis/agents.x-k8s.io/v1alpha1/namespaces/team1/sandboxes";
    TestHost host;
    host.server.on("GET", "/apis/agents.x-k8s.io", 200,
                   R"({"kind":"APIGroup","versions":[{"version":"v1alpha1"}],)"
                   R"("preferredVersion":{"version":"v1alpha1"}})");
    json before = running();
    before["spec"].erase("operatingMode");
    before["spec"]["replicas"] = 1;
    json after = before;
    after["spec"]["replicas"] = 0;
    after["metadata"]["generation"] = 3;
    // Suspended=True written for generation 2 (an earlier suspension): not this one.
    after["status"]["conditions"] = {condition("Ready", "False"), condition("Suspended", "True")};
    json done = after;
    done["status"]["conditions"][1]["observedGeneration"] = 3;
    host.server.onJson("GET", alpha + "/orders", 200, before);
    host.server.onJson("PATCH", alpha + "/orders", 200, after);
    host.server.onJson("GET", kPods, 200, list({}));
    host.server.onJson("GET", alpha, 200, list({after}));
    host.server.onStream("GET", alpha + "?watch=true",
                         {json{{"type", "MODIFIED"}, {"object", done}}.dump() + "\n"});
    REQUIRE(host.run({"sandbox", "suspend", "orders"}) == 0);
    CHECK(host.server.requestsTo("PATCH", alpha + "/orders").at(0).body ==
          R"({"spec":{"replicas":0}})");
    CHECK(host.server.requestsTo("GET", alpha).size() == 2);  // the LIST, then the watch
    CHECK(host.out.str() == "sandbox/orders suspended (pod gone, Suspended=True, 0.0s)\n");
}

TEST_CASE("sandbox resume waits for Ready; refuses an expired sandbox", "[sandbox][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, suspended());
    host.server.onJson("PATCH", kSandboxes + "/orders", 200, ordersSandbox("Running", {}));
    host.server.onJson("GET", kSandboxes, 200, list({running()}));
    REQUIRE(host.run({"sandbox", "resume", "sandbox/orders"}) == 0);
    CHECK(host.server.requestsTo("PATCH", kSandboxes + "/orders").at(0).body ==
          R"({"spec":{"operatingMode":"Running"}})");
    CHECK(host.out.str() == "sandbox/orders resumed (Ready=True, 0.0s)\n");

    TestHost expired;
    expired.serveSandboxGroup();
    json old = suspended();
    old["spec"]["shutdownTime"] = "2020-01-01T00:00:00Z";
    expired.server.onJson("GET", kSandboxes + "/orders", 200, old);
    CHECK(expired.run({"sandbox", "resume", "orders"}) == kExitError);
    CHECK(expired.err.str() ==
          "error: sandbox/orders expired at 2020-01-01T00:00:00Z "
          "(spec.shutdownTime); resuming it would not start a pod (create "
          "it again)\n");
    CHECK(expired.server.writes().empty());
}

TEST_CASE("sandbox suspend: 404, 403, 409 and a pod that never goes", "[sandbox][command]") {
    TestHost missing;  // one missing sandbox: none is suspended (walk 6 MINOR 3)
    serveOrders(missing);
    missing.server.onJson("PATCH", kSandboxes + "/orders", 200, ordersSandbox("Suspended", {}));
    CHECK(missing.run({"sandbox", "suspend", "ghost", "orders", "--wait=false"}) == kExitError);
    CHECK(missing.err.str() ==
          "error: sandbox/ghost not found in namespace team1; run "
          "\"rossoctl sandbox list -n team1\"\n"
          "error: not suspended: sandbox/ghost not found, and no sandbox is suspended until "
          "every name is found\n");
    CHECK(missing.out.str().empty());
    CHECK(missing.server.writes().empty());

    TestHost forbidden;
    serveOrders(forbidden);
    forbidden.server.on("PATCH", kSandboxes + "/orders", 403,
                        statusBody(403, "Forbidden", "sandboxes \"orders\" is forbidden"));
    CHECK(forbidden.run({"sandbox", "suspend", "orders"}) == kExitError);
    CHECK(forbidden.err.str() == "error: sandbox/orders: sandboxes \"orders\" is forbidden\n");

    TestHost conflict;  // a 409: read again, patch again
    serveOrders(conflict);
    conflict.server.on("PATCH", kSandboxes + "/orders", 409, statusBody(409, "Conflict", "busy"));
    conflict.server.onJson("PATCH", kSandboxes + "/orders", 200, ordersSandbox("Suspended", {}));
    REQUIRE(conflict.run({"sandbox", "suspend", "orders", "--wait=false"}) == 0);
    CHECK(conflict.server.writes().size() == 2);

    TestHost stuck;  // the pod stays: the timeout says what the Sandbox says
    serveOrders(stuck);
    stuck.server.latency = std::chrono::seconds(1);
    stuck.server.onJson("PATCH", kSandboxes + "/orders", 200, ordersSandbox("Suspended", {}));
    CHECK(stuck.run({"sandbox", "suspend", "orders", "--timeout", "3s"}) == kExitError);
    CHECK_THAT(stuck.err.str(),
               Catch::StartsWith("error: sandbox/orders timed out after 3.0s waiting for its pod "
                                 "to be gone; the Sandbox says Ready=True"));
}

TEST_CASE("sandbox resume: 404, 403 and 409", "[sandbox][command]") {
    TestHost missing;  // none is resumed; the missing one is named with its -n
    missing.serveSandboxGroup();
    missing.server.onJson("GET", kSandboxes + "/orders", 200, suspended());
    missing.server.onJson("PATCH", kSandboxes + "/orders", 200, ordersSandbox("Running", {}));
    CHECK(missing.run({"sandbox", "resume", "ghost", "orders", "--wait=false"}) == kExitError);
    CHECK(missing.err.str() ==
          "error: sandbox/ghost not found in namespace team1; run "
          "\"rossoctl sandbox list -n team1\"\n"
          "error: not resumed: sandbox/ghost not found, and no sandbox is resumed until every "
          "name is found\n");
    CHECK(missing.server.writes().empty());

    TestHost forbidden;
    forbidden.serveSandboxGroup();
    forbidden.server.onJson("GET", kSandboxes + "/orders", 200, suspended());
    forbidden.server.on("PATCH", kSandboxes + "/orders", 403,
                        statusBody(403, "Forbidden", "sandboxes \"orders\" is forbidden"));
    CHECK(forbidden.run({"sandbox", "resume", "orders"}) == kExitError);
    CHECK(forbidden.err.str() == "error: sandbox/orders: sandboxes \"orders\" is forbidden\n");
    CHECK(forbidden.out.str().empty());

    TestHost conflict;  // a 409: read again, patch again, then wait for Ready
    conflict.serveSandboxGroup();
    conflict.server.onJson("GET", kSandboxes + "/orders", 200, suspended());
    conflict.server.on("PATCH", kSandboxes + "/orders", 409, statusBody(409, "Conflict", "busy"));
    conflict.server.onJson("PATCH", kSandboxes + "/orders", 200, ordersSandbox("Running", {}));
    conflict.server.onJson("GET", kSandboxes, 200, list({running()}));
    REQUIRE(conflict.run({"sandbox", "resume", "orders"}) == 0);
    CHECK(conflict.server.writes().size() == 2);
    CHECK(conflict.server.requestsTo("GET", kSandboxes + "/orders").size() == 2);
    CHECK(conflict.out.str() == "sandbox/orders resumed (Ready=True, 0.0s)\n");
}
