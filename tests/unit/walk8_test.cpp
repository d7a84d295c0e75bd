// The sixth newcomer walkthrough (notes walk6, issue 34), its MINOR findings. Each case failed
// on the code before its fix.
#include <algorithm>
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kStatefulSets = "/apis/apps/v1/namespaces/team1/statefulsets";
const std::string kClaims = "/api/v1/namespaces/team1/persistentvolumeclaims";
const std::string kPods = "/api/v1/namespaces/team1/pods";

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

json managedLabels(const std::string& name) {
    return {{"app.kubernetes.io/managed-by", "rossoctl"}, {"app.kubernetes.io/name", name}};
}

json workClaimTemplate() {
    return {{"metadata", {{"name", "workspace"}}},
            {"spec", {{"resources", {{"requests", {{"storage", "100Mi"}}}}}}}};
}

// A claim of `name`, owned (as its controller) by the object with `ownerUid` when one is given.
json claim(const std::string& name, const std::string& ownerUid) {
    json claim = {{"metadata", {{"name", name}, {"namespace", "team1"}, {"uid", "pvc-" + name}}},
                  {"spec", {{"resources", {{"requests", {{"storage", "100Mi"}}}}}}}};
    if (!ownerUid.empty())
        claim["metadata"]["ownerReferences"] = {
            {{"kind", "Sandbox"}, {"name", "st1"}, {"uid", ownerUid}, {"controller", true}}};
    return claim;
}

}  // namespace

TEST_CASE("agents delete says that the volume claim --storage made goes with a sandbox agent",
          "[walk8][agents][command]") {
    // walk6 MINOR 14: the PVC workspace-st1 and its files were deleted without a word.
    TestHost host;
    host.serveGroups();
    json sandbox = testing::sandboxWithReason("st1");
    sandbox["metadata"]["labels"] = managedLabels("st1");
    sandbox["spec"]["volumeClaimTemplates"] = {workClaimTemplate()};
    host.server.onJson("GET", kSandboxes + "/st1", 200, sandbox);
    host.server.on("DELETE", kSandboxes + "/st1", 200, "{}");
    host.server.onJson("GET", kClaims + "/workspace-st1", 200, claim("workspace-st1", "uid-st1"));
    CHECK(host.run({"agents", "delete", "st1", "--wait=false"}) == kExitOk);
    INFO(host.err.str());
    CHECK(host.out.str() ==
          "sandbox.agents.x-k8s.io/st1 deleted\npersistentvolumeclaim/workspace-st1 deleted\n");
    CHECK(host.err.str() ==
          "note: what agent st1 kept on /workspace (persistentvolumeclaim/workspace-st1, made "
          "by --storage) is deleted with it\n");
    CHECK(host.server.writes() == std::vector<std::string>{"DELETE " + kSandboxes + "/st1"});
}

TEST_CASE("agents delete says that a StatefulSet agent's volume claim is kept",
          "[walk8][agents][command]") {
    TestHost host;
    host.serveGroups();
    json statefulSet = {
        {"apiVersion", "apps/v1"},
        {"kind", "StatefulSet"},
        {"metadata",
         {{"name", "st2"},
          {"namespace", "team1"},
          {"uid", "uid-st2"},
          {"labels", managedLabels("st2")}}},
        {"spec", {{"replicas", 1}, {"volumeClaimTemplates", {workClaimTemplate()}}}}};
    host.server.onJson("GET", kStatefulSets + "/st2", 200, statefulSet);
    host.server.on("DELETE", kStatefulSets + "/st2", 200, "{}");
    host.server.onJson("GET", kClaims + "/workspace-st2-0", 200, claim("workspace-st2-0", ""));
    CHECK(host.run({"agents", "delete", "st2", "--wait=false"}) == kExitOk);
    INFO(host.err.str());
    CHECK(host.out.str() == "statefulset.apps/st2 deleted\n");
    CHECK(host.err.str() ==
          "note: persistentvolumeclaim/workspace-st2-0 is kept (a StatefulSet leaves its volume "
          "claims): what agent st2 wrote to /workspace is still there, and a new import of st2 "
          "with --storage uses it again; delete it with \"kubectl -n team1 delete pvc "
          "workspace-st2-0\"\n");
}

namespace {

const std::string kNamespaces = "/api/v1/namespaces";
const std::string kPolicies = "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies";
const std::string kQuota = "/api/v1/namespaces/team1/resourcequotas/sandbox-quota";

json quotaObject(const std::string& memory, const std::string& version) {
    return {{"metadata", {{"name", "sandbox-quota"}, {"resourceVersion", version}}},
            {"spec",
             {{"hard",
               {{"limits.cpu", "4"},
                {"requests.cpu", "4"},
                {"limits.memory", memory},
                {"requests.memory", memory},
                {"pods", "20"}}}}},
            {"status", {{"hard", {{"pods", "20"}}}, {"used", {{"pods", "0"}}}}}};
}

// Project team1 exists (a re-run), its quota counted (`memory` in it), every apply answers; the
// check's objects are created and deleted.
void serveExistingProject(TestHost& host, const std::string& memory = "8Gi") {
    host.server.onJson("GET", kNamespaces + "/team1", 200,
                       {{"metadata",
                         {{"name", "team1"},
                          {"resourceVersion", "7"},
                          {"labels",
                           {{"rossoctl.dev/sandbox-project", "true"},
                            {"app.kubernetes.io/managed-by", "rossoctl"}}}}},
                        {"status", {{"phase", "Active"}}}});
    host.server.on("PATCH", "/*", 200, R"({"metadata":{"resourceVersion":"7"}})");
    host.server.onJson("GET", kQuota, 200, quotaObject(memory, "3"));
    host.server.onJson("GET", "/api/v1/namespaces/team1/resourcequotas", 200,
                       list({quotaObject(memory, "3")}));
    host.server.on("POST", kPolicies, 201, "{}");
    host.server.on("POST", kPods, 201, "{}");
    host.server.on("DELETE", kPolicies + "/*", 200, "{}");
    host.server.on("DELETE", kPods + "/*", 200, "{}");
}

}  // namespace

TEST_CASE("project create's check says what a second Ctrl-C would leave, and how to remove it",
          "[walk8][project][interrupt][command]") {
    // walk6 MINOR 1: a second Ctrl-C exited at once, said nothing, and left the check's pods
    // and policies, which gc did not know.
    TestHost host;
    serveExistingProject(host);
    std::string note;
    host.server.onRequest = [&](const kube::HttpRequest& request) {
        if (request.method == "POST" && contains(request.url, "/pods")) {
            note = host.interruptNote.text();  // what a second Ctrl-C now would write
            host.cancel.cancel();
        }
    };
    CHECK(host.run({"project", "create", "team1"}) == kExitCancelled);
    CHECK(note ==
          "second interrupt: exiting now; the enforcement check's pods and policies "
          "rossoctl-check-000001-* are left in team1 (the pods end within 120s); \"rossoctl gc "
          "-n team1\" removes them\n");
    CHECK(host.interruptNote.text().empty());  // all deleted: nothing is left to say
    for (const auto& request : host.server.requestsTo("POST", kPods))
        CHECK(json::parse(request.body)["metadata"]["annotations"].contains(
            "rossoctl.dev/run-owner"));
}

TEST_CASE("gc collects what an enforcement check left, once its process is gone or it is over",
          "[walk8][gc][command]") {
    TestHost host;
    host.serveGroups();
    for (const std::string& other :
         {kPods + "?labelSelector=rossoctl.dev%2Frun%3Dtrue",
          kPods + "?labelSelector=rossoctl.dev%2Fpool%3Dwarm", kSandboxes,
          std::string("/apis/agent.rossoctl.dev/v1alpha1/namespaces/team1/agentruntimes")})
        host.server.onJson("GET", other, 200, list({}));
    const std::string selector =
        "?labelSelector=app.kubernetes.io%2Fmanaged-by%3Drossoctl%2Crossoctl.dev%2Fenforcement-"
        "check";
    const json labels = {{"app.kubernetes.io/managed-by", "rossoctl"},
                         {"rossoctl.dev/enforcement-check", "9eac5f"}};
    auto leftover = [&](const std::string& name, const std::string& created) {
        return json{{"metadata",
                     {{"name", name},
                      {"namespace", "team1"},
                      {"uid", "uid-" + name},
                      {"resourceVersion", "7"},
                      {"creationTimestamp", created},
                      {"labels", labels}}}};
    };
    // Made an hour before now (22:13:20): its check is over. One made a moment ago may still
    // be checking (its owner, another machine's, cannot be looked at): kept.
    json young = leftover("rossoctl-check-1b2c3d-client", "2023-11-14T22:13:00Z");
    young["metadata"]["annotations"]["rossoctl.dev/run-owner"] = "some-other-host/1/1";
    json foreign = leftover("rossoctl-check-4e5f60-server", "2023-11-14T21:00:00Z");
    foreign["metadata"]["labels"].erase("app.kubernetes.io/managed-by");
    host.server.onJson(
        "GET", kPods + selector, 200,
        list({leftover("rossoctl-check-9eac5f-server", "2023-11-14T21:00:00Z"), young, foreign}));
    host.server.onJson("GET", kPolicies + selector, 200,
                       list({leftover("rossoctl-check-9eac5f-server", "2023-11-14T21:00:00Z")}));
    CHECK(host.run({"gc", "--dry-run"}) == kExitOk);
    const std::string out = host.out.str();
    INFO(out);
    INFO(host.err.str());
    CHECK(contains(out, "Pod "));
    CHECK(contains(out, "NetworkPolicy "));
    CHECK(std::count(out.begin(), out.end(), '\n') == 3);  // the header and the two
    CHECK(contains(out, "rossoctl-check-9eac5f-server"));
    CHECK(contains(out, "enforcement check of project create, over"));
    CHECK(host.err.str() == "2 objects would be deleted (dry run)\n");
    CHECK(!contains(out, "1b2c3d"));
    CHECK(!contains(out, "4e5f60"));
}

TEST_CASE("project create's interrupted-check advice repeats the flags that were given",
          "[walk8][project][interrupt][command]") {
    // walk6 MINOR 2: the advice was "project create nc6-p4": following it reset the quota.
    TestHost host;
    serveExistingProject(host, "4Gi");
    host.resolver.addresses["outside.test"] = {"192.0.2.10"};
    host.server.onRequest = [&](const kube::HttpRequest& request) {
        if (request.method == "POST" && contains(request.url, "/pods")) host.cancel.cancel();
    };
    CHECK(host.run({"project", "create", "team1", "--allow-host", "outside.test:80", "--memory",
                    "4Gi", "--allow-cidr", "10.0.0.0/8", "--check-image", "my image:1"}) ==
          kExitCancelled);
    INFO(host.err.str());
    CHECK(contains(host.err.str(),
                   "Run \"rossoctl project create team1 --allow-host outside.test:80 --memory "
                   "4Gi --allow-cidr 10.0.0.0/8 --check-image 'my image:1'\" again to check "
                   "them (it converges).\n"));
}

TEST_CASE("project create warns when a re-run changes the quota or limits",
          "[walk8][project][command]") {
    // walk6 MINOR 2: a re-run without --memory 4Gi set 8Gi with no word, as egress did before.
    TestHost host;
    serveExistingProject(host, "4Gi");
    json applied = quotaObject("8Gi", "4");
    host.server.onJson("PATCH", kQuota, 200, applied);
    CHECK(host.run({"project", "create", "team1", "--no-check"}) == kExitOk);
    INFO(host.err.str());
    CHECK(contains(host.err.str(),
                   "Warning: the quota of project team1 changed: --memory 4Gi → 8Gi. Flags of "
                   "earlier runs are not kept; repeat every one still wanted.\n"));

    TestHost same;  // the same quota: nothing to say
    serveExistingProject(same, "8Gi");
    same.server.onJson("PATCH", kQuota, 200, quotaObject("8Gi", "3"));
    CHECK(same.run({"project", "create", "team1", "--no-check"}) == kExitOk);
    CHECK(!contains(same.err.str(), "Warning: the quota"));
}
