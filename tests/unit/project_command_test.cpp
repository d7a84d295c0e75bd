// project create/delete/describe/list end to end against a routed fake apiserver: bad input
// sends nothing, the happy path sends what DESIGN.md section 3 says, API refusals read well.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;
using rossoctl::testing::watchEvent;

namespace {

const std::string kNamespaces = "/api/v1/namespaces";

json projectNamespace(const std::string& name, const std::string& phase = "Active") {
    return {{"apiVersion", "v1"},
            {"kind", "Namespace"},
            {"metadata",
             {{"name", name},
              {"resourceVersion", "7"},
              {"creationTimestamp", "2023-11-14T22:00:00Z"},
              {"labels",
               {{"rossoctl.dev/sandbox-project", "true"},
                {"app.kubernetes.io/managed-by", "rossoctl"},
                {"pod-security.kubernetes.io/enforce", "restricted"}}},
              {"annotations", {{"rossoctl.dev/default-lifetime", "24h"}}}}},
            {"status", {{"phase", phase}}}};
}

// A List of items (a vector: a braced single json would be copied, not wrapped).
json list(const std::vector<json>& items, const std::string& version = "10") {
    return {{"kind", "List"}, {"metadata", {{"resourceVersion", version}}}, {"items", items}};
}

// A project with no objects of its own yet: every list in it is empty.
void serveEmptyLists(TestHost& host) {
    for (const std::string& prefix : std::vector<std::string>{
             kNamespaces + "/team1/*", "/apis/networking.k8s.io/v1/namespaces/team1/*",
             "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/*"})
        host.server.onJson("GET", prefix, 200, list({}));
}

}  // namespace

TEST_CASE("project commands: every help example parses and validates", "[project][command]") {
    for (const char* command : {"create", "delete", "describe", "list"}) {
        testing::checkHelpExamples({"project", command});
    }
}

TEST_CASE("project create rejects bad input before sending anything", "[project][command]") {
    std::vector<std::vector<std::string>> bad = {
        {"project", "create", "Team_1"},
        {"project", "create", "team1", "--cpu", "lots"},
        {"project", "create", "team1", "--memory", "-1Gi"},
        {"project", "create", "team1", "--allow-cidr", "10.0.0.0/33"},
        {"project", "create", "team1", "--allow-host", "bad host:99999"},
        {"project", "create", "team1", "--egress", "iptables"},
        {"project", "create", "team1", "--pod-security", "lax"},
        {"project", "create", "team1", "--dry-run=later"},
        {"project", "create", "team1", "-o", "table"},
        {"project", "create", "team1", "--default-lifetime", "forever"},
    };
    testing::checkUsageErrors(bad);
}

TEST_CASE("project create writes the namespace then its rules with server-side apply",
          "[project][command]") {
    TestHost host;
    host.server.on("GET", kNamespaces + "/team1", 404, testing::kNotFoundBody);
    // Server-side apply answers with the object, given a resourceVersion.
    for (const std::string& path :
         {kNamespaces + "/team1", kNamespaces + "/team1/resourcequotas/sandbox-quota",
          kNamespaces + "/team1/limitranges/sandbox-limits"})
        host.server.on("PATCH", path, 201, R"({"metadata":{"resourceVersion":"1"}})");
    host.server.on("PATCH", "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies/*", 201,
                   R"({"metadata":{"resourceVersion":"1"}})");
    json quota = {{"metadata", {{"name", "sandbox-quota"}, {"resourceVersion", "3"}}},
                  {"status", {{"hard", {{"pods", "20"}}}}}};
    host.server.onJson("GET", kNamespaces + "/team1/resourcequotas", 200, list({quota}));
    host.resolver.addresses["pypi.org"] = {"151.101.0.223"};

    REQUIRE(host.run(
                {"project", "create", "team1", "--allow-host", "pypi.org:443", "--no-check"}) == 0);
    auto writes = host.server.writes();
    REQUIRE_FALSE(writes.empty());
    CHECK(writes.front() == "PATCH /api/v1/namespaces/team1");
    for (const auto& write : writes) CHECK(write.rfind("PATCH ", 0) == 0);  // apply, never PUT
    CHECK(host.resolver.asked == std::vector<std::string>{"pypi.org"});
    const auto applied = host.server.requestsTo("PATCH", kNamespaces + "/team1");
    REQUIRE(applied.size() == 1);
    CHECK(applied[0].url.find("fieldManager=rossoctl") != std::string::npos);
    json namespaceObject = json::parse(applied[0].body);
    CHECK(namespaceObject["metadata"]["labels"]["rossoctl.dev/sandbox-project"] == "true");
    CHECK(host.out.str().find("namespace/team1 created") != std::string::npos);
    CHECK(host.out.str().find("Project team1 is ready.") != std::string::npos);
    bool pinned = false;  // the resolved address went into a policy
    for (const auto& request : host.server.requests)
        pinned = pinned || request.body.find("151.101.0.223") != std::string::npos;
    CHECK(pinned);
    CHECK(host.err.str().find("quota controller") == std::string::npos);
}

TEST_CASE("project create waits for the quota status on a watch, without polling",
          "[project][command]") {
    TestHost host;
    json pending = {{"metadata", {{"name", "sandbox-quota"}, {"resourceVersion", "3"}}}};
    json counted = pending;
    counted["metadata"]["resourceVersion"] = "4";
    counted["status"] = {{"hard", {{"pods", "20"}}}};
    host.server.onJson("GET", kNamespaces + "/team1", 200, projectNamespace("team1"));
    host.server.on("PATCH", "/*", 200, R"({"metadata":{"resourceVersion":"7"}})");
    host.server.onJson("GET", kNamespaces + "/team1/resourcequotas", 200, list({pending}));
    host.server.onStream("GET", kNamespaces + "/team1/resourcequotas?watch=true",
                         {watchEvent("MODIFIED", counted)});
    REQUIRE(host.run({"project", "create", "team1", "--no-dns", "--no-check"}) == 0);
    auto watches = host.server.requestsTo("GET", kNamespaces + "/team1/resourcequotas");
    REQUIRE(watches.size() == 2);  // one LIST, one watch from its resourceVersion
    CHECK(watches[1].url.find("resourceVersion=10") != std::string::npos);
    CHECK(host.clock.totalSlept().count() == 0);
    CHECK(host.err.str().find("quota controller") == std::string::npos);
}

TEST_CASE("project create warns when the quota is not counted in time", "[project][command]") {
    TestHost host;
    host.server.latency = std::chrono::seconds(1);  // time passes only with requests
    json pending = {{"metadata", {{"name", "sandbox-quota"}, {"resourceVersion", "3"}}}};
    host.server.onJson("GET", kNamespaces + "/team1", 200, projectNamespace("team1"));
    host.server.on("PATCH", "/*", 200, R"({"metadata":{"resourceVersion":"7"}})");
    host.server.onJson("GET", kNamespaces + "/team1/resourcequotas", 200, list({pending}));
    host.server.onStream("GET", kNamespaces + "/team1/resourcequotas?watch=true",
                         {watchEvent("MODIFIED", pending)});
    REQUIRE(host.run({"project", "create", "team1", "--no-check"}) == 0);
    CHECK(host.err.str().find("Warning: the quota controller has not counted usage in team1") !=
          std::string::npos);
}

TEST_CASE("project create refuses a namespace rossoctl did not make, writing nothing",
          "[project][command]") {
    TestHost host;
    host.server.on("GET", kNamespaces + "/legacy", 200,
                   R"({"metadata":{"name":"legacy"},"status":{"phase":"Active"}})");
    CHECK(host.run({"project", "create", "legacy"}) == kExitError);
    CHECK(host.err.str().find("not a rossoctl project") != std::string::npos);
    CHECK(host.server.writes().empty());
}

TEST_CASE("project create --allow-host with a name that does not resolve sends nothing",
          "[project][command]") {
    TestHost host;
    CHECK(host.run({"project", "create", "team1", "--allow-host", "nowhere.invalid"}) ==
          kExitError);
    CHECK(host.resolver.asked == std::vector<std::string>{"nowhere.invalid"});
    CHECK(host.server.writes().empty());
    CHECK(host.err.str().find("nowhere.invalid") != std::string::npos);
}

TEST_CASE("project create without permission names the verb and what to do", "[project][command]") {
    TestHost host;
    host.server.on("PATCH", kNamespaces + "/team1", 403,
                   statusBody(403, "Forbidden", "namespaces \"team1\" is forbidden"));
    CHECK(host.run({"project", "create", "team1", "--no-check"}) == kExitError);
    CHECK(host.err.str().find("Error from server (Forbidden): missing permission: patch") !=
          std::string::npos);
    CHECK(host.err.str().find("Written before this: nothing") != std::string::npos);
}

TEST_CASE("project create --dry-run=client prints and sends nothing that writes",
          "[project][command]") {
    TestHost host;
    REQUIRE(host.run({"project", "create", "team1", "--dry-run=client", "-o", "json"}) == 0);
    CHECK(host.server.writes().empty());
    json printed = testing::printedJson(host.out.str());
    CHECK(printed["items"][0]["kind"] == "Namespace");
}

TEST_CASE("project delete refuses bad input and unconfirmed deletes before sending",
          "[project][command]") {
    std::vector<std::vector<std::string>> bad = {
        {"project", "delete", "Team_1", "--yes"},
        {"project", "delete", "team1", "--yes", "--timeout", "soon"},
        {"project", "delete", "team1"},  // no --yes and stdin is not a terminal
    };
    testing::checkUsageErrors(bad);
}

TEST_CASE("project delete removes the rules, then the namespace, and watches it go",
          "[project][command]") {
    TestHost host;
    json terminating = projectNamespace("team1", "Terminating");
    host.server.onJson("GET", kNamespaces + "/team1", 200, projectNamespace("team1"));
    host.server.onJson("GET", kNamespaces, 200, list({terminating}));
    host.server.onStream("GET", kNamespaces + "?watch=true", {watchEvent("DELETED", terminating)});
    for (const std::string& path :
         {kNamespaces + "/team1/limitranges/sandbox-limits",
          kNamespaces + "/team1/resourcequotas/sandbox-quota", kNamespaces + "/team1"})
        host.server.on("DELETE", path, 200, "{}");
    REQUIRE(host.run({"project", "delete", "team1", "--yes"}) == 0);
    auto writes = host.server.writes();
    REQUIRE(writes.size() >= 3);
    CHECK(writes.back() == "DELETE /api/v1/namespaces/team1");
    CHECK(host.out.str().find("namespace/team1 deleted\n") != std::string::npos);
    CHECK(host.out.str().find("namespace/team1 is gone\n") != std::string::npos);
    CHECK(host.clock.totalSlept().count() == 0);
    const auto watch = host.server.requests.back();
    CHECK(watch.url.find("fieldSelector=metadata.name%3Dteam1") != std::string::npos);
}

TEST_CASE("project delete deletes only the namespace it checked (its UID as precondition)",
          "[project][command][hostile]") {
    TestHost host;
    json checked = projectNamespace("team1");
    checked["metadata"]["uid"] = "uid-checked";
    host.server.onJson("GET", kNamespaces + "/team1", 200, checked);
    for (const std::string& path :
         {kNamespaces + "/team1/limitranges/sandbox-limits",
          kNamespaces + "/team1/resourcequotas/sandbox-quota", kNamespaces + "/team1"})
        host.server.on("DELETE", path, 200, "{}");
    REQUIRE(host.run({"project", "delete", "team1", "--yes", "--wait=false"}) == 0);
    const auto deletes = host.server.requestsTo("DELETE", kNamespaces + "/team1");
    REQUIRE(deletes.size() == 1);
    const json options = json::parse(deletes[0].body);
    CHECK(options["preconditions"]["uid"] == "uid-checked");
}

TEST_CASE("project delete says how long it waited when the namespace stays", "[project][command]") {
    TestHost host;
    host.server.latency = std::chrono::seconds(5);
    json terminating = projectNamespace("team1", "Terminating");
    host.server.onJson("GET", kNamespaces + "/team1", 200, terminating);
    host.server.onJson("GET", kNamespaces, 200, list({terminating}));
    host.server.onStream("GET", kNamespaces + "?watch=true", {watchEvent("MODIFIED", terminating)});
    CHECK(host.run({"project", "delete", "team1", "--yes", "--timeout", "30s"}) == kExitError);
    CHECK(host.err.str().find("timed out after 30s waiting for namespace \"team1\" to be deleted "
                              "(it is Terminating)") != std::string::npos);
    CHECK(host.server.writes().empty());  // already terminating: nothing more to delete
}

TEST_CASE("project delete of a missing project or a foreign namespace changes nothing",
          "[project][command]") {
    TestHost missing;
    CHECK(missing.run({"project", "delete", "ghost", "--yes"}) == kExitError);
    CHECK(missing.err.str().find("project \"ghost\" does not exist") != std::string::npos);
    CHECK(missing.server.writes().empty());

    TestHost foreign;
    foreign.server.on("GET", kNamespaces + "/legacy", 200, R"({"metadata":{"name":"legacy"}})");
    CHECK(foreign.run({"project", "delete", "legacy", "--yes"}) == kExitError);
    CHECK(foreign.err.str().find("pass --force") != std::string::npos);
    CHECK(foreign.server.writes().empty());
}

TEST_CASE("project delete reports a refused delete with what was already done",
          "[project][command]") {
    TestHost host;
    host.server.onJson("GET", kNamespaces + "/team1", 200, projectNamespace("team1"));
    host.server.on("DELETE", kNamespaces + "/team1/resourcequotas/sandbox-quota", 403,
                   statusBody(403, "Forbidden", "resourcequotas is forbidden"));
    CHECK(host.run({"project", "delete", "team1", "--yes"}) == kExitError);
    CHECK(host.err.str().find("missing permission: delete") != std::string::npos);
    CHECK(host.err.str().find("project delete team1 --yes\" again to finish") != std::string::npos);
    CHECK(host.server.requestsTo("DELETE", kNamespaces + "/team1").empty());
}

TEST_CASE("project delete that fails part-way names what it deleted and how to finish",
          "[project][command]") {
    TestHost host;
    host.server.onJson("GET", kNamespaces + "/team1", 200, projectNamespace("team1"));
    host.server.on("DELETE", kNamespaces + "/team1/limitranges/sandbox-limits", 200, "{}");
    host.server.on("DELETE", kNamespaces + "/team1/resourcequotas/sandbox-quota", 500,
                   statusBody(500, "InternalError", "etcd is away"));
    CHECK(host.run({"project", "delete", "team1", "--yes"}) == kExitError);
    CHECK(host.out.str() == "limitrange/sandbox-limits deleted\n");
    CHECK(host.err.str() ==
          "Error from server (InternalError): delete resourcequotas/sandbox-quota in namespace "
          "\"team1\" failed: etcd is away. Written before this: limitrange/sandbox-limits; run "
          "\"rossoctl project delete team1 --yes\" again to finish\n");
}

TEST_CASE("project delete on a terminal asks, shows the wait, clears it on Ctrl-C (130)",
          "[project][command]") {
    TestHost host;
    host.stdinIsTerminal = host.stderrIsTerminal = true;
    host.in.str("y\n");
    json terminating = projectNamespace("team1", "Terminating");
    host.server.onJson("GET", kNamespaces + "/team1", 200, projectNamespace("team1"));
    host.server.onJson("GET", kNamespaces + "/team1/pods", 200, list({json::object()}));
    host.server.on("DELETE", kNamespaces + "/team1", 200, "{}");
    host.server.onJson("GET", kNamespaces, 200, list({terminating}));
    host.server.onQuietWatch(kNamespaces + "?watch=true");
    host.server.onRequest = [&host](const kube::HttpRequest& request) {
        if (request.url.find("watch=true") != std::string::npos) host.cancel.cancel();
    };
    CHECK(host.run({"project", "delete", "team1"}) == 130);
    CHECK(host.out.str() == "namespace/team1 deleted\n");
    CHECK(host.err.str() ==
          "Delete project \"team1\" and everything in it (1 pod)? [y/N] "
          "waiting for namespace team1 to be deleted\r" +
              std::string(60, ' ') +
              "\rerror: interrupted while waiting for namespace \"team1\" to "
              "be deleted\n");
}

TEST_CASE("project delete on a terminal deletes nothing unless the answer is yes",
          "[project][command]") {
    for (const std::string answer : {"n\n", "\n", "", "yess\n", "N\n"}) {
        TestHost host;
        host.stdinIsTerminal = true;
        host.in.str(answer);
        host.server.onJson("GET", kNamespaces + "/team1", 200, projectNamespace("team1"));
        host.server.onJson("GET", kNamespaces + "/team1/pods", 200, list({}));
        INFO("answer: " << answer);
        CHECK(host.run({"project", "delete", "team1"}) == kExitError);
        CHECK(host.err.str() ==
              "Delete project \"team1\" and everything in it (0 pods)? [y/N] Nothing deleted.\n");
        CHECK(host.out.str().empty());
        CHECK(host.server.writes().empty());
    }
}

TEST_CASE("project delete on OpenShift deletes the Project; --wait=false does not watch",
          "[project][command]") {
    TestHost host;
    host.server.on("GET", "/apis/project.openshift.io", 200,
                   R"({"kind":"APIGroup","versions":[{"version":"v1"}]})");
    json checked = projectNamespace("team1");
    checked["metadata"]["uid"] = "uid-checked";
    host.server.onJson("GET", kNamespaces + "/team1", 200, checked);
    host.server.on("DELETE", "/apis/project.openshift.io/v1/projects/team1", 200, "{}");
    REQUIRE(host.run({"project", "delete", "team1", "--yes", "--wait=false"}) == 0);
    CHECK(host.out.str() == "project/team1 deleted\n");
    CHECK(host.server.writes().back() == "DELETE /apis/project.openshift.io/v1/projects/team1");
    // Only the project it checked: a namespace recreated by someone else meanwhile stays.
    const auto deletes =
        host.server.requestsTo("DELETE", "/apis/project.openshift.io/v1/projects/team1");
    REQUIRE(deletes.size() == 1);
    CHECK(json::parse(deletes[0].body)["preconditions"]["uid"] == "uid-checked");
    CHECK(host.server.requestsTo("DELETE", kNamespaces + "/team1").empty());
    CHECK(host.server.requestsTo("GET", kNamespaces).empty());
}

TEST_CASE("project describe shows quota, limits and egress in words", "[project][command]") {
    TestHost host;
    host.serveSandboxGroup();
    serveEmptyLists(host);
    host.server.onJson("GET", kNamespaces + "/team1", 200, projectNamespace("team1"));
    host.server.onJson(
        "GET", kNamespaces + "/team1/resourcequotas", 200,
        list({{{"metadata", {{"name", "sandbox-quota"}}},
               {"status", {{"hard", {{"pods", "20"}}}, {"used", {{"pods", "3"}}}}}}}));
    host.server.onJson(
        "GET", "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies", 200,
        list({{{"metadata", {{"name", "default-deny"}}},
               {"spec",
                {{"podSelector", json::object()}, {"policyTypes", {"Ingress", "Egress"}}}}}}));
    REQUIRE(host.run({"project", "describe", "team1"}) == 0);
    CHECK(host.out.str().find("team1") != std::string::npos);
    CHECK(host.out.str().find("default-deny") != std::string::npos);
    CHECK(host.server.writes().empty());

    TestHost json_;
    serveEmptyLists(json_);
    json_.server.onJson("GET", kNamespaces + "/team1", 200, projectNamespace("team1"));
    REQUIRE(json_.run({"project", "describe", "team1", "-o", "json"}) == 0);
    json described = testing::printedJson(json_.out.str());
    CHECK(described["namespace"]["metadata"]["name"] == "team1");
    CHECK(described["sandboxes"] == json::array());  // the Sandbox API is not served
}

TEST_CASE("project describe: bad input, a missing project, a refusal", "[project][command]") {
    TestHost bad;
    CHECK(bad.run({"project", "describe", "Team_1"}) == kExitUsage);
    CHECK(bad.run({"project", "describe", "team1", "-o", "table"}) == kExitUsage);
    CHECK(bad.server.requests.empty());

    TestHost missing;
    CHECK(missing.run({"project", "describe", "ghost"}) == kExitError);
    CHECK(missing.err.str() ==
          "error: project \"ghost\" does not exist; see the projects with \"rossoctl project "
          "list\"\n");

    TestHost forbidden;
    forbidden.server.on("GET", kNamespaces + "/team1", 403,
                        statusBody(403, "Forbidden", "namespaces \"team1\" is forbidden"));
    CHECK(forbidden.run({"project", "describe", "team1"}) == kExitError);
    CHECK(forbidden.err.str() ==
          "Error from server (Forbidden): namespaces \"team1\" is forbidden\n");
}

TEST_CASE("project list shows labelled namespaces only", "[project][command]") {
    TestHost host;
    host.server.onJson("GET", kNamespaces, 200, list({projectNamespace("team1")}));
    REQUIRE(host.run({"project", "list"}) == 0);
    CHECK(host.server.last().url.find("labelSelector=rossoctl.dev%2Fsandbox-project%3Dtrue") !=
          std::string::npos);
    CHECK(host.out.str().find("NAME") == 0);
    CHECK(host.out.str().find("team1") != std::string::npos);
    CHECK(host.out.str().find("restricted") != std::string::npos);

    TestHost names;
    names.server.onJson("GET", kNamespaces, 200, list({projectNamespace("team1")}));
    REQUIRE(names.run({"project", "list", "-o", "name"}) == 0);
    CHECK(names.out.str() == "namespace/team1\n");

    TestHost none;
    none.server.onJson("GET", kNamespaces, 200, list({}));
    REQUIRE(none.run({"project", "list"}) == 0);
    CHECK(none.out.str().empty());
    CHECK(none.err.str().find("No projects found") == 0);
}

TEST_CASE("project list: a bad -o sends nothing, a refusal is one line", "[project][command]") {
    TestHost bad;
    CHECK(bad.run({"project", "list", "-o", "csv"}) == kExitUsage);
    CHECK(bad.server.requests.empty());

    TestHost forbidden;
    forbidden.server.on("GET", kNamespaces, 403,
                        statusBody(403, "Forbidden", "namespaces is forbidden"));
    CHECK(forbidden.run({"project", "list"}) == kExitError);
    CHECK(forbidden.err.str() == "Error from server (Forbidden): namespaces is forbidden\n");
}

TEST_CASE("project create: a 409 part-way names what was written and how to finish",
          "[project][command]") {
    TestHost host;
    host.server.on("GET", kNamespaces + "/team1", 404, testing::kNotFoundBody);
    host.server.on("PATCH", kNamespaces + "/team1", 201, R"({"metadata":{"resourceVersion":"1"}})");
    const std::string deny =
        "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies/default-deny";
    host.server.on("PATCH", deny, 409,
                   statusBody(409, "Conflict",
                              "Operation cannot be fulfilled on networkpolicies \"default-deny\": "
                              "the object has been modified"));
    CHECK(host.run({"project", "create", "team1", "--no-check"}) == kExitError);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.find("the object has been modified") != std::string::npos);
    CHECK(err.find("Written before this: namespace/team1 created") != std::string::npos);
    CHECK(err.find("run \"rossoctl project create team1\" again, with the same flags, to finish") !=
          std::string::npos);
    // Nothing after the refused write was attempted.
    CHECK(host.server.writes() ==
          std::vector<std::string>{"PATCH /api/v1/namespaces/team1", "PATCH " + deny});
}
