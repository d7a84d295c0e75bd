// agents list -w and project list -w (issue 21, point 5), in the shape of sandbox list -w: the
// list, then each change as it happens, until Ctrl-C (130); --watch-only prints changes only.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;
using rossoctl::testing::watchEvent;

namespace {

const std::string kDeployments = "/apis/apps/v1/namespaces/team1/deployments";
const std::string kNamespaces = "/api/v1/namespaces";

json deployment(const std::string& name, const std::string& version, int ready = 1) {
    return {
        {"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata",
         {{"name", name},
          {"namespace", "team1"},
          {"uid", "uid-" + name},
          {"resourceVersion", version},
          {"creationTimestamp", "2023-11-14T22:00:00Z"},
          {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}},
        {"spec",
         {{"replicas", 1},
          {"template", {{"spec", {{"containers", {{{"name", "agent"}, {"image", "nginx"}}}}}}}}}},
        {"status", {{"replicas", 1}, {"readyReplicas", ready}, {"availableReplicas", ready}}}};
}

json project(const std::string& name, const std::string& version,
             const std::string& phase = "Active") {
    return {{"apiVersion", "v1"},
            {"kind", "Namespace"},
            {"metadata",
             {{"name", name},
              {"resourceVersion", version},
              {"creationTimestamp", "2023-11-14T22:00:00Z"},
              {"labels",
               {{"rossoctl.dev/sandbox-project", "true"},
                {"app.kubernetes.io/managed-by", "rossoctl"}}}}},
            {"status", {{"phase", phase}}}};
}

// Ctrl-C when `path` is watched for the `nth` time (its first stream has been printed).
void cancelOnWatch(TestHost& host, const std::string& path, int nth) {
    auto watches = std::make_shared<int>(0);
    host.server.onRequest = [&host, watches, path, nth](const kube::HttpRequest& request) {
        if (request.url.find(path + "?") != std::string::npos &&
            request.url.find("watch=true") != std::string::npos && ++*watches == nth)
            host.cancel.cancel();
    };
}

// Deployment "orders" changes, "billing" comes and "orders" goes; every other agent kind is
// listed empty and watched quietly.
void serveAgentChanges(TestHost& host) {
    host.serveSandboxGroup();
    host.server.onJson("GET", kDeployments, 200, list({deployment("orders", "5")}));
    host.server.onStream("GET", kDeployments + "?watch=true",
                         {watchEvent("MODIFIED", deployment("orders", "11", 0)),
                          watchEvent("ADDED", deployment("billing", "12")),
                          watchEvent("DELETED", deployment("orders", "13", 0))});
    host.server.onStream("GET", kDeployments + "?watch=true", {});
    for (const std::string path :
         {"/apis/apps/v1/namespaces/team1/statefulsets", "/apis/batch/v1/namespaces/team1/jobs",
          "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes"}) {
        host.server.onJson("GET", path, 200, list({}));
        host.server.onQuietWatch(path + "?watch=true");
    }
    cancelOnWatch(host, kDeployments, 2);
}

}  // namespace

TEST_CASE("agents list -w prints the list, then each change of any kind, until Ctrl-C (130)",
          "[agents][command][watch]") {
    TestHost host;
    serveAgentChanges(host);
    CHECK(host.run({"agents", "list", "-w"}) == 130);
    const std::string out = host.out.str();
    INFO(out << host.err.str());
    CHECK(std::count(out.begin(), out.end(), '\n') == 5);  // header, list, three changes
    CHECK(out.rfind("NAME", 0) == 0);
    CHECK(out.find("NAME", 1) == std::string::npos);  // one header
    CHECK(out.find("0/1") != std::string::npos);      // orders, no longer ready
    CHECK(out.find("billing") != std::string::npos);
    CHECK(host.server.writes().empty());
    // Each kind is watched from its own list's version, with the managed-by selector.
    auto watches = host.server.requestsTo("GET", kDeployments);
    REQUIRE(watches.size() >= 2);
    CHECK(watches[1].url.find("resourceVersion=10") != std::string::npos);
    CHECK(watches[1].url.find("managed-by%3Drossoctl") != std::string::npos);
    // Every kind was listed (its watch may not have started before Ctrl-C came).
    CHECK_FALSE(host.server.requestsTo("GET", "/apis/batch/v1/namespaces/team1/jobs").empty());
}

TEST_CASE("agents list --watch-only -o name or a template prints only changes",
          "[agents][command][watch]") {
    TestHost host;
    serveAgentChanges(host);
    CHECK(host.run({"agents", "list", "--watch-only", "-o", "name"}) == 130);
    CHECK(host.out.str() ==
          "deployment.apps/orders\ndeployment.apps/billing\ndeployment.apps/orders\n");

    TestHost templated;  // each change through the template, as kubectl get -w -o jsonpath
    serveAgentChanges(templated);
    CHECK(templated.run({"agents", "list", "--watch-only", "-o",
                         R"(jsonpath={.kind}/{.metadata.name}{"\n"})"}) == 130);
    CHECK(templated.out.str() == "Deployment/orders\nDeployment/billing\nDeployment/orders\n");

    rossoctl::testing::checkUsageErrors(
        {{"agents", "list", "-w", "-o", "jsonpath={.metadata[name"}});
}

TEST_CASE("project list -w prints the projects, then each change, until Ctrl-C (130)",
          "[project][command][watch]") {
    TestHost host;
    host.server.onJson("GET", kNamespaces, 200, list({project("team1", "7")}));
    host.server.onStream("GET", kNamespaces + "?watch=true",
                         {watchEvent("ADDED", project("team2", "11")),
                          watchEvent("MODIFIED", project("team1", "12", "Terminating")),
                          watchEvent("DELETED", project("team1", "13", "Terminating"))});
    host.server.onStream("GET", kNamespaces + "?watch=true", {});
    cancelOnWatch(host, kNamespaces, 2);
    CHECK(host.run({"project", "list", "-w"}) == 130);
    const std::string out = host.out.str();
    INFO(out << host.err.str());
    CHECK(std::count(out.begin(), out.end(), '\n') == 5);  // header, list, three changes
    CHECK(out.find("NAME", 1) == std::string::npos);
    CHECK(out.find("team2") != std::string::npos);
    CHECK(out.find("Terminating") != std::string::npos);
    auto watches = host.server.requestsTo("GET", kNamespaces);
    REQUIRE(watches.size() >= 2);
    CHECK(watches[1].url.find("resourceVersion=10") != std::string::npos);
    CHECK(watches[1].url.find("sandbox-project%3Dtrue") != std::string::npos);
    CHECK(host.server.writes().empty());
}

TEST_CASE("project list --watch-only -o yaml is one stream of documents; a bad template refused",
          "[project][command][watch]") {
    TestHost host;
    host.server.onJson("GET", kNamespaces, 200, list({project("team1", "7")}));
    host.server.onStream(
        "GET", kNamespaces + "?watch=true",
        {watchEvent("ADDED", project("team2", "11")), watchEvent("ADDED", project("team3", "12"))});
    host.server.onStream("GET", kNamespaces + "?watch=true", {});
    cancelOnWatch(host, kNamespaces, 2);
    CHECK(host.run({"project", "list", "--watch-only", "-o", "yaml"}) == 130);
    const std::string out = host.out.str();
    // As kubectl: "---" between documents, nothing before the first.
    CHECK(out.rfind("---", 0) != 0);
    const auto separator = out.find("\n---\n");
    REQUIRE(separator != std::string::npos);
    CHECK(out.find("\n---\n", separator + 1) == std::string::npos);
    CHECK(out.find("name: team2") < separator);
    CHECK(out.find("name: team3") > separator);
    CHECK(out.find("name: team1") == std::string::npos);  // listed, not changed

    TestHost templated;
    CHECK(templated.run({"project", "list", "--watch", "-o", "custom-columns=N"}) == kExitUsage);
    CHECK(templated.server.requests.empty());
}
