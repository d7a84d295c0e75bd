// `sandbox run --keep` (walk4 B1): the kept pod is reached with rossoctl itself, as pod/NAME, by
// sandbox exec, logs (which says the run's output is not there) and cp, and deleted with sandbox
// delete pod/NAME or, once its deadline has ended it, by gc. A pod sandbox run did not make is
// never reached nor deleted that way.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::execRan;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kKept = "rossoctl-run-d6382408";

// A pod as sandbox run --keep makes it, started at 22:13:00 with a 120 s deadline.
json keptPod(const std::string& phase = "Running") {
    json pod;
    pod["metadata"] = {
        {"name", kKept},
        {"namespace", "team1"},
        {"uid", "uid-kept"},
        {"resourceVersion", "9"},
        {"creationTimestamp", "2023-11-14T22:12:58Z"},
        {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}, {app::run::kRunLabel, "true"}}},
        {"annotations", {{app::run::kKeptAnnotation, "true"}}}};
    pod["spec"] = {{"activeDeadlineSeconds", 120},
                   {"containers", json::array({{{"name", "run"}}})}};
    const json state = phase == "Running" ? json{{"running", json::object()}}
                                          : json{{"terminated", {{"exitCode", 137}}}};
    pod["status"] = {{"phase", phase},
                     {"startTime", "2023-11-14T22:13:00Z"},
                     {"containerStatuses", json::array({{{"name", "run"}, {"state", state}}})}};
    return pod;
}

// Someone else's pod of the same name: no rossoctl labels.
json foreignPod() {
    json pod = keptPod();
    pod["metadata"].erase("labels");
    pod["metadata"].erase("annotations");
    return pod;
}

}  // namespace

TEST_CASE("sandbox run --keep marks the pod kept and prints the rossoctl lines to reach it",
          "[keep][run][command]") {
    const std::string name = "rossoctl-run-00000001";
    TestHost host;
    json created = keptPod();
    created["metadata"]["name"] = name;
    host.server.onJson("POST", kPods, 201, created);
    host.server.onJson("GET", kPods, 200, list({created}));
    host.server.onExec("team1", name, execRan("kept\n", "", 0));
    CHECK(host.run({"sandbox", "run", "--keep", "--", "sh", "-c", "echo kept"}) == 0);
    CHECK(host.out.str() == "kept\n");
    // Not deleted, and marked kept (no process to outlive) for gc and sandbox delete.
    CHECK(host.server.requestsTo("DELETE", kPods + "/" + name).empty());
    const auto sent = json::parse(host.server.requestsTo("POST", kPods).front().body);
    CHECK(sent["metadata"]["annotations"] == json{{app::run::kKeptAnnotation, "true"}});
    // FakeClock is 2023-11-14T22:13:20Z: the deadline ends the pod 100 s later.
    CHECK(host.err.str() ==
          "kept pod " + name +
              "; it ends by itself at 2023-11-14T22:15:00Z (in 100s: --timeout plus 60s), then "
              "\"rossoctl gc -n team1\" deletes it\n"
              "  rossoctl sandbox exec pod/" +
              name +
              " -n team1 -- sh\n"
              "  rossoctl sandbox cp pod/" +
              name +
              ":/workspace/out ./out -n team1\n"
              "  rossoctl sandbox delete pod/" +
              name + " -n team1\n");
}

TEST_CASE("sandbox exec, logs and cp reach a kept run pod as pod/NAME", "[keep][command]") {
    TestHost exec;
    exec.server.onJson("GET", kPods + "/" + kKept, 200, keptPod());
    exec.server.onExec("team1", kKept, execRan("out\n", "", 0));
    CHECK(exec.run({"sandbox", "exec", "pod/" + kKept, "--", "ls", "/workspace"}) == 0);
    CHECK(exec.out.str() == "out\n");
    REQUIRE(exec.server.execs.size() == 1);
    CHECK(exec.server.execs[0].pod == "team1/" + kKept);
    CHECK(exec.server.execs[0].container == "run");
    // No sandbox is looked up: the pod is named.
    CHECK(exec.sent() == std::vector<std::string>{"GET " + kPods + "/" + kKept,
                                                  "GET " + kPods + "/" + kKept + "/exec"});

    TestHost logs;
    logs.server.onJson("GET", kPods + "/" + kKept, 200, keptPod("Failed"));
    logs.server.onStream("GET", kPods + "/" + kKept + "/log", {"kept\n"});
    CHECK(logs.run({"sandbox", "logs", "pods/" + kKept}) == 0);  // an ended pod's log too
    INFO(logs.err.str());
    CHECK(logs.out.str() == "kept\n");
    CHECK(logs.server.requestsTo("GET", kPods + "/" + kKept + "/log")
              .front()
              .url.find("container=run") != std::string::npos);

    TestHost cp;
    cp.server.onJson("GET", kPods + "/" + kKept, 200, keptPod());
    cp.server.onExec("team1", kKept, execRan("f - tar\n", "", 0));
    cp.server.onExec("team1", kKept, execRan("{\"ok\":true}\n", "", 0));
    CHECK(cp.run({"sandbox", "cp", "pod/" + kKept + ":/workspace/out/result.json", "-"}) == 0);
    CHECK(cp.out.str() == "{\"ok\":true}\n");
    REQUIRE(cp.server.execs.size() == 2);
    CHECK(cp.server.execs[1].pod == "team1/" + kKept);
}

TEST_CASE("pod/NAME reaches only a pod sandbox run made, and says what to do otherwise",
          "[keep][command]") {
    TestHost foreign;
    foreign.server.onJson("GET", kPods + "/" + kKept, 200, foreignPod());
    CHECK(foreign.run({"sandbox", "exec", "pod/" + kKept, "--", "ls"}) == kExitError);
    CHECK(foreign.err.str() ==
          "error: pod/" + kKept +
              " in namespace team1 was not created by \"rossoctl sandbox run\" (it lacks the "
              "labels rossoctl.dev/run=true and app.kubernetes.io/managed-by=rossoctl); rossoctl "
              "reaches only sandboxes and the pods its runs kept: use kubectl for other pods\n");
    CHECK(foreign.server.execs.empty());

    TestHost cp;
    cp.server.onJson("GET", kPods + "/" + kKept, 200, foreignPod());
    CHECK(cp.run({"sandbox", "cp", "pod/" + kKept + ":/etc/passwd", "-"}) == kExitError);
    CHECK(cp.err.str().find("was not created by \"rossoctl sandbox run\"") != std::string::npos);
    CHECK(cp.server.execs.empty());

    TestHost logs;
    logs.server.onJson("GET", kPods + "/" + kKept, 200, foreignPod());
    CHECK(logs.run({"sandbox", "logs", "pod/" + kKept}) == kExitError);
    CHECK(logs.server.requestsTo("GET", kPods + "/" + kKept + "/log").empty());

    TestHost ended;
    ended.server.onJson("GET", kPods + "/" + kKept, 200, keptPod("Failed"));
    CHECK(ended.run({"sandbox", "exec", "pod/" + kKept, "--", "ls"}) == kExitError);
    CHECK(ended.err.str().find("pod/" + kKept + " has ended (Failed)") != std::string::npos);
    CHECK(ended.err.str().find("rossoctl sandbox delete pod/" + kKept + " -n team1") !=
          std::string::npos);

    TestHost missing;
    CHECK(missing.run({"sandbox", "exec", "pod/" + kKept, "--", "ls"}) == kExitError);
    CHECK(missing.err.str().find("pod/" + kKept + " not found in namespace team1") !=
          std::string::npos);

    TestHost container;
    container.server.onJson("GET", kPods + "/" + kKept, 200, keptPod());
    CHECK(container.run({"sandbox", "exec", "pod/" + kKept, "-c", "agent", "--", "ls"}) ==
          kExitError);
    CHECK(container.err.str() ==
          "error: pod/" + kKept + " has no container \"agent\"; it has: run\n");
    CHECK(container.server.execs.empty());

    // Another TYPE/ is refused before anything is sent, naming the forms taken.
    testing::checkUsageErrors({{"sandbox", "exec", "deployment/x", "--", "ls"},
                               {"sandbox", "delete", "orders"},
                               {"sandbox", "delete", "sandbox/orders"},
                               {"sandbox", "delete", "pod/Not_A_Name"}});
}

TEST_CASE("sandbox delete pod/NAME deletes a kept run pod and nothing rossoctl did not keep",
          "[keep][command]") {
    TestHost kept;
    kept.server.onJson("GET", kPods + "/" + kKept, 200, keptPod());
    kept.server.on("DELETE", kPods + "/" + kKept, 200, "{}");
    CHECK(kept.run({"sandbox", "delete", "pod/" + kKept}) == 0);
    CHECK(kept.out.str() == "pod/" + kKept + " deleted\n");
    const auto deletes = kept.server.requestsTo("DELETE", kPods + "/" + kKept);
    REQUIRE(deletes.size() == 1);
    const json options = json::parse(deletes.front().body);
    CHECK(options["preconditions"]["uid"] == "uid-kept");
    CHECK(options["gracePeriodSeconds"] == 0);

    TestHost foreign;
    foreign.server.onJson("GET", kPods + "/" + kKept, 200, foreignPod());
    CHECK(foreign.run({"sandbox", "delete", "pod/" + kKept}) == kExitError);
    CHECK(foreign.server.writes().empty());

    TestHost live;  // a run in progress elsewhere: its pod is that run's
    json running = keptPod();
    running["metadata"]["annotations"] = {{app::run::kRunOwnerAnnotation, "some-other-host/1/1"}};
    live.server.onJson("GET", kPods + "/" + kKept, 200, running);
    CHECK(live.run({"sandbox", "delete", "pod/" + kKept}) == kExitError);
    CHECK(live.err.str().find("still in progress") != std::string::npos);
    CHECK(live.server.writes().empty());

    TestHost sandbox;  // a sandbox is an agent's: pointed there, exit 2, nothing sent
    CHECK(sandbox.run({"sandbox", "delete", "orders"}) == kExitUsage);
    CHECK(sandbox.err.str() ==
          "error: sandbox delete takes a pod \"sandbox run --keep\" kept, as pod/NAME; a sandbox "
          "goes with its agent: rossoctl agents delete orders -n team1\n");
    CHECK(sandbox.server.requests.empty());
}

TEST_CASE("gc collects a kept run pod once its deadline has ended it, and says so",
          "[keep][gc][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.serveRuntimeGroup(false);
    json running = keptPod();
    running["metadata"]["name"] = "rossoctl-run-running";
    running["metadata"]["creationTimestamp"] = "2023-11-14T21:00:00Z";
    json ended = keptPod("Failed");
    ended["metadata"]["creationTimestamp"] = "2023-11-14T21:00:00Z";
    host.server.onJson("GET", kPods + "?labelSelector=rossoctl.dev%2Frun%3Dtrue", 200,
                       list({running, ended}));
    host.server.onJson("GET", kPods + "?labelSelector=rossoctl.dev%2Fpool%3Dwarm", 200, list({}));
    host.server.onJson("GET", "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes", 200,
                       list({}));
    CHECK(host.run({"gc", "--dry-run"}) == 0);
    INFO(host.out.str() << host.err.str());
    CHECK(host.out.str().find(kKept) != std::string::npos);
    CHECK(host.out.str().find("pod kept by sandbox run --keep ended (Failed) at its deadline") !=
          std::string::npos);
    CHECK(host.out.str().find("rossoctl-run-running") == std::string::npos);
}
