// The fifth newcomer walkthrough (notes walk5, issue 34), its MINOR findings. Each case failed on
// the code before its fix.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::condition;
using rossoctl::testing::execRan;
using rossoctl::testing::list;
using rossoctl::testing::ordersSandbox;
using rossoctl::testing::TempDir;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string& kResume = rossoctl::testing::kResumeOrdersAdvice;

json suspended() {
    return rossoctl::testing::suspendedOrdersSandbox();
}

}  // namespace

TEST_CASE("logs, port-forward and cp on a suspended sandbox say what they lack and how to resume",
          "[walk5][sandbox][command]") {
    struct Case {
        std::vector<std::string> args;
        std::string lacks;
    };
    for (const auto& [args, lacks] : std::vector<Case>{
             {{"sandbox", "logs", "orders"}, "it has no pod to read logs from"},
             {{"sandbox", "port-forward", "orders", "8080"}, "it has no pod to forward ports to"},
             {{"sandbox", "cp", "orders:/workspace/a", "./a"},
              "it has no pod to copy files to or from"},
             {{"sandbox", "exec", "orders", "--", "ls"}, "it has no pod to run commands in"}}) {
        TestHost host;
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes + "/orders", 200, suspended());
        host.server.onJson("GET", kPods, 200, list({}));
        INFO(args[1]);
        CHECK(host.run(args) == kExitError);
        const std::string err = host.err.str();
        INFO(err);
        CHECK(err.find("is suspended") != std::string::npos);
        CHECK(err.find(lacks) != std::string::npos);
        CHECK(err.find(kResume) != std::string::npos);
        CHECK(host.server.writes().empty());
    }
}

TEST_CASE(
    "set-env --restart on a suspended sandbox applies the change, says when it takes "
    "effect and exits 0",
    "[walk5][sandbox][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, suspended());
    json changed = suspended();
    changed["spec"]["podTemplate"]["spec"]["containers"][0]["env"] = {
        {{"name", "B"}, {"value", "2"}}};
    changed["metadata"]["resourceVersion"] = "6";
    host.server.onJson("PUT", kSandboxes + "/orders", 200, changed);
    host.server.onJson("GET", kPods, 200, list({}));
    CHECK(host.run({"sandbox", "set-env", "orders", "B=2", "--restart"}) == kExitOk);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(host.out.str() == "sandbox/orders env updated: B added\n");
    CHECK(err.find("error") == std::string::npos);
    CHECK(err.find("note: sandbox/orders is suspended, so there is no pod to restart; its pod "
                   "gets the new environment when you resume it (\"rossoctl sandbox resume "
                   "orders -n team1\")") != std::string::npos);
    CHECK(host.server.writes() ==
          std::vector<std::string>{"PUT " + kSandboxes + "/orders"});  // nothing deleted
}

TEST_CASE("agents delete takes several names, as kubectl delete does; one not found keeps no other",
          "[walk5][agents][command]") {
    TestHost host;
    host.serveGroups();  // every part of "ghost" is 404
    for (const std::string name : {"q1", "q3"}) {
        json sandbox = ordersSandbox("Running", {condition("Ready", "True")});
        sandbox["metadata"]["name"] = name;
        sandbox["metadata"]["uid"] = "uid-" + name;
        sandbox["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "rossoctl"},
                                         {"app.kubernetes.io/name", name}};
        host.server.onJson("GET", kSandboxes + "/" + name, 200, sandbox);
        host.server.on("DELETE", kSandboxes + "/" + name, 200, "{}");
    }
    CHECK(host.run({"agents", "delete", "q1", "ghost", "sandbox/q3", "q1", "--wait=false"}) ==
          kExitError);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(host.out.str() ==
          "sandbox.agents.x-k8s.io/q1 deleted\nsandbox.agents.x-k8s.io/q3 deleted\n");
    CHECK(err.find("error: agent \"ghost\" not found in namespace \"team1\"") != std::string::npos);
    CHECK(host.server.writes() ==
          std::vector<std::string>{"DELETE " + kSandboxes + "/q1", "DELETE " + kSandboxes + "/q3"});
}

namespace {

const std::string kRunPod = "rossoctl-run-00000001";

json runPod() {
    return {
        {"metadata", {{"name", kRunPod}, {"namespace", "team1"}, {"uid", "uid-run"}}},
        {"spec", {{"containers", {{{"name", "run"}}}}}},
        {"status",
         {{"phase", "Running"},
          {"containerStatuses", {{{"name", "run"}, {"state", {{"running", json::object()}}}}}}}}};
}

std::string outArchive(const std::vector<std::pair<std::string, std::string>>& files) {
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    for (const auto& [name, content] : files) writer.addFile(name, content);
    writer.finish();
    return archive;
}

}  // namespace

TEST_CASE("sandbox run --artifacts says so when the code left nothing under WORKDIR/out/",
          "[walk5][run][command]") {
    for (const bool wroteOne : {false, true}) {
        TempDir dir;
        const std::string artifacts = dir.file("out");
        TestHost host;
        host.server.onJson("POST", kPods, 201, runPod());
        host.server.onJson("GET", kPods, 200, list({runPod()}));
        host.server.on("DELETE", kPods + "/" + kRunPod, 200, "{}");
        host.server.onExec("team1", kRunPod, execRan("", "", 0));
        host.server.onExec(
            "team1", kRunPod,
            execRan(outArchive(
                        wroteOne ? std::vector<std::pair<std::string, std::string>>{{"./result.txt",
                                                                                     "42\n"}}
                                 : std::vector<std::pair<std::string, std::string>>{}),
                    "", 0));
        INFO(wroteOne);
        CHECK(host.run({"sandbox", "run", "--artifacts", artifacts, "--", "python3", "main.py"}) ==
              0);
        const std::string err = host.err.str();
        INFO(err);
        const std::string note =
            "note: no files under /workspace/out/; nothing was collected into " + artifacts +
            " (artifacts are the files the code writes under /workspace/out/)";
        CHECK((err.find(note) != std::string::npos) == !wroteOne);
    }
}
