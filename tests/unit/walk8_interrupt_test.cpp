// The sixth newcomer walkthrough (notes walk6, issue 34): what agents import, sandbox restart
// and sandbox run --pool say after Ctrl-C, and suspend/resume with a name that is not there.
// Each case failed on the code before its fix.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;

TEST_CASE("agents import interrupted after its Sandbox says what was created and what to do",
          "[walk8][agents][interrupt][command]") {
    // walk6 MINOR 4: "error: interrupted", though the Sandbox existed (and ran) without its
    // AgentRuntime, and a second import said "already exists".
    const std::string runtimes = "/apis/agent.rossoctl.dev/v1alpha1/namespaces/team1/agentruntimes";
    for (const bool cutInFlight : {false, true}) {
        TestHost host;
        host.serveGroups();
        host.server.on("GET", "/api/v1/namespaces/team1", 200, testing::kProjectNamespace);
        host.server.on("GET", "/api/v1/namespaces/team1/limitranges", 200, R"({"items":[]})");
        host.server.on("POST", kSandboxes, 201, R"({"metadata":{"name":"int005"}})");
        host.server.onRequest = [&](const kube::HttpRequest& request) {
            const std::string cutAt = cutInFlight ? kSandboxes : runtimes;
            if (request.method == "POST" && contains(request.url, cutAt)) {
                host.cancel.cancel();  // Ctrl-C: the request is cut
                throw kube::TransportError(kube::TransportError::Kind::Cancelled, "interrupted");
            }
        };
        INFO(cutInFlight);
        CHECK(host.run({"agents", "import", "--deployment-type", "sandbox", "from-image", "--name",
                        "int005", "--containerImage", "busybox:1.36"}) == kExitCancelled);
        const std::string err = host.err.str();
        INFO(err);
        if (cutInFlight)
            CHECK(err ==
                  "error: interrupted while sandbox.agents.x-k8s.io/int005 was being created (it "
                  "may exist now); agentruntime.agent.rossoctl.dev/int005 was not created; remove "
                  "what exists with \"rossoctl agents delete int005 -n team1\" before importing "
                  "it again\n");
        else
            CHECK(err ==
                  "error: interrupted: sandbox.agents.x-k8s.io/int005 was created, "
                  "agentruntime.agent.rossoctl.dev/int005 was not; remove it with \"rossoctl "
                  "agents delete int005 -n team1\" before importing it again\n");
    }
}

TEST_CASE("sandbox suspend and resume change nothing when a name is not there, as restart",
          "[walk8][suspend][command]") {
    // walk6 MINOR 3: suspend orders keeper nothere suspended orders and keeper (their
    // /workspace lost) and then failed on nothere.
    for (const std::string verb : {"suspend", "resume"}) {
        TestHost host;
        host.serveSandboxGroup();
        for (const std::string name : {"orders", "keeper"}) {
            json found = verb == "suspend" ? testing::ordersSandbox(
                                                 "Running", {testing::condition("Ready", "True")})
                                           : testing::suspendedOrdersSandbox();
            found["metadata"]["name"] = name;
            host.server.onJson("GET", kSandboxes + "/" + name, 200, found);
            host.server.onJson("PATCH", kSandboxes + "/" + name, 200, found);
        }
        host.server.onJson(
            "GET", kSandboxes, 200,
            list({testing::sandboxWithReason("orders"), testing::sandboxWithReason("keeper")}));
        INFO(verb);
        CHECK(host.run({"sandbox", verb, "orders", "keeper", "nothere", "--wait=false"}) ==
              kExitError);
        const std::string err = host.err.str();
        INFO(err);
        CHECK(host.server.writes().empty());
        CHECK(host.out.str().empty());
        CHECK(contains(err, "error: sandbox/nothere not found in namespace team1"));
        CHECK(contains(err, "error: not " +
                                std::string(verb == "suspend" ? "suspended" : "resumed") +
                                ": sandbox/nothere not found, and no sandbox is " +
                                (verb == "suspend" ? "suspended" : "resumed") +
                                " until every name is found\n"));
    }
}

TEST_CASE("sandbox restart after an interrupted one: a new pod on its way is not \"finished\"",
          "[walk8][restart][command]") {
    // walk6 MINOR 10: the old pod ended Succeeded on SIGTERM; the Sandbox still said Finished
    // (PodSucceeded) while its new pod was Pending, and restart called it finished.
    json stale = sandbox();
    stale["status"]["conditions"] = {
        {{"type", "Ready"}, {"status", "False"}, {"reason", "DependenciesNotReady"}},
        {{"type", "Finished"},
         {"status", "True"},
         {"reason", "PodSucceeded"},
         {"message", "Pod completed successfully"}}};
    json pending = hardenedPod("pod-uid-2");
    pending["status"] = {{"phase", "Pending"}};
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, stale);
    host.server.onJson("GET", kSandboxes, 200, list({stale}));
    host.server.onJson("GET", kPods, 200, list({pending}));
    host.server.on("DELETE", kPods + "/orders", 200, "{}");
    CHECK(host.run({"sandbox", "restart", "orders", "--wait=false"}) == kExitOk);
    INFO(host.err.str());
    CHECK(!contains(host.err.str(), "has finished"));
    CHECK(host.server.requestsTo("DELETE", kPods + "/orders").size() == 1);

    // A sandbox whose pod really ended is still refused.
    json ended = hardenedPod("pod-uid-1");
    ended["status"] = {{"phase", "Succeeded"}};
    TestHost finished;
    finished.serveSandboxGroup();
    finished.server.onJson("GET", kSandboxes + "/orders", 200, stale);
    finished.server.onJson("GET", kSandboxes, 200, list({stale}));
    finished.server.onJson("GET", kPods, 200, list({ended}));
    CHECK(finished.run({"sandbox", "restart", "orders", "--wait=false"}) == kExitError);
    CHECK(contains(finished.err.str(), "has finished (PodSucceeded: Pod completed successfully)"));
    CHECK(finished.server.writes().empty());
}

TEST_CASE("sandbox run --pool interrupted before the pool gave it a sandbox names the claim",
          "[walk8][run][interrupt][command]") {
    // walk6 MINOR 11: "interrupted; pod  deleted" (an empty name) when the pool had no spare.
    const std::string extensions = "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/team1";
    const app::run::RunPodShape shape{app::run::kDefaultRunImage, "500m", "512Mi", "/workspace"};
    TestHost host;
    host.server.on("GET", "/apis/extensions.agents.x-k8s.io", 200,
                   R"({"kind":"APIGroup","name":"extensions.agents.x-k8s.io",)"
                   R"("versions":[{"version":"v1beta1"}]})");
    host.server.onJson("GET", extensions + "/sandboxwarmpools/" + app::run::warmPoolName(shape),
                       200, app::run::sandboxWarmPoolManifest(shape, 2));
    const json claim = {
        {"metadata",
         {{"name", "rossoctl-run-x1"}, {"namespace", "team1"}, {"resourceVersion", "7"}}},
        {"status", json::object()}};  // no spare: no sandbox bound to it
    host.server.onJson("POST", extensions + "/sandboxclaims", 201, claim);
    host.server.onJson("GET", extensions + "/sandboxclaims", 200, list({claim}));
    host.server.onQuietWatch(extensions + "/sandboxclaims?watch=true");
    host.server.on("DELETE", extensions + "/sandboxclaims/rossoctl-run-x1", 200, "{}");
    host.server.onRequest = [&](const kube::HttpRequest& request) {
        if (contains(request.url, "/sandboxclaims?") && contains(request.url, "watch=true"))
            host.cancel.cancel();
    };
    CHECK(host.run({"sandbox", "run", "--pool", "--", "true"}) == kExitCancelled);
    INFO(host.err.str());
    CHECK(contains(host.err.str(),
                   "interrupted; sandboxclaim rossoctl-run-x1 deleted (the pool had not given it "
                   "a pod yet)\n"));
    CHECK(!contains(host.err.str(), "pod  "));
}
