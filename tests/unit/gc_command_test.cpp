// rossoctl gc against a routed fake apiserver: one leaked object of each kind found with its
// reason, --dry-run deletes nothing, deletes carry UID + resourceVersion, 403/404/409 read well.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kClaims =
    "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/team1/sandboxclaims";
const std::string kRuntimes = "/apis/agent.rossoctl.dev/v1alpha1/namespaces/team1/agentruntimes";
const std::string kRunSelector = "?labelSelector=rossoctl.dev%2Frun%3Dtrue";
const std::string kWarmSelector = "?labelSelector=rossoctl.dev%2Fpool%3Dwarm";

// A process of this machine and pid namespace that cannot exist (above any pid_max), and one
// of another host.
std::string deadOwner() {
    testing::CountingRandom random;
    const std::string me = app::run::currentRunOwner(random);
    const auto pid = me.find(";pid=") + 5;
    return me.substr(0, pid) + "4194999" + me.substr(me.find(';', pid));
}
const std::string kLiveOwner = "some-other-host/1/1";

json object(const std::string& name, json extra = json::object()) {
    json item = {{"metadata",
                  {{"name", name},
                   {"namespace", "team1"},
                   {"uid", "uid-" + name},
                   {"resourceVersion", "7"},
                   {"creationTimestamp", "2023-11-14T21:00:00Z"},
                   {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}}};
    item.merge_patch(extra);
    return item;
}

json owned(const std::string& owner) {
    return {{"metadata", {{"annotations", {{app::run::kRunOwnerAnnotation, owner}}}}}};
}

// Expired, but a SandboxClaim controls it: left to its owner.
json pooledSandbox() {
    json sandbox = object("pooled", {{"spec", {{"shutdownTime", "2023-11-14T22:00:00Z"}}}});
    sandbox["metadata"]["ownerReferences"] =
        json::array({{{"kind", "SandboxClaim"}, {"controller", true}}});
    return sandbox;
}

// One leaked object of each kind, each beside one that must be kept.
void serveCluster(TestHost& host, long claimsStatus = 200,
                  const std::vector<json>& moreSandboxes = {}) {
    host.serveGroups();
    host.server.on("GET", "/apis/extensions.agents.x-k8s.io", 200,
                   R"({"kind":"APIGroup","name":"extensions.agents.x-k8s.io",)"
                   R"("versions":[{"version":"v1beta1"}]})");
    std::vector<json> sandboxes = {
        object("expired", {{"spec", {{"shutdownTime", "2023-11-14T22:00:00Z"}}}}),
        object("running", {{"spec", {{"shutdownTime", "2023-11-15T22:00:00Z"}}}}), pooledSandbox()};
    sandboxes.insert(sandboxes.begin(), moreSandboxes.begin(), moreSandboxes.end());
    host.server.onJson("GET", kSandboxes, 200, list(sandboxes));
    json orphan = object("run-orphan", owned(deadOwner()));
    orphan["status"]["phase"] = "Running";
    json live = object("run-live", owned(kLiveOwner));
    live["status"]["phase"] = "Running";
    for (auto* pod : {&orphan, &live}) (*pod)["metadata"]["labels"][app::run::kRunLabel] = "true";
    host.server.onJson("GET", kPods + kRunSelector, 200, list({orphan, live}));
    json ended = object("warm-ended", {{"status", {{"phase", "Failed"}}}});
    json warm = object("warm-ok", {{"status", {{"phase", "Running"}}}});
    host.server.onJson("GET", kPods + kWarmSelector, 200, list({ended, warm}));
    if (claimsStatus != 200)
        host.server.on(
            "GET", kClaims + kRunSelector, claimsStatus,
            statusBody(claimsStatus, "Forbidden", "sandboxclaims is forbidden: User \"dev\""));
    host.server.onJson(
        "GET", kClaims + kRunSelector, 200,
        list({object("claim-expired",
                     {{"spec", {{"lifecycle", {{"shutdownTime", "2023-11-14T22:10:00Z"}}}}}}),
              object("claim-orphan", owned(deadOwner())), object("claim-live", owned(kLiveOwner)),
              // run --pool --keep: no process to outlive, kept until its shutdownTime (walk 6 M1)
              object("claim-kept",
                     {{"metadata", {{"annotations", {{app::run::kKeptAnnotation, "true"}}}}},
                      {"spec", {{"lifecycle", {{"shutdownTime", "2099-01-01T00:00:00Z"}}}}}})}));
    host.server.onJson(
        "GET", kRuntimes, 200,
        list({object("lost", {{"spec", {{"targetRef", {{"kind", "Sandbox"}, {"name", "gone"}}}}}}),
              object("kept",
                     {{"spec", {{"targetRef", {{"kind", "Sandbox"}, {"name", "running"}}}}}})}));
    host.server.onJson("GET", kSandboxes + "/running", 200, object("running"));
}

const std::vector<std::string> kDeletes = {
    "DELETE " + kSandboxes + "/expired",   "DELETE " + kPods + "/run-orphan",
    "DELETE " + kPods + "/warm-ended",     "DELETE " + kClaims + "/claim-expired",
    "DELETE " + kClaims + "/claim-orphan", "DELETE " + kRuntimes + "/lost"};

void acceptDeletes(TestHost& host) {
    for (const auto& write : kDeletes) host.server.on("DELETE", write.substr(7), 200, "{}");
}

}  // namespace

TEST_CASE("gc: every help example parses and validates", "[gc][command]") {
    testing::checkHelpExamples({"gc"});
}

TEST_CASE("gc rejects bad input before sending anything", "[gc][command]") {
    testing::checkUsageErrors({{"gc", "--older-than", "soon"},
                               {"gc", "--older-than", "-1h"},
                               {"gc", "--dry-run=maybe"},
                               {"gc", "x"}});
}

TEST_CASE("gc --dry-run lists one leak of each kind with its reason and deletes nothing",
          "[gc][command]") {
    TestHost host;
    serveCluster(host);
    REQUIRE(host.run({"gc", "--dry-run"}) == 0);
    CHECK(host.server.writes().empty());
    const std::string out = host.out.str();
    CHECK(out.rfind("KIND", 0) == 0);
    CHECK(out.find("AGE") != std::string::npos);
    CHECK(out.find("Sandbox        expired") != std::string::npos);
    CHECK(out.find("past its spec.shutdownTime 2023-11-14T22:00:00Z") != std::string::npos);
    // The owner read as a person reads it: its pid, never the token or the machine's ids.
    CHECK(out.find("its rossoctl process (pid 4194999 on this machine) is gone") !=
          std::string::npos);
    CHECK(out.find("token") == std::string::npos);
    CHECK(out.find("v2;") == std::string::npos);
    CHECK(out.find("warm pool pod ended (Failed)") != std::string::npos);
    CHECK(out.find("run claim past its shutdownTime") != std::string::npos);
    CHECK(out.find("its target Sandbox/gone is gone") != std::string::npos);
    for (const char* kept :
         {"running", "pooled", "run-live", "warm-ok", "claim-live", "claim-kept", "kept"})
        CHECK(out.find(std::string(" ") + kept + " ") == std::string::npos);
    CHECK(std::count(out.begin(), out.end(), '\n') == 7);
    CHECK(host.err.str() == "6 objects would be deleted (dry run)\n");
}

TEST_CASE("gc deletes each leak with UID and resourceVersion preconditions", "[gc][command]") {
    TestHost host;
    serveCluster(host);
    acceptDeletes(host);
    REQUIRE(host.run({"gc"}) == 0);
    CHECK(host.server.writes() == kDeletes);
    const auto sent = host.server.requestsTo("DELETE", kSandboxes + "/expired");
    REQUIRE(sent.size() == 1);
    const json body = json::parse(sent[0].body);
    CHECK(body["preconditions"] == json({{"uid", "uid-expired"}, {"resourceVersion", "7"}}));
    CHECK(host.err.str() == "deleted 6 of 6 objects\n");
}

TEST_CASE("gc: nothing to collect, --older-than, every namespace", "[gc][command]") {
    TestHost young;
    serveCluster(young);
    REQUIRE(young.run({"gc", "--older-than", "2h"}) == 0);
    CHECK(young.out.str().empty());
    CHECK(young.err.str() == "Nothing to collect in namespace team1.\n");
    CHECK(young.server.writes().empty());

    TestHost all;
    all.serveGroups();
    all.server.onJson(
        "GET", "/apis/agents.x-k8s.io/v1beta1/sandboxes", 200,
        list({object("expired", {{"metadata", {{"namespace", "team9"}}},
                                 {"spec", {{"shutdownTime", "2020-01-01T00:00:00Z"}}}})}));
    all.server.onJson("GET", "/api/v1/pods", 200, list({}));
    all.server.onJson("GET", "/apis/agent.rossoctl.dev/v1alpha1/agentruntimes", 200, list({}));
    REQUIRE(all.run({"gc", "-A", "--dry-run"}) == 0);
    CHECK(all.out.str().rfind("NAMESPACE   KIND", 0) == 0);
    CHECK(all.out.str().find("team9       Sandbox   expired") != std::string::npos);
}

TEST_CASE("gc: a forbidden kind is reported and the others still run", "[gc][command]") {
    TestHost host;
    serveCluster(host, 403);
    acceptDeletes(host);
    CHECK(host.run({"gc"}) == kExitError);
    CHECK(host.err.str().find("error: cannot list sandboxclaims.extensions.agents.x-k8s.io in "
                              "team1: ") == 0);
    CHECK(host.err.str().find("sandboxclaims is forbidden") != std::string::npos);
    CHECK(host.server.writes() ==
          std::vector<std::string>{kDeletes[0], kDeletes[1], kDeletes[2], kDeletes[5]});
    CHECK(host.err.str().find("deleted 4 of 4 objects") != std::string::npos);
}

TEST_CASE("gc: an object changed since it was listed (409) is kept; one gone (404) counts",
          "[gc][command]") {
    TestHost host;
    serveCluster(host);
    host.server.on("DELETE", kSandboxes + "/expired", 409,
                   statusBody(409, "Conflict", "Precondition failed: ResourceVersion"));
    host.server.on("DELETE", kRuntimes + "/lost", 404, testing::kNotFoundBody);
    host.server.on("DELETE", kPods + "/run-orphan", 403,
                   statusBody(403, "Forbidden", "pods \"run-orphan\" is forbidden"));
    acceptDeletes(host);  // after the answers above, which come first on their routes
    CHECK(host.run({"gc"}) == kExitError);
    const std::string err = host.err.str();
    CHECK(err.find("error: sandbox.agents.x-k8s.io/expired changed since it was listed and was "
                   "kept; run gc again") != std::string::npos);
    CHECK(err.find("error: cannot delete pod/run-orphan: ") != std::string::npos);
    CHECK(err.find("pods \"run-orphan\" is forbidden") != std::string::npos);
    CHECK(err.find("deleted 4 of 6 objects") != std::string::npos);
}

TEST_CASE("gc never deletes what rossoctl did not make, nor a Sandbox that retains its data",
          "[gc][command][hostile]") {
    TestHost host;
    host.serveGroups();
    json foreign =
        object("notebook",
               {{"metadata", {{"labels", {{"app.kubernetes.io/managed-by", "jupyter-operator"}}}}},
                {"spec",
                 {{"shutdownTime", "2020-01-01T00:00:00Z"},
                  {"shutdownPolicy", "Retain"},
                  {"volumeClaimTemplates", {{{"metadata", {{"name", "home"}}}}}}}}});
    json unlabelled = object("bare", {{"spec", {{"shutdownTime", "2020-01-01T00:00:00Z"}}}});
    unlabelled["metadata"].erase("labels");
    json retained =
        object("data", {{"spec",
                         {{"shutdownTime", "2020-01-01T00:00:00Z"},
                          {"shutdownPolicy", "Retain"},
                          {"volumeClaimTemplates", {{{"metadata", {{"name", "work"}}}}}}}}});
    // A server that ignores the label selector answers with everything it has.
    host.server.onJson("GET", "/apis/agents.x-k8s.io/v1beta1/sandboxes", 200,
                       list({foreign, unlabelled, retained}));
    json foreignPod = object("their-run", owned(deadOwner()));
    foreignPod["metadata"]["labels"] = {{app::run::kRunLabel, "true"}};
    foreignPod["status"]["phase"] = "Failed";
    host.server.onJson("GET", "/api/v1/pods", 200, list({foreignPod}));
    host.server.onJson("GET", "/apis/agent.rossoctl.dev/v1alpha1/agentruntimes", 200, list({}));
    host.server.on("DELETE", "*", 200, "{}");
    REQUIRE(host.run({"gc", "-A", "--yes"}) == 0);
    CHECK(host.server.writes().empty());
    CHECK(host.out.str().empty());
    CHECK(host.err.str().find("note: sandbox data is past its shutdownTime but keeps its volume "
                              "claims") != std::string::npos);
    CHECK(host.err.str().find("Nothing to collect in any namespace.") != std::string::npos);
    const auto lists = host.server.requestsTo("GET", "/apis/agents.x-k8s.io/v1beta1/sandboxes");
    REQUIRE(lists.size() == 1);
    CHECK(lists[0].url.find("labelSelector=app.kubernetes.io%2Fmanaged-by%3Drossoctl") !=
          std::string::npos);
}

TEST_CASE("gc on a terminal lists what it found and asks before deleting",
          "[gc][command][hostile]") {
    TestHost declined;
    serveCluster(declined);
    acceptDeletes(declined);
    declined.stdinIsTerminal = true;
    declined.in.str("n\n");
    CHECK(declined.run({"gc"}) == kExitError);
    CHECK(declined.server.writes().empty());
    CHECK(declined.out.str().find("Sandbox        expired") != std::string::npos);
    CHECK(declined.err.str() == "Delete 6 objects? [y/N] Nothing deleted.\n");

    TestHost agreed;
    serveCluster(agreed);
    acceptDeletes(agreed);
    agreed.stdinIsTerminal = true;
    agreed.in.str("y\n");
    CHECK(agreed.run({"gc"}) == 0);
    CHECK(agreed.server.writes() == kDeletes);

    TestHost told;  // --yes: no question, even on a terminal
    serveCluster(told);
    acceptDeletes(told);
    told.stdinIsTerminal = true;
    CHECK(told.run({"gc", "--yes"}) == 0);
    CHECK(told.server.writes() == kDeletes);
    CHECK(told.err.str() == "deleted 6 of 6 objects\n");
}

TEST_CASE("gc never deletes a collection, nor in a namespace it was not asked for",
          "[gc][command][hostile]") {
    // A listed pod with name "" made DELETE /api/v1/namespaces/team1/pods, a deletecollection,
    // and gc deleted in whatever metadata.namespace an item named (review 29, H5).
    auto runPod = [](const std::string& name, const std::string& ns) {
        json pod = object(name, {{"status", {{"phase", "Succeeded"}}}});
        pod["metadata"]["namespace"] = ns;
        pod["metadata"]["labels"][app::run::kRunLabel] = "true";
        return pod;
    };
    TestHost host;
    host.serveGroups();
    host.server.onJson("GET", kSandboxes, 200, list({}));
    host.server.onJson("GET", kPods + kRunSelector, 200,
                       list({runPod("", "team1"), runPod("victim", "kube-system"),
                             runPod("..", "team1"), runPod("ended", "team1")}));
    host.server.onJson("GET", kPods + kWarmSelector, 200, list({runPod("", "team1")}));
    host.server.onJson("GET", kRuntimes, 200, list({}));
    host.server.on("DELETE", "*", 200, "{}");
    CHECK(host.run({"gc", "--yes"}) == kExitError);
    CHECK(host.server.writes() == std::vector<std::string>{"DELETE " + kPods + "/ended"});
    const std::string err = host.err.str();
    CHECK(err.find("skipped a Pod listed in team1: its name \"\" is empty") != std::string::npos);
    CHECK(err.find("its name \"..\" is not a name") != std::string::npos);
    CHECK(err.find("listed in team1 but its metadata.namespace is \"kube-system\"") !=
          std::string::npos);
    CHECK(err.find("deleted 1 of 1 object") != std::string::npos);

    // -A: each item's own namespace, which must be there and valid.
    TestHost all;
    all.serveGroups();
    all.server.onJson("GET", "/apis/agents.x-k8s.io/v1beta1/sandboxes", 200, list({}));
    all.server.onJson(
        "GET", "/api/v1/pods" + kRunSelector, 200,
        list({runPod("nowhere", ""), runPod("slash", "a/b"), runPod("ended", "team9")}));
    all.server.onJson("GET", "/api/v1/pods" + kWarmSelector, 200, list({}));
    all.server.onJson("GET", "/apis/agent.rossoctl.dev/v1alpha1/agentruntimes", 200, list({}));
    all.server.on("DELETE", "*", 200, "{}");
    CHECK(all.run({"gc", "-A", "--yes"}) == kExitError);
    CHECK(all.server.writes() ==
          std::vector<std::string>{"DELETE /api/v1/namespaces/team9/pods/ended"});
    CHECK(all.err.str().find("its metadata.namespace \"\" is empty") != std::string::npos);
    CHECK(all.err.str().find("its metadata.namespace \"a/b\" holds '/' or '%'") !=
          std::string::npos);
}

// Review 47b finding 3: one listed object of the wrong shape threw out of the scan, and gc
// collected nothing at all.
TEST_CASE("gc: an object of the wrong shape is skipped and said, the rest still collected",
          "[gc][command][review47b]") {
    json strayOwner = object("stray-owner", {{"spec", {{"shutdownTime", "2023-11-14T22:00:00Z"}}}});
    strayOwner["metadata"]["ownerReferences"] = json::array({"x"});
    json numberedTime = object("numbered-time");
    numberedTime["metadata"]["creationTimestamp"] = 5;
    TestHost host;
    serveCluster(host, 200, {strayOwner, numberedTime});
    acceptDeletes(host);
    CHECK(host.run({"gc"}) == kExitError);
    INFO(host.err.str());
    CHECK(host.server.writes() == kDeletes);
    const std::string err = host.err.str();
    size_t skipped = 0;
    for (size_t at = 0; (at = err.find("skipped a Sandbox listed in team1: a field of another type",
                                       at)) != std::string::npos;
         ++at)
        ++skipped;
    CHECK(skipped == 2);
    CHECK(err.find("deleted 6 of 6 objects") != std::string::npos);
}

TEST_CASE("walk 6 M1: a claim run --pool --keep makes is marked kept, not owned by its process",
          "[gc][run]") {
    for (const bool keep : {false, true}) {
        TestHost host;
        host.server.onJson("POST", kClaims, 201, object("rossoctl-run-x"));
        app::run::createClaim(host.context().client(), host.clock, "team1", "py", 60, keep);
        const auto posts = host.server.requestsTo("POST", kClaims);
        REQUIRE(posts.size() == 1);
        const json annotations = json::parse(posts[0].body)["metadata"]["annotations"];
        INFO(annotations.dump());
        CHECK(annotations.contains(app::run::kKeptAnnotation) == keep);
        CHECK(annotations.contains(app::run::kRunOwnerAnnotation) == !keep);
    }
}
