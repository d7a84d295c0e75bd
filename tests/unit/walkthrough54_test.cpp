// The fourth newcomer walkthrough (notes walk4, issue 34): errors that leave the user without
// the next step. Each case failed on the code before its fix.
#include <catch2/catch.hpp>
#include <filesystem>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::condition;
using rossoctl::testing::list;
using rossoctl::testing::ordersSandbox;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string& kResume = rossoctl::testing::kResumeOrdersAdvice;

json suspended() {
    return rossoctl::testing::suspendedOrdersSandbox();
}

}  // namespace

TEST_CASE("restart, verify and agents wait on a suspended sandbox say how to resume it",
          "[walkthrough54][sandbox][command]") {
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"sandbox", "restart", "orders"},
                                               {"sandbox", "verify", "orders", "--no-restart"},
                                               {"agents", "wait", "sandbox/orders"},
                                               {"sandbox", "exec", "orders", "--", "ls"}}) {
        TestHost host;
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes + "/orders", 200, suspended());
        host.server.onJson("GET", kPods, 200, list({}));
        INFO(args[1]);
        CHECK(host.run(args) != 0);
        INFO(host.err.str());
        CHECK(host.err.str().find("is suspended") != std::string::npos);
        CHECK(host.err.str().find(kResume) != std::string::npos);
        CHECK(host.server.writes().empty());
    }
}

namespace {

const std::string kRunPod = "rossoctl-run-00000001";

json runPod(const json& containerState) {
    return {{"metadata", {{"name", kRunPod}, {"namespace", "team1"}, {"uid", "uid-run"}}},
            {"spec", {{"containers", {{{"name", "run"}}}}}},
            {"status",
             {{"phase", containerState.contains("running") ? "Running" : "Pending"},
              {"containerStatuses", {{{"name", "run"}, {"state", containerState}}}}}}};
}

// The run pod is created and Running at once; its exec sessions answer with `answer`.
void serveRun(TestHost& host, testing::RoutedServer::ExecResponder answer) {
    host.server.onJson("POST", kPods, 201, runPod(json::object()));
    host.server.onJson("GET", kPods, 200, list({runPod({{"running", json::object()}})}));
    host.server.on("DELETE", kPods + "/" + kRunPod, 200, "{}");
    host.server.onExec("team1", kRunPod, std::move(answer));
}

}  // namespace

TEST_CASE("sandbox run --memory over the LimitRange names the flag and the LimitRange",
          "[walkthrough54][run][command]") {
    TestHost host;
    host.server.onJson("GET", kPods, 200, list({}));
    host.server.on("POST", kPods, 403,
                   testing::statusBody(403, "Forbidden",
                                       "pods \"" + kRunPod +
                                           "\" is forbidden: maximum memory usage per Container "
                                           "is 4Gi, but limit is 5Gi"));
    host.server.onJson(
        "GET", "/api/v1/namespaces/team1/limitranges", 200,
        list({{{"metadata", {{"name", "sandbox-limits"}}},
               {"spec", {{"limits", {{{"type", "Container"}, {"max", {{"memory", "4Gi"}}}}}}}}}}));
    CHECK(host.run({"sandbox", "run", "--memory", "5Gi", "--", "ls"}) == 125);
    CHECK(host.err.str() ==
          "error: --memory 5Gi is more than a container may have in namespace team1 (max memory "
          "4Gi, LimitRange sandbox-limits); nothing was created; nothing ran\n");
    CHECK(host.server.execs.empty());
    CHECK(host.server.writes() == std::vector<std::string>{"POST " + kPods});
}

TEST_CASE("sandbox run on an image without sh says what --image needs",
          "[walkthrough54][run][command]") {
    TestHost host;
    serveRun(host, [](const std::vector<std::string>&) {
        testing::ExecScript script;
        script.statusBody =
            R"({"metadata":{},"status":"Failure","message":"OCI runtime exec failed: exec )"
            R"(failed: unable to start container process: exec: \"sh\": executable file not )"
            R"(found in $PATH: unknown","reason":"InternalError"})";
        return script;
    });
    CHECK(host.run({"sandbox", "run", "--image", "gcr.io/distroless/static:nonroot", "--", "ls"}) ==
          125);
    INFO(host.err.str());
    CHECK(host.err.str().find("executable file not found") != std::string::npos);
    CHECK(host.err.str().find("--image gcr.io/distroless/static:nonroot must have sh and sleep "
                              "(which keeps the pod), and tar for --file, --env, --stdin and "
                              "--artifacts") != std::string::npos);
    CHECK(host.server.writes().back() == "DELETE " + kPods + "/" + kRunPod);
}

TEST_CASE("sandbox exec -c names the containers the pod has, as logs does",
          "[walkthrough54][sandbox][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200,
                       ordersSandbox("Running", {condition("Ready", "True")}));
    host.server.onJson(
        "GET", kPods, 200,
        list({{{"metadata",
                {{"name", "orders"},
                 {"namespace", "team1"},
                 {"uid", "uid-pod"},
                 {"ownerReferences",
                  {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}}},
               {"spec", {{"containers", {{{"name", "agent"}}}}}},
               {"status", {{"phase", "Running"}}}}}));
    CHECK(host.run({"sandbox", "exec", "orders", "-c", "nope", "--", "ls"}) == kExitError);
    CHECK(host.err.str() ==
          "error: sandbox/orders pod orders has no container \"nope\"; it has: agent\n");
    CHECK(host.server.execs.empty());
}

TEST_CASE("sandbox run --artifacts interrupted says no artifacts were collected",
          "[walkthrough54][run][command][interrupt]") {
    TestHost host;
    serveRun(host, [&](const std::vector<std::string>&) {
        host.cancel.cancel();
        testing::ExecScript script;
        script.hangs = true;
        return script;
    });
    CHECK(host.run({"sandbox", "run", "--artifacts", "/tmp/rossoctl-walk54-never", "--", "sleep",
                    "60"}) == 130);
    CHECK(host.err.str() == "interrupted; pod " + kRunPod +
                                " deleted; no artifacts were collected into "
                                "/tmp/rossoctl-walk54-never\n");
    CHECK_FALSE(std::filesystem::exists("/tmp/rossoctl-walk54-never"));
}
