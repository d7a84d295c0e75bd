// project create waits on the cluster within --timeout (issue 34 point 13): for the quota
// controller to count usage in the namespace (quota admission refuses every pod until then),
// then for the check's pods, with whatever is left, and says what it waited for.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;

namespace {

const std::string kNamespaces = "/api/v1/namespaces";
const std::string kQuotas = "/api/v1/namespaces/team1/resourcequotas";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kPolicies = "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies";

json projectNamespace() {
    return {{"apiVersion", "v1"},
            {"kind", "Namespace"},
            {"metadata",
             {{"name", "team1"},
              {"resourceVersion", "7"},
              {"labels",
               {{"rossoctl.dev/sandbox-project", "true"},
                {"app.kubernetes.io/managed-by", "rossoctl"}}}}},
            {"status", {{"phase", "Active"}}}};
}

json quota(bool counted) {
    json object = {
        {"metadata", {{"name", "sandbox-quota"}, {"resourceVersion", counted ? "4" : "3"}}}};
    if (counted) object["status"] = {{"hard", {{"pods", "20"}}}, {"used", {{"pods", "0"}}}};
    return object;
}

std::string watchEvent(const json& object) {
    return json{{"type", "MODIFIED"}, {"object", object}}.dump() + "\n";
}

json checkPod(const std::string& role, const std::string& phase, const std::string& ip) {
    json status = {{"phase", phase}};
    if (!ip.empty()) status["podIP"] = ip;
    return {{"metadata",
             {{"name", "rossoctl-check-000001-" + role},
              {"namespace", "team1"},
              {"resourceVersion", phase == "Running" ? "12" : "11"},
              {"labels", {{"rossoctl.dev/enforcement-check", "000001"}}}}},
            {"status", status}};
}

// The project's objects apply; the quota controller counts usage `countedAfter` into the
// command (each watch of the quota stays quiet for 5 s); until then quota admission refuses
// every pod, as the apiserver does ("status unknown for quota").
void serveProject(TestHost& host, std::chrono::seconds countedAfter) {
    host.server.onJson("GET", kNamespaces + "/team1", 200, projectNamespace());
    host.server.on("PATCH", "/*", 200, R"({"metadata":{"resourceVersion":"7"}})");
    host.server.onJson("GET", kQuotas, 200, list({quota(countedAfter.count() == 0)}));
    host.server.onStream("GET", kQuotas + "?watch=true", {});
    host.server.on("POST", kPolicies, 201, "{}");
    host.server.on("DELETE", kPolicies + "/*", 200, "{}");
    host.server.on("DELETE", kPods + "/*", 200, "{}");
    host.server.on("POST", "/api/v1/namespaces/team1/*", 403,
                   statusBody(403, "Forbidden",
                              "pods \"rossoctl-check-000001-server\" is forbidden: status unknown "
                              "for quota: sandbox-quota, resource: pods"));
    if (countedAfter.count() == 0) host.server.on("POST", kPods, 201, "{}");
    auto counted = std::make_shared<bool>(countedAfter.count() == 0);
    const auto start = host.clock.monotonic();
    host.server.onRequest = [&host, counted, start, countedAfter](const kube::HttpRequest& r) {
        if (r.url.find("/resourcequotas?") != std::string::npos &&
            r.url.find("watch=true") != std::string::npos)
            host.clock.advance(std::chrono::seconds(5));
        if (*counted || host.clock.monotonic() - start < countedAfter) return;
        *counted = true;
        host.server.onStream("GET", kQuotas + "?watch=true", {watchEvent(quota(true))});
        host.server.onJson("GET", kQuotas, 200, list({quota(true)}));
        host.server.on("POST", kPods, 201, "{}");  // an exact path: beats the refusal above
    };
}

// The check's pods run (`runningAfter` into the command, each quiet watch of them lasting
// 10 s), and the network plugin enforces: the client connects until the control policy goes.
void serveCheckPods(TestHost& host, std::chrono::seconds runningAfter) {
    host.server.onJson(
        "GET", kPods, 200,
        list({checkPod("server", "Pending", ""), checkPod("client", "Pending", "")}));
    host.server.onStream("GET", kPods + "?watch=true", {});
    auto previous = host.server.onRequest;
    auto running = std::make_shared<bool>(false);
    auto removed = std::make_shared<bool>(false);
    const auto start = host.clock.monotonic();
    host.server.onRequest = [&host, previous, running, removed, start,
                             runningAfter](const kube::HttpRequest& r) {
        if (previous) previous(r);
        if (r.method == "DELETE" && r.url.find("-control") != std::string::npos) *removed = true;
        if (r.url.find("/pods?") != std::string::npos &&
            r.url.find("watch=true") != std::string::npos)
            host.clock.advance(std::chrono::seconds(10));
        if (*running || host.clock.monotonic() - start < runningAfter) return;
        *running = true;
        const json server = checkPod("server", "Running", "10.244.0.9");
        const json client = checkPod("client", "Running", "10.244.0.10");
        host.server.onStream("GET", kPods + "?watch=true",
                             {watchEvent(server), watchEvent(client)});
        host.server.onJson("GET", kPods, 200, list({server, client}));
    };
    host.server.onExec(
        "team1", "rossoctl-check-000001-client", [removed](const std::vector<std::string>&) {
            return testing::execRan(
                *removed ? "rossoctl-connect=failed timed out\n" : "rossoctl-connect=connected\n",
                "", 0);
        });
}

}  // namespace

TEST_CASE("project create waits for the quota controller within --timeout, and says how long",
          "[project][command]") {
    TestHost host;
    serveProject(host, std::chrono::seconds(40));
    REQUIRE(host.run({"project", "create", "team1", "--no-check"}) == 0);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.find("has not counted usage") == std::string::npos);
    const auto waited = err.find("Waited ");
    REQUIRE(waited != std::string::npos);
    CHECK(std::stod(err.substr(waited + 7)) >= 40);  // as long as the controller took
    CHECK(err.find("s for the quota controller to count usage in team1", waited) !=
          std::string::npos);

    TestHost late;  // counted after --timeout: the warning names it
    serveProject(late, std::chrono::seconds(90));
    REQUIRE(late.run({"project", "create", "team1", "--no-check", "--timeout", "30s"}) == 0);
    CHECK(late.err.str().find("Warning: the quota controller has not counted usage in team1 "
                              "within --timeout 30s") != std::string::npos);
}

TEST_CASE("project create's check starts once the quota is counted, and no sooner",
          "[project][command][enforcement-check]") {
    TestHost host;
    serveProject(host, std::chrono::seconds(40));
    serveCheckPods(host, std::chrono::seconds(0));
    const int exitCode = host.run({"project", "create", "team1"});
    INFO(host.err.str());
    CHECK(exitCode == 0);
    CHECK(host.err.str().find("Enforcement:    default-deny holds") != std::string::npos);
    CHECK(host.server.requestsTo("POST", kPods).size() == 2);  // never refused

    TestHost never;  // never counted: the check does not send pods quota admission refuses
    serveProject(never, std::chrono::hours(1));
    CHECK(never.run({"project", "create", "team1", "--timeout", "1m"}) == 3);
    CHECK(never.err.str().find("the quota controller had not counted usage in team1 within "
                               "--timeout 1m") != std::string::npos);
    CHECK(never.server.requestsTo("POST", kPods).empty());
}

TEST_CASE("project create's check pods get what is left of --timeout, not a fixed minute",
          "[project][command][enforcement-check]") {
    TestHost slow;  // a slow node: the pods run 90 s in
    serveProject(slow, std::chrono::seconds(0));
    serveCheckPods(slow, std::chrono::seconds(90));
    const int exitCode = slow.run({"project", "create", "team1", "--timeout", "3m"});
    INFO(slow.err.str());
    CHECK(exitCode == 0);

    TestHost slower;  // past --timeout: the message says what it waited for
    serveProject(slower, std::chrono::seconds(0));
    serveCheckPods(slower, std::chrono::minutes(10));
    CHECK(slower.run({"project", "create", "team1", "--timeout", "1m"}) == 3);
    CHECK(slower.err.str().find("were not running within") != std::string::npos);
    CHECK(slower.err.str().find("rossoctl-check-000001-client Pending") != std::string::npos);
    CHECK(slower.err.str().find("raise --timeout") != std::string::npos);
}
