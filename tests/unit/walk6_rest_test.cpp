// The sixth newcomer walkthrough (notes walk6, issue 34), the MINOR findings left after walk8:
// each case failed on the code before its fix.
#include <catch2/catch.hpp>

#include "cp_fixtures.hpp"
#include "local_shell.hpp"
#include "temp_dir.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("sandbox verify --all skips a suspended sandbox with a note and exits on the others",
          "[walk6][verify][command]") {
    // walk6 MINOR 6: keeper, suspended, was an error (exit 1) that hid orders' result (exit 3).
    namespace fixtures = testing::verify_fixtures;
    TestHost host;
    json keeper = testing::suspendedOrdersSandbox();
    keeper["metadata"]["name"] = "keeper";
    host.server.onJson("GET", fixtures::kSandboxes, 200,
                       fixtures::list({fixtures::sandbox(), keeper}));
    fixtures::serveHardened(host, "curl");
    testing::Listener control;
    host.resolver.addresses["control.test"] = {"127.0.0.1"};
    const int exitCode =
        host.run({"sandbox", "verify", "--all", "--no-restart", "--egress-target",
                  "http://control.test:" + std::to_string(control.port) + "/", "-o", "json"});
    INFO(host.out.str() << host.err.str());
    CHECK(exitCode == kExitBoundaryNotProven);  // orders' egress, seen from its own pod
    const json reports = testing::printedJson(host.out.str());
    REQUIRE(reports["items"].size() == 1);
    CHECK(reports["items"][0]["sandbox"] == "orders");
    CHECK(has(host.err.str(),
              "note: sandbox/keeper is suspended, so it has no pod to verify: skipped, and the "
              "run is unproven (exit 3) for it (verify it once \"rossoctl sandbox resume keeper "
              "-n team1\" has run)\n"));
    CHECK(!has(host.err.str(), "error:"));

    // Attack 64 A1: a sandbox made while --all ran was never verified.
    TestHost late;
    json made = fixtures::sandbox();
    made["metadata"]["name"] = "late";
    made["metadata"]["uid"] = "late-uid";
    late.server.onJson("GET", fixtures::kSandboxes, 200, fixtures::list({fixtures::sandbox()}));
    late.server.onJson("GET", fixtures::kSandboxes, 200,
                       fixtures::list({fixtures::sandbox(), made}));
    fixtures::serveHardened(late, "curl");
    late.server.onJson("GET", fixtures::kSandboxes, 200,
                       fixtures::list({fixtures::sandbox(), made}));
    CHECK(late.run({"sandbox", "verify", "--all", "--no-restart", "-o", "json"}) ==
          kExitBoundaryNotProven);
    CHECK(has(late.err.str(),
              "note: sandbox/late was made while verify ran: not verified, and the run is "
              "unproven (exit 3) for it (verify it: \"rossoctl sandbox verify late -n team1\")\n"));
    CHECK(!has(late.err.str(), "note: sandbox/orders was made"));

    TestHost allSuspended;  // nothing left to verify: not a pass
    allSuspended.serveSandboxGroup();
    allSuspended.server.onJson("GET", fixtures::kSandboxes, 200, fixtures::list({keeper}));
    CHECK(allSuspended.run({"sandbox", "verify", "--all"}) == kExitError);
    CHECK(has(allSuspended.err.str(),
              "error: every sandbox in namespace team1 is suspended: nothing to verify\n"));
}

namespace {

const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kRunPod = "rossoctl-run-00000001";  // CountingRandom's first name

// The run pod as its POST returns it (Pending), then as the watch's LIST finds it.
void serveRunPod(TestHost& host, const json& listed) {
    host.server.onJson("POST", kPods, 201,
                       {{"metadata", {{"name", kRunPod}, {"namespace", "team1"}, {"uid", "u1"}}},
                        {"status", {{"phase", "Pending"}}}});
    host.server.onJson("GET", kPods, 200, testing::list({listed}));
    host.server.on("DELETE", kPods + "/" + kRunPod, 200, "{}");
}

json failedRunPod(const json& containerStatuses) {
    return {{"metadata", {{"name", kRunPod}, {"namespace", "team1"}, {"uid", "u1"}}},
            {"status", {{"phase", "Failed"}, {"containerStatuses", containerStatuses}}}};
}

}  // namespace

TEST_CASE("sandbox run: a pod that ended before it ran says why, from its status or events",
          "[walk6][run][command]") {
    // walk6 MINOR 9: "error: pod rossoctl-run-8d6e9c5a: ended (Failed)" and nothing more.
    const std::string runc =
        "failed to create containerd task: failed to create shim task: OCI runtime create "
        "failed: runc create failed: unable to set memory limit to 1";
    TestHost status;  // the container's terminated state says it
    serveRunPod(
        status,
        failedRunPod({{{"name", "run"},
                       {"state",
                        {{"terminated",
                          {{"reason", "StartError"}, {"exitCode", 128}, {"message", runc}}}}}}}));
    CHECK(status.run({"sandbox", "run", "--memory", "1", "--", "true"}) == 125);
    CHECK(status.err.str() ==
          "error: pod " + kRunPod +
              ": ended (Failed): container run: StartError (exit 128): " + runc + "\n");

    TestHost events;  // only an event says it
    serveRunPod(events, failedRunPod(json::array()));
    events.server.onJson("GET", "/api/v1/namespaces/team1/events", 200,
                         testing::list({{{"reason", "Scheduled"},
                                         {"message", "older"},
                                         {"lastTimestamp", "2023-11-14T22:00:00Z"}},
                                        {{"reason", "Failed"},
                                         {"message", "Error: " + runc},
                                         {"lastTimestamp", "2023-11-14T22:00:02Z"}}}));
    CHECK(events.run({"sandbox", "run", "--memory", "1", "--", "true"}) == 125);
    CHECK(events.err.str() ==
          "error: pod " + kRunPod + ": ended (Failed): Failed: Error: " + runc + "\n");
    const auto asked = events.server.requestsTo("GET", "/api/v1/namespaces/team1/events");
    REQUIRE(asked.size() == 1);
    CHECK(has(asked[0].url, "involvedObject.uid%3Du1"));
}

TEST_CASE("sandbox run: a quota without room says what is left and what to do",
          "[walk6][run][command]") {
    // walk6 MINOR 9: the apiserver's "exceeded quota" line alone, exit 125.
    TestHost host;
    host.server.onJson("GET", kPods, 200, testing::list({}));
    host.server.on(
        "POST", kPods, 403,
        testing::statusBody(403, "Forbidden",
                            "pods \"" + kRunPod +
                                "\" is forbidden: exceeded quota: sandbox-quota, requested: "
                                "limits.cpu=1,requests.cpu=200m, used: "
                                "limits.cpu=3500m,requests.cpu=300m, limited: "
                                "limits.cpu=4,requests.cpu=400m"));
    CHECK(host.run({"sandbox", "run", "--cpu", "1", "--", "echo", "hi"}) == 125);
    CHECK(host.err.str() ==
          "error: ResourceQuota sandbox-quota of namespace team1 has no room for the run's pod "
          "(limits.cpu 1 asked, 500m of 4 left; requests.cpu 200m asked, 100m of 400m left); "
          "nothing ran: ask for less with --cpu, or wait for other pods to end (\"rossoctl "
          "project describe team1\" shows what is used; warm-pool spares count too: \"rossoctl "
          "sandbox pool list -n team1\")\n");
    CHECK(host.server.writes() == std::vector<std::string>{"POST " + kPods});
}

TEST_CASE("sandbox run: a misspelled RuntimeClass or namespace gets a did-you-mean",
          "[walk6][run][command]") {
    // walk6 MINOR 9: `RuntimeClass "gvsior" not found` and `namespaces "nc6-tema1" not found`
    // came through raw; agents import advised creating the misspelled project.
    TestHost runtime;
    runtime.server.onJson("GET", kPods, 200, testing::list({}));
    runtime.server.on("POST", kPods, 403,
                      testing::statusBody(403, "Forbidden",
                                          "pods \"" + kRunPod +
                                              "\" is forbidden: pod rejected: RuntimeClass "
                                              "\"gvsior\" not found"));
    runtime.server.onJson(
        "GET", "/apis/node.k8s.io/v1/runtimeclasses", 200,
        testing::list({{{"metadata", {{"name", "gvisor"}}}}, {{"metadata", {{"name", "kata"}}}}}));
    CHECK(runtime.run({"sandbox", "run", "--runtime-class", "gvsior", "--", "true"}) == 125);
    CHECK(runtime.err.str() ==
          "error: --runtime-class gvsior: the cluster has no RuntimeClass of that name (did you "
          "mean \"gvisor\"?); nothing ran\n");

    const json namespaces = testing::list(
        {{{"metadata", {{"name", "team1"}}}}, {{"metadata", {{"name", "kube-system"}}}}});
    TestHost typo;
    const std::string typoPods = "/api/v1/namespaces/taem1/pods";
    typo.server.onJson("GET", typoPods, 200, testing::list({}));
    typo.server.on("POST", typoPods, 404,
                   R"({"kind":"Status","code":404,"reason":"NotFound",)"
                   R"("message":"namespaces \"taem1\" not found",)"
                   R"("details":{"name":"taem1","kind":"namespaces"}})");
    typo.server.onJson("GET", "/api/v1/namespaces", 200, namespaces);
    CHECK(typo.run({"sandbox", "run", "-n", "taem1", "--", "echo", "hi"}) == 125);
    CHECK(typo.err.str() ==
          "error: nothing ran: namespace \"taem1\" not found; did you mean \"team1\"?\n");

    TestHost import;
    import.serveGroups();
    import.server.onJson("GET", "/api/v1/namespaces", 200, namespaces);
    CHECK(import.run({"agents", "import", "--deployment-type", "sandbox", "from-image", "--name",
                      "orders", "--containerImage", "busybox:1.36", "-n", "taem1"}) == kExitError);
    CHECK(import.err.str() == "error: namespace \"taem1\" not found; did you mean \"team1\"?\n");
}

TEST_CASE("sandbox cp into a directory the pod lacks, or cannot write, says so in one line",
          "[walk6][cp][command]") {
    // walk6 MINOR 16: "tar failed in the pod (exit 1): sh: 1: cd: can't cd to /nonexistdir"
    // and "tar: passwd: Cannot open: File exists; ...: Read-only file system".
    testing::TempDir local;
    local.write("main.py", "print(1)\n");
    TestHost missing;  // the script rossoctl sends runs here, with this machine's sh
    testing::serveCpOrders(missing);
    missing.server.onExec("team1", "orders", [](const std::vector<std::string>& command) {
        if (command.size() > 2 && has(command[2], "printf"))
            return testing::execRan("n - tar\n", "", 0);  // the probe: nothing at that path
        std::vector<std::string> argv{"sh", "-c", "\"$@\" 2>&1", "sh"};
        argv.insert(argv.end(), command.begin(), command.end());
        const auto [status, said] = testing::runHere(argv, "", testing::StdinAfterInput::Ends);
        return testing::execRan("", said, status);
    });
    CHECK(missing.run({"sandbox", "cp", local.file("main.py"),
                       "orders:/nonexistdir-rossoctl-test/x.py"}) == kExitError);
    CHECK(missing.err.str() ==
          "error: /nonexistdir-rossoctl-test does not exist in the pod; nothing was copied: copy "
          "into a directory it has (e.g. /workspace)\n");

    TestHost readOnly;  // busybox's words on a read-only root
    testing::serveCpOrders(readOnly);
    readOnly.server.onExec("team1", "orders", testing::execRan("f - tar\n", "", 0));
    readOnly.server.onExec(
        "team1", "orders",
        testing::execRan("",
                         "mkdir: can't create directory '.rossoctl-staging-0000000100000002': "
                         "Read-only file system\n",
                         1));
    CHECK(readOnly.run({"sandbox", "cp", local.file("main.py"), "orders:/etc/passwd"}) ==
          kExitError);
    CHECK(readOnly.err.str() ==
          "error: /etc is on a read-only filesystem in the pod; nothing was copied: copy under "
          "/workspace or /tmp (a rossoctl sandbox writes only there)\n");
}

namespace {

// The apiserver creates the run pod, Running at once; its one exec session is `command`.
void serveRunningRunPod(TestHost& host, testing::ExecScript command) {
    const json running = {
        {"metadata", {{"name", kRunPod}, {"namespace", "team1"}, {"uid", "u1"}}},
        {"status",
         {{"phase", "Running"},
          {"containerStatuses", {{{"name", "run"}, {"state", {{"running", json::object()}}}}}}}}};
    serveRunPod(host, running);
    host.server.onExec("team1", kRunPod, std::move(command));
}

}  // namespace

TEST_CASE("sandbox run --workdir /tmp, --file through a symlink, exec without a name",
          "[walk6][run][command]") {
    // walk6 MINOR 19: --workdir /tmp was refused by the apiserver ("mountPath: Invalid value:
    // \"/tmp\": must be unique"), exit 125.
    TestHost tmp;
    serveRunningRunPod(tmp, testing::execRan("/tmp\n", "", 0));
    CHECK(tmp.run({"sandbox", "run", "--workdir", "/tmp", "--", "pwd"}) == 0);
    const json pod = json::parse(tmp.server.requestsTo("POST", kPods).at(0).body);
    std::vector<std::string> paths;
    for (const auto& mount : pod["spec"]["containers"][0]["volumeMounts"])
        paths.push_back(mount["mountPath"]);
    CHECK(paths == std::vector<std::string>{"/tmp"});
    CHECK(pod["spec"]["volumes"].size() == 1);

    // A symlink named with --file is followed, as cp does ("not a regular file or directory").
    testing::TempDir dir;
    dir.write("hostname", "box-1\n");
    std::filesystem::create_symlink(dir.file("hostname"), dir.file("link.txt"));
    TestHost link;
    serveRunningRunPod(link, testing::execRan("box-1\n", "", 0));
    CHECK(link.run({"sandbox", "run", "--file", dir.file("link.txt"), "--", "cat", "link.txt"}) ==
          0);
    INFO(link.err.str());
    REQUIRE(link.server.execs.size() == 1);
    const std::string& upload = *link.server.execs[0].stdinText;
    CHECK(has(upload, "link.txt"));
    CHECK(has(upload, "box-1\n"));

    // `sandbox exec -- cat /etc/hostname`: "cat" was taken for the sandbox's name (exit 1,
    // "sandbox/cat not found").
    TestHost exec;
    exec.serveSandboxGroup();
    CHECK(exec.run({"sandbox", "exec", "-n", "team1", "--", "cat", "/etc/hostname"}) == kExitUsage);
    CHECK(exec.err.str() ==
          "error: name the sandbox before \"--\": rossoctl sandbox exec -n team1 SANDBOX -- cat "
          "/etc/hostname (\"cat\" after \"--\" is the command's)\n");
    CHECK(exec.server.requests.empty());
    TestHost named;  // a sandbox named "cat" before "--" is still one
    named.serveSandboxGroup();
    CHECK(named.run({"sandbox", "exec", "cat", "--", "cat", "/etc/hostname"}) == kExitError);
    CHECK(has(named.err.str(), "sandbox/cat not found"));
}
