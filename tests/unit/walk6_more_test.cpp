// The sixth newcomer walkthrough (notes walk6, issue 34), more of its MINOR findings left after
// walk8: each case failed on the code before its fix.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "test_host.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;
using rossoctl::testing::watchEvent;

namespace {

const std::string kExtensions = "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/team1";
const std::string kPools = kExtensions + "/sandboxwarmpools";
const std::string kTemplates = kExtensions + "/sandboxtemplates";
const std::string kPods = "/api/v1/namespaces/team1/pods";

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

void serveExtensions(TestHost& host) {
    host.server.on("GET", "/apis/extensions.agents.x-k8s.io", 200,
                   R"({"kind":"APIGroup","name":"extensions.agents.x-k8s.io",)"
                   R"("versions":[{"version":"v1beta1"}]})");
}

}  // namespace

TEST_CASE("sandbox pool delete NAME deletes the pool as --size 0 does", "[walk6][pool][command]") {
    // walk6 MINOR 12: "accepts at most 1 arg(s), received 2: unexpected \"ghp\"" (exit 2).
    app::run::RunPodShape shape;
    shape.image = "ghcr.io/acme/orders:1.4";
    TestHost host;
    serveExtensions(host);
    host.server.onJson("GET", kPools + "/ghp", 200,
                       app::run::sandboxWarmPoolManifest(shape, 1, "ghp"));
    host.server.onJson("GET", kTemplates + "/ghp", 200,
                       app::run::sandboxTemplateManifest(shape, 3600, "ghp"));
    host.server.on("DELETE", kPools + "/ghp", 200, "{}");
    host.server.on("DELETE", kTemplates + "/ghp", 200, "{}");
    CHECK(host.run({"sandbox", "pool", "delete", "ghp", "-n", "team1"}) == kExitOk);
    INFO(host.err.str());
    CHECK(host.server.writes() ==
          std::vector<std::string>{"DELETE " + kPools + "/ghp", "DELETE " + kTemplates + "/ghp"});
    CHECK(host.out.str() == "SandboxWarmPool ghp in team1: deleted (with its template)\n");

    TestHost none;  // as kubectl delete: a name not there is an error
    serveExtensions(none);
    CHECK(none.run({"sandbox", "pool", "delete", "ghp"}) == kExitError);
    CHECK(none.err.str() ==
          "error: SandboxWarmPool ghp not found in namespace team1; run \"rossoctl sandbox pool "
          "list -n team1\"\n");
    CHECK(none.server.writes().empty());
    testing::checkHelpExamples({"sandbox", "pool", "delete"});
    testing::checkUsageErrors(
        {{"sandbox", "pool", "delete"}, {"sandbox", "pool", "delete", "Bad!"}});
}

TEST_CASE("sandbox pool --wait on a pool that cannot fill points to rossoctl, not kubectl",
          "[walk6][pool][command]") {
    // walk6 MINOR 12: "...; see kubectl -n nc6-team1 describe sandboxwarmpool ghp", the pool
    // left retrying.
    app::run::RunPodShape shape;
    TestHost host;
    serveExtensions(host);
    host.server.latency = std::chrono::milliseconds(200);
    const json pool = {
        {"metadata",
         {{"name", "ghp"}, {"namespace", "team1"}, {"uid", "uid-pool"}, {"resourceVersion", "3"}}},
        {"status", {{"replicas", 1}, {"readyReplicas", 0}}}};
    host.server.on("PATCH", kTemplates + "/ghp", 200, "{}");
    host.server.onJson("PATCH", kPools + "/ghp", 200, pool);
    host.server.onJson("GET", kPools, 200, list({pool}));
    host.server.onStream("GET", kPools + "?watch=true", {});
    const json sandbox = {
        {"metadata",
         {{"name", "ghp-abc"},
          {"namespace", "team1"},
          {"uid", "uid-sandbox"},
          {"ownerReferences", {{{"kind", "SandboxWarmPool"}, {"uid", "uid-pool"}}}}}},
        {"status",
         {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
          {"conditions", {{{"type", "Ready"}, {"status", "False"}}}}}}};
    host.server.onJson("GET", "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes", 200,
                       list({sandbox}));
    const json pod = {
        {"metadata",
         {{"name", "ghp-abc"},
          {"namespace", "team1"},
          {"uid", "uid-pod"},
          {"ownerReferences",
           {{{"kind", "Sandbox"}, {"uid", "uid-sandbox"}, {"controller", true}}}}}},
        {"status",
         {{"phase", "Pending"},
          {"containerStatuses",
           {{{"name", "run"},
             {"image", "ghcr.io/acme/orders:1.4"},
             {"state", {{"waiting", {{"reason", "ErrImagePull"}, {"message", "not found"}}}}}}}}}}};
    host.server.onJson("GET", kPods, 200, list({pod}));
    CHECK(host.run({"sandbox", "pool", "ghp", "--image", "ghcr.io/acme/orders:1.4", "--size", "1",
                    "--wait"}) == kExitError);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(has(err, "cannot be pulled"));
    CHECK(has(err,
              "it keeps retrying until that is fixed: remove it with \"rossoctl sandbox "
              "pool delete ghp -n team1\", then make it again\n"));
    CHECK(!has(err, "kubectl"));
}

TEST_CASE("sandbox commands on an agent of another deployment type say what it is",
          "[walk6][sandbox][command]") {
    // walk6 MINOR 13: "sandbox/dep1 not found ...; run \"rossoctl sandbox list\"" for an agent
    // imported without --deployment-type sandbox (a Deployment).
    const std::string advice =
        "dep1 is an agent of type deployment (deployment.apps/dep1), not a sandbox: sandbox "
        "commands need an agent imported with --deployment-type sandbox (\"rossoctl agents "
        "delete dep1 -n team1\", then import it again with that flag)";
    const json deployment = {{"apiVersion", "apps/v1"},
                             {"kind", "Deployment"},
                             {"metadata",
                              {{"name", "dep1"},
                               {"namespace", "team1"},
                               {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}}};
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"sandbox", "exec", "dep1", "--", "ls"},
          std::vector<std::string>{"sandbox", "verify", "dep1"}}) {
        TestHost host;
        host.serveSandboxGroup();
        host.server.onJson("GET", "/apis/apps/v1/namespaces/team1/deployments/dep1", 200,
                           deployment);
        CHECK(host.run(args) == kExitError);
        INFO(host.err.str());
        CHECK(has(host.err.str(), "sandbox/dep1"));
        CHECK(has(host.err.str(), advice));
        CHECK(host.server.writes().empty());
    }
}

TEST_CASE("sandbox run without --stdin says that piped bytes were not passed on",
          "[walk6][run][command]") {
    // walk6 MINOR 8: `echo 'print(6*7)' | rossoctl sandbox run -- python3 -` printed nothing,
    // exit 0.
    const std::string runPod = "rossoctl-run-00000001";
    const json running = {
        {"metadata", {{"name", runPod}, {"namespace", "team1"}, {"uid", "u1"}}},
        {"status",
         {{"phase", "Running"},
          {"containerStatuses", {{{"name", "run"}, {"state", {{"running", json::object()}}}}}}}}};
    const auto serve = [&](TestHost& host) {
        host.server.onJson("POST", kPods, 201, running);
        host.server.onJson("GET", kPods, 200, list({running}));
        host.server.on("DELETE", kPods + "/" + runPod, 200, "{}");
        host.server.onExec("team1", runPod, testing::execRan("", "", 0));
    };
    int pipe[2];
    REQUIRE(::pipe(pipe) == 0);
    REQUIRE(::write(pipe[1], "print(6*7)\n", 11) == 11);
    ::close(pipe[1]);
    TestHost piped;
    serve(piped);
    piped.stdinDescriptor = pipe[0];
    CHECK(piped.run({"sandbox", "run", "--", "python3", "-"}) == 0);
    CHECK(piped.err.str() ==
          "note: what was piped to stdin was not passed to the command; add --stdin to pass it "
          "(e.g. echo 'print(1)' | rossoctl sandbox run --stdin -- python3 -)\n");
    ::close(pipe[0]);

    int empty[2];  // a pipe closed with nothing in it (CI's `< /dev/null` is no pipe at all)
    REQUIRE(::pipe(empty) == 0);
    ::close(empty[1]);
    TestHost quiet;
    serve(quiet);
    quiet.stdinDescriptor = empty[0];
    CHECK(quiet.run({"sandbox", "run", "--", "true"}) == 0);
    CHECK(quiet.err.str().empty());
    ::close(empty[0]);
}

TEST_CASE("sandbox run: a pod --keep kept that ended at its deadline is not called interrupted",
          "[walk6][run][command]") {
    // walk6 MINOR 18: "deleted pod rossoctl-run-545de47d, left over by an interrupted run" for
    // a `--keep --timeout 5m` pod that had ended at its deadline.
    const std::string runPod = "rossoctl-run-00000001";
    const json running = {
        {"metadata", {{"name", runPod}, {"namespace", "team1"}, {"uid", "u1"}}},
        {"status",
         {{"phase", "Running"},
          {"containerStatuses", {{{"name", "run"}, {"state", {{"running", json::object()}}}}}}}}};
    const json kept = {
        {"metadata",
         {{"name", "rossoctl-run-545de47d"},
          {"namespace", "team1"},
          {"uid", "u-kept"},
          {"labels", {{"rossoctl.dev/run", "true"}, {"app.kubernetes.io/managed-by", "rossoctl"}}},
          {"annotations", {{"rossoctl.dev/kept", "true"}}}}},
        {"status", {{"phase", "Failed"}, {"reason", "DeadlineExceeded"}}}};
    TestHost host;
    host.server.onJson("POST", kPods, 201, running);
    host.server.onJson("GET", kPods, 200, list({running}));
    host.server.onJson("GET", kPods + "?labelSelector=rossoctl.dev%2Frun%3Dtrue", 200,
                       list({kept}));
    host.server.on("DELETE", kPods + "/" + runPod, 200, "{}");
    host.server.on("DELETE", kPods + "/rossoctl-run-545de47d", 200, "{}");
    host.server.onExec("team1", runPod, testing::execRan("", "", 0));
    CHECK(host.run({"sandbox", "run", "--", "true"}) == 0);
    CHECK(host.err.str() ==
          "deleted pod rossoctl-run-545de47d, kept by an earlier \"sandbox run --keep\" until it "
          "ended at its deadline\n");
}

TEST_CASE("sandbox restart of several, interrupted after their pods' DELETEs, says /workspace went",
          "[walk6][restart][workspace][command]") {
    // walk6 MINOR 18: `sandbox restart orders keeper` cut by Ctrl-C printed no /workspace note;
    // the same interrupt through set-env --restart (one sandbox) printed it.
    namespace fixtures = testing::verify_fixtures;
    json keeper = fixtures::sandbox();
    keeper["metadata"]["name"] = "keeper";
    keeper["metadata"]["uid"] = "uid-keeper";
    keeper["status"]["selector"] = "agents.x-k8s.io/sandbox-name-hash=kkk";
    json keeperPod = fixtures::hardenedPod("pod-uid-k");
    keeperPod["metadata"]["name"] = "keeper";
    keeperPod["metadata"]["labels"] = {{"agents.x-k8s.io/sandbox-name-hash", "kkk"}};
    keeperPod["metadata"]["ownerReferences"][0]["name"] = "keeper";
    keeperPod["metadata"]["ownerReferences"][0]["uid"] = "uid-keeper";
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", fixtures::kSandboxes, 200, list({fixtures::sandbox(), keeper}));
    host.server.onJson("GET", fixtures::kSandboxes + "/orders", 200, fixtures::sandbox());
    host.server.onJson("GET", fixtures::kSandboxes + "/keeper", 200, keeper);
    host.server.onJson("GET", kPods, 200, list({fixtures::hardenedPod("pod-uid-1"), keeperPod}));
    host.server.on("DELETE", kPods + "/orders", 200, "{}");
    host.server.on("DELETE", kPods + "/keeper", 200, "{}");
    host.server.onQuietWatch(kPods + "?watch=true");
    host.server.onRequest = [&host](const kube::HttpRequest& request) {
        if (has(request.url, "watch=true")) host.cancel.cancel();  // Ctrl-C as the wait starts
    };
    CHECK(host.run({"sandbox", "restart", "orders", "keeper"}) == kExitCancelled);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(host.server.requestsTo("DELETE", kPods + "/orders").size() == 1);
    CHECK(host.server.requestsTo("DELETE", kPods + "/keeper").size() == 1);
    for (const char* name : {"orders", "keeper"})
        CHECK(has(err, fmt::format("note: what pod {} wrote to /workspace is gone with it", name)));
}

TEST_CASE("agents list -w shows an unready agent's image-pull failure, as the plain list does",
          "[walk6][agents][command][watch]") {
    // walk6 MINOR 7: rows stayed at "badimg2 sandbox 0/1 DependenciesNotReady nosuch:2" for 14 s
    // while sandbox list -w showed ErrImagePull at 1 s.
    const std::string deployments = "/apis/apps/v1/namespaces/team1/deployments";
    const json labels = {{"app.kubernetes.io/managed-by", "rossoctl"},
                         {"app.kubernetes.io/name", "badimg2"}};
    const auto agent = [&](const std::string& version) {
        return json{
            {"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata",
             {{"name", "badimg2"},
              {"namespace", "team1"},
              {"uid", "uid-badimg2"},
              {"resourceVersion", version},
              {"creationTimestamp", "2023-11-14T22:00:00Z"},
              {"labels", labels}}},
            {"spec",
             {{"replicas", 1},
              {"template",
               {{"spec", {{"containers", {{{"name", "agent"}, {"image", "nosuch:2"}}}}}}}}}},
            {"status", {{"replicas", 1}, {"readyReplicas", 0}}}};
    };
    const json pod = {
        {"metadata",
         {{"name", "badimg2-5d9f"},
          {"namespace", "team1"},
          {"uid", "uid-pod"},
          {"creationTimestamp", "2023-11-14T22:00:01Z"},
          {"labels", labels}}},
        {"status",
         {{"phase", "Pending"},
          {"containerStatuses",
           {{{"name", "agent"},
             {"image", "nosuch:2"},
             {"state", {{"waiting", {{"reason", "ErrImagePull"}, {"message", "not found"}}}}}}}}}}};
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", deployments, 200, list({}));
    host.server.onStream("GET", deployments + "?watch=true", {watchEvent("ADDED", agent("11"))});
    host.server.onStream("GET", deployments + "?watch=true", {});
    for (const std::string path :
         {"/apis/apps/v1/namespaces/team1/statefulsets", "/apis/batch/v1/namespaces/team1/jobs",
          "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes"}) {
        host.server.onJson("GET", path, 200, list({}));
        host.server.onQuietWatch(path + "?watch=true");
    }
    host.server.onJson("GET", kPods, 200, list({pod}));
    auto watches = std::make_shared<int>(0);
    host.server.onRequest = [&host, watches, deployments](const kube::HttpRequest& request) {
        if (has(request.url, deployments + "?") && has(request.url, "watch=true") &&
            ++*watches == 2)
            host.cancel.cancel();  // Ctrl-C once the first stream has been printed
    };
    CHECK(host.run({"agents", "list", "-w"}) == kExitCancelled);
    const std::string out = host.out.str();
    INFO(out << host.err.str());
    CHECK(has(out, "badimg2"));
    CHECK(has(out, "ErrImagePull"));
}

TEST_CASE("sandbox top counts the emptyDirs in DISK; a name not there comes after the others",
          "[walk6][top][command]") {
    // walk6 MINOR 15: DISK stayed at the read-only root's 12Ki after 50 MB written to
    // /workspace and 20 MB to /tmp; `top orders nothere` printed kubectl's 404 and no row.
    const std::string sandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
    const json orders = {
        {"apiVersion", "agents.x-k8s.io/v1beta1"},
        {"kind", "Sandbox"},
        {"metadata", {{"name", "orders"}, {"namespace", "team1"}, {"uid", "uid-orders"}}}};
    const json pod = {{"metadata",
                       {{"name", "orders"},
                        {"namespace", "team1"},
                        {"uid", "pod-orders"},
                        {"creationTimestamp", "2023-11-14T22:00:05Z"},
                        {"labels", {{"agents.x-k8s.io/sandbox-name-hash", "h"}}},
                        {"ownerReferences",
                         {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}}},
                      {"spec",
                       {{"nodeName", "node-a"},
                        {"volumes",
                         {{{"name", "workspace"}, {"emptyDir", json::object()}},
                          {{"name", "tmp"}, {"emptyDir", json::object()}},
                          {{"name", "config"}, {"configMap", {{"name", "c"}}}}}}}},
                      {"status", {{"phase", "Running"}}}};
    const json summary = {
        {"pods",
         {{{"podRef", {{"name", "orders"}, {"namespace", "team1"}, {"uid", "pod-orders"}}},
           {"containers", {{{"name", "agent"}, {"rootfs", {{"usedBytes", 12288}}}}}},
           {"volume",
            {{{"name", "workspace"}, {"usedBytes", 50 * 1024 * 1024}},
             {{"name", "tmp"}, {"usedBytes", 20 * 1024 * 1024}},
             {{"name", "config"}, {"usedBytes", 4096}}}}}}}};
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", sandboxes + "/orders", 200, orders);
    host.server.onJson("GET", sandboxes, 200, list({orders}));
    host.server.onJson("GET", kPods, 200, list({pod}));
    host.server.onJson("GET", "/api/v1/nodes/node-a/proxy/stats/summary", 200, summary);
    CHECK(host.run({"sandbox", "top", "orders", "nothere"}) == kExitError);
    INFO(host.out.str() << host.err.str());
    CHECK(has(host.out.str(), "orders   orders   -            -               70Mi"));
    CHECK(host.err.str() ==
          "error: sandbox \"nothere\" not found in namespace \"team1\"; run "
          "\"rossoctl sandbox list -n team1\"\n");
}
