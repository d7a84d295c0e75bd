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
