// sandbox run and sandbox pool end to end against a routed fake apiserver and scripted exec
// sessions: bad input sends nothing, the happy path, and what a 404/403/409 reads like.
#include <catch2/catch.hpp>
#include <filesystem>

#include "json_fixtures.hpp"
#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;

namespace {

// The name of an upload's last entry, its end marker (a header, then tar's two end blocks).
std::string uploadedMarker(const std::string& upload) {
    REQUIRE(upload.size() >= 3 * 512);
    const std::string name(upload.c_str() + upload.size() - 3 * 512);
    CHECK(name.rfind(".rossoctl-uploaded-", 0) == 0);
    return name;
}

const std::string kPods = "/api/v1/namespaces/team1/pods";
// The first number CountingRandom gives: the run pod's name is fixed by the injected random.
const std::string kRunPod = "rossoctl-run-00000001";
const std::string kExtensions = "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/team1";

json runPod(const std::string& name, const json& containerState) {
    return {{"metadata", {{"name", name}, {"namespace", "team1"}, {"uid", "uid-" + name}}},
            {"spec", {{"containers", {{{"name", "run"}}}}}},
            {"status",
             {{"phase", containerState.contains("running") ? "Running" : "Pending"},
              {"containerStatuses",
               {{{"name", "run"}, {"image", "python:3.12-slim"}, {"state", containerState}}}}}}};
}

// The apiserver creates the run pod, which is Running at once; its one exec session is
// `command` (a pod rossoctl wrote needs no mount probe).
void serveRun(TestHost& host, testing::ExecScript command, const std::string& ns = "team1") {
    const std::string pods = "/api/v1/namespaces/" + ns + "/pods";
    host.server.onJson("POST", pods, 201, runPod(kRunPod, json::object()));
    host.server.onJson("GET", pods, 200, list({runPod(kRunPod, {{"running", json::object()}})}));
    host.server.on("DELETE", pods + "/" + kRunPod, 200, "{}");
    host.server.onExec(ns, kRunPod, std::move(command));
}

// sandbox run keeps 1 and 2 for the code: each of these is rossoctl's own failure, 125.
void checkRunRefuses(const std::vector<std::vector<std::string>>& argvs) {
    for (const auto& args : argvs) {
        TestHost host;
        std::string line;
        for (const auto& word : args) line += " " + word;
        const int exitCode = host.run(args);
        INFO("rossoctl" << line << "\n" << host.err.str());
        CHECK(exitCode == app::run::kExitRunFailed);
        CHECK(host.server.requests.empty());
        CHECK(host.err.str().rfind("error: ", 0) == 0);
    }
}

}  // namespace

TEST_CASE("sandbox run and pool: every help example parses and validates", "[run][command]") {
    testing::checkHelpExamples({"sandbox", "pool"});
    // sandbox run exits 125 for its own failures, usage errors included: an example passes
    // when it gets as far as the (empty) cluster, with the files it names in place.
    testing::TempDir dir;
    dir.write("main.py", "print(1)\n");
    dir.write("job/run.sh", "echo ok\n", 0755);
    const auto home = std::filesystem::current_path();
    std::filesystem::current_path(dir.path());
    const auto examples = testing::helpExamples(TestHost().help({"sandbox", "run"}));
    CHECK(examples.size() == 5);
    for (const auto& argv : examples) {
        TestHost host;
        // --pool=NAME needs SandboxWarmPool served; the pool is then not found (404).
        if (std::find(argv.begin(), argv.end(), "--pool=py") != argv.end())
            host.server.on("GET", "/apis/extensions.agents.x-k8s.io", 200,
                           R"({"kind":"APIGroup","name":"extensions.agents.x-k8s.io",)"
                           R"("versions":[{"version":"v1beta1"}]})");
        std::string line;
        for (const auto& arg : argv) line += " " + arg;
        const int exitCode = host.run(argv);
        INFO("rossoctl" << line << "\n" << host.err.str());
        CHECK(exitCode == app::run::kExitRunFailed);
        CHECK(host.err.str().find("Error from server (NotFound)") != std::string::npos);
        CHECK(host.err.str().find("error: ") == std::string::npos);  // no usage error
    }
    std::filesystem::current_path(home);
}

TEST_CASE("sandbox run rejects bad input before sending anything (exit 125)", "[run][command]") {
    checkRunRefuses({
        {"sandbox", "run"},
        {"sandbox", "run", "--image", "Bad Image", "--", "ls"},
        {"sandbox", "run", "--cpu", "0", "--", "ls"},
        {"sandbox", "run", "--memory", "lots", "--", "ls"},
        {"sandbox", "run", "--workdir", "relative", "--", "ls"},
        {"sandbox", "run", "--timeout", "0s", "--", "ls"},
        {"sandbox", "run", "--start-timeout", "soon", "--", "ls"},
        {"sandbox", "run", "--env", "1BAD=x", "--", "ls"},
        {"sandbox", "run", "-o", "yaml", "--", "ls"},
        {"sandbox", "run", "--file", "/nonexistent/main.py", "--", "python3", "main.py"},
        {"sandbox", "run", "--artifacts-max-files", "many", "--", "ls"},
    });
}

TEST_CASE("sandbox run creates a pod named by the injected random, runs, deletes it",
          "[run][command]") {
    TestHost host;
    serveRun(host, testing::execRan("42\n", "a warning\n", 3));
    CHECK(host.run({"sandbox", "run", "--", "python3", "-c", "print(6 * 7)"}) == 3);
    CHECK(host.out.str() == "42\n");
    CHECK(host.err.str() == "a warning\n");
    CHECK(host.server.writes() ==
          std::vector<std::string>{"POST " + kPods, "DELETE " + kPods + "/" + kRunPod});
    const auto created = json::parse(host.server.requestsTo("POST", kPods).front().body);
    CHECK(created["metadata"]["name"] == kRunPod);
    REQUIRE(host.server.execs.size() == 1);  // the command, with no mount probe before it
    const auto& command = host.server.execs[0].command;
    CHECK(command.back() == "print(6 * 7)");
    CHECK(host.server.execs[0].pod == "team1/" + kRunPod);
}

TEST_CASE("sandbox run in \"default\" because nothing named a namespace says so first",
          "[run][command]") {
    TestHost unnamed;  // -n "" is no -n, and the test's config names no context namespace
    serveRun(unnamed, testing::execRan("", "", 0), "default");
    CHECK(unnamed.run({"sandbox", "run", "-n", "", "--", "true"}) == 0);
    CHECK(unnamed.err.str() ==
          "Warning: no namespace given (-n) or set in the kubeconfig context: running in "
          "\"default\", which is no rossoctl project (no default-deny egress, no quota); see "
          "\"rossoctl project create --help\"\n");
    TestHost named;  // asked for by name: the user knows where it runs
    serveRun(named, testing::execRan("", "", 0), "default");
    CHECK(named.run({"sandbox", "run", "-n", "default", "--", "true"}) == 0);
    CHECK(named.err.str().empty());
}

TEST_CASE("sandbox run -o json returns the streams and exit code in one object", "[run][command]") {
    TestHost host;
    serveRun(host, testing::execRan("42\n", "", 0));
    REQUIRE(host.run({"sandbox", "run", "-o", "json", "--", "python3", "-"}) == 0);
    const json result = testing::printedJson(host.out.str());
    CHECK(result["stdout"] == "42\n");
    CHECK(result["exitCode"] == 0);
    CHECK(result["pod"] == kRunPod);
    CHECK(result["timedOut"] == false);
}

TEST_CASE("sandbox run: an image that cannot be pulled ends the wait, and the pod is deleted",
          "[run][command]") {
    TestHost host;
    host.server.onJson("POST", kPods, 201, runPod(kRunPod, json::object()));
    host.server.onJson(
        "GET", kPods, 200,
        list({runPod(kRunPod,
                     {{"waiting", {{"reason", "ImagePullBackOff"}, {"message", "not found"}}}})}));
    host.server.on("DELETE", kPods + "/" + kRunPod, 200, "{}");
    CHECK(host.run({"sandbox", "run", "--image", "ghcr.io/acme/nope:1", "--", "ls"}) == 125);
    CHECK(host.err.str().find("cannot be pulled (ImagePullBackOff)") != std::string::npos);
    CHECK(host.server.execs.empty());
    CHECK(host.server.writes().back() == "DELETE " + kPods + "/" + kRunPod);
}

TEST_CASE("sandbox run: a missing namespace (404), a refused pod (403), a name taken (409)",
          "[run][command]") {
    struct Case {
        long status;
        std::string reason, message;
    };
    for (const auto& c : std::vector<Case>{
             {404, "NotFound", "pods \"" + kRunPod + "\" not found"},
             {403, "Forbidden", "pods is forbidden: User \"u\" cannot create resource"},
             {409, "AlreadyExists", "pods \"" + kRunPod + "\" already exists"}}) {
        TestHost host;
        host.server.onJson("GET", kPods, 200, list({}));  // nothing left over by earlier runs
        host.server.on("POST", kPods, c.status, statusBody(c.status, c.reason, c.message));
        INFO(c.reason);
        CHECK(host.run({"sandbox", "run", "--", "ls"}) == 125);
        CHECK(host.err.str() == "Error from server (" + c.reason + "): " + c.message + "\n");
        CHECK(host.server.execs.empty());
        CHECK(host.server.writes() == std::vector<std::string>{"POST " + kPods});
    }
    TestHost missing;  // the namespace: said as agents import says it (walk 6 MINOR 9)
    missing.server.onJson("GET", kPods, 200, list({}));
    missing.server.on("POST", kPods, 404,
                      statusBody(404, "NotFound", "namespaces \"team1\" not found"));
    CHECK(missing.run({"sandbox", "run", "--", "ls"}) == 125);
    CHECK(missing.err.str() ==
          "error: nothing ran: namespace \"team1\" not found; run \"rossoctl project create "
          "team1\" first\n");
}

TEST_CASE("sandbox pool rejects bad input before sending anything", "[run][command]") {
    testing::checkUsageErrors({
        {"sandbox", "pool"},
        {"sandbox", "pool", "--size", "101"},
        {"sandbox", "pool", "--size", "2", "--image", "Bad Image"},
        {"sandbox", "pool", "--size", "2", "--cpu", "0"},
        {"sandbox", "pool", "--size", "2", "--memory", "lots"},
        {"sandbox", "pool", "--size", "2", "--workdir", "relative"},
        {"sandbox", "pool", "--size", "2", "--lifetime", "forever"},
        {"sandbox", "pool", "--size", "2", "--timeout", "soon"},
    });
}

TEST_CASE("sandbox pool applies a SandboxTemplate and SandboxWarmPool where they are served",
          "[run][command]") {
    const std::string name =
        app::run::warmPoolName({app::run::kDefaultRunImage, "500m", "512Mi", "/workspace"});
    TestHost host;
    host.server.on("GET", "/apis/extensions.agents.x-k8s.io", 200,
                   R"({"kind":"APIGroup","name":"extensions.agents.x-k8s.io",)"
                   R"("versions":[{"version":"v1beta1"}]})");
    host.server.on("PATCH", kExtensions + "/sandboxtemplates/" + name, 200, "{}");
    host.server.onJson("PATCH", kExtensions + "/sandboxwarmpools/" + name, 200,
                       {{"status", {{"replicas", 3}, {"readyReplicas", 1}}}});
    REQUIRE(host.run({"sandbox", "pool", "--size", "3"}) == 0);
    CHECK(host.out.str() == "SandboxWarmPool " + name + " in team1: 3 wanted, 1 ready\n");
    CHECK(host.server.writes() ==
          std::vector<std::string>{"PATCH " + kExtensions + "/sandboxtemplates/" + name,
                                   "PATCH " + kExtensions + "/sandboxwarmpools/" + name});
    const auto pool = json::parse(
        host.server.requestsTo("PATCH", kExtensions + "/sandboxwarmpools/" + name).front().body);
    CHECK(pool["spec"]["replicas"] == 3);

    TestHost empty;  // --size 0: what is there of rossoctl's goes; the template already gone
    empty.server.on("GET", "/apis/extensions.agents.x-k8s.io", 200,
                    R"({"kind":"APIGroup","name":"extensions.agents.x-k8s.io",)"
                    R"("versions":[{"version":"v1beta1"}]})");
    empty.server.onJson("GET", kExtensions + "/sandboxwarmpools/" + name, 200,
                        app::run::sandboxWarmPoolManifest(
                            {app::run::kDefaultRunImage, "500m", "512Mi", "/workspace"}, 3));
    empty.server.on("DELETE", kExtensions + "/sandboxwarmpools/" + name, 200, "{}");
    REQUIRE(empty.run({"sandbox", "pool", "--size", "0"}) == 0);
    CHECK(empty.server.writes() ==
          std::vector<std::string>{"DELETE " + kExtensions + "/sandboxwarmpools/" + name});
    CHECK(empty.out.str().find("deleted (with its template)") != std::string::npos);
}

TEST_CASE("sandbox pool without the extensions keeps bare warm pods; a 403 is one line",
          "[run][command]") {
    TestHost host;  // extensions.agents.x-k8s.io answers 404
    host.server.onJson("GET", kPods, 200, list({}));
    host.server.onJson("POST", kPods, 201, runPod("rossoctl-pool-x", json::object()));
    REQUIRE(host.run({"sandbox", "pool", "--size", "2"}) == 0);
    CHECK(host.err.str().find("keeping bare warm pods") != std::string::npos);
    CHECK(host.out.str() == "pool in team1: 0 warm, 0 starting, 2 created, 0 deleted\n");
    CHECK(host.server.writes() == std::vector<std::string>{"POST " + kPods, "POST " + kPods});

    TestHost forbidden;
    forbidden.server.on("GET", kPods, 403, statusBody(403, "Forbidden", "pods is forbidden"));
    CHECK(forbidden.run({"sandbox", "pool", "--size", "2", "--bare-pods"}) == kExitError);
    CHECK(forbidden.err.str() == "Error from server (Forbidden): pods is forbidden\n");
    CHECK(forbidden.server.writes().empty());
}

TEST_CASE("sandbox pool: a warm pod replaced or claimed under the shrink (409) is left alone",
          "[run][command]") {
    TestHost host;  // bare pods: two warm pods of the default shape, the pool shrinks to none
    const std::string key = app::run::shapeKey(app::run::RunPodShape{});
    std::vector<json> warm;
    for (const std::string name : {"rossoctl-pool-a", "rossoctl-pool-b"}) {
        json pod = runPod(name, {{"running", json::object()}});
        pod["metadata"]["annotations"] = {{app::run::kPoolShapeAnnotation, key}};
        warm.push_back(pod);
    }
    warm[0]["metadata"]["creationTimestamp"] = "2023-11-14T22:00:01Z";
    warm[1]["metadata"]["creationTimestamp"] = "2023-11-14T22:00:09Z";  // the newest goes first
    host.server.onJson("GET", kPods, 200, list(warm));
    host.server.on("DELETE", kPods + "/rossoctl-pool-b", 409,
                   statusBody(409, "Conflict", "Precondition failed: UID in precondition"));
    host.server.on("DELETE", kPods + "/rossoctl-pool-a", 200, "{}");
    REQUIRE(host.run({"sandbox", "pool", "--size", "0", "--bare-pods"}) == 0);
    CHECK(host.out.str() == "pool in team1: 0 warm, 0 starting, 0 created, 1 deleted\n");
    const auto deletes = host.server.requestsTo("DELETE", kPods + "/rossoctl-pool-b");
    REQUIRE(deletes.size() == 1);  // one try: the pod it meant is not there any more
    CHECK(json::parse(deletes[0].body)["preconditions"]["uid"] == "uid-rossoctl-pool-b");
    CHECK(host.server.requestsTo("POST", kPods).empty());
}

TEST_CASE("sandbox pool never deletes the pod collection for a nameless warm pod",
          "[run][command][hostile]") {
    // A finished or surplus pool pod with name "" made DELETE .../pods: every pod of team1
    // (review 29, H5).
    TestHost host;
    const std::string key = app::run::shapeKey(app::run::RunPodShape{});
    json ended = runPod("", json::object());
    ended["status"]["phase"] = "Succeeded";
    json surplus = runPod("", {{"running", json::object()}});
    json foreign = runPod("rossoctl-pool-f", {{"running", json::object()}});
    foreign["metadata"]["namespace"] = "kube-system";
    for (auto* pod : {&ended, &surplus, &foreign})
        (*pod)["metadata"]["annotations"] = {{app::run::kPoolShapeAnnotation, key}};
    host.server.onJson("GET", kPods, 200, list({ended, surplus, foreign}));
    host.server.on("DELETE", "*", 200, "{}");
    REQUIRE(host.run({"sandbox", "pool", "--size", "0", "--bare-pods"}) == 0);
    CHECK(host.server.writes().empty());
    CHECK(host.out.str() == "pool in team1: 0 warm, 0 starting, 0 created, 0 deleted\n");
    CHECK(host.err.str().find("3 pool pods in team1 left alone") != std::string::npos);
}

TEST_CASE("sandbox run --file --env --stdin: one exec session uploads and runs, told the length",
          "[run][command][requests]") {
    testing::TempDir dir;
    dir.write("main.py", "print(6 * 7)\n");
    TestHost host;
    serveRun(host, testing::execRan("42\n", "", 0));
    REQUIRE(host.run({"sandbox", "run", "--file", dir.file("main.py"), "--env", "K=v", "--",
                      "python3", "main.py"}) == 0);
    CHECK(host.out.str() == "42\n");
    // Before issue 31: an exec for tar, then one for the command.
    REQUIRE(host.server.execs.size() == 1);
    const std::string& sent = *host.server.execs[0].stdinText;
    CHECK(host.server.execs[0].command ==
          app::run::uploadAndRunCommandLine("/workspace", {"python3", "main.py"},
                                            {sent.size(), uploadedMarker(sent), {".rossoctl-env"}},
                                            /*stdinFile=*/false, /*envFile=*/true));
    CHECK(sent.find("print(6 * 7)") != std::string::npos);
    CHECK(sent.find(app::run::kEnvFileName) != std::string::npos);
    // Never half-closed: containerd can drop the bytes in flight then (containerd#12734).
    CHECK_FALSE(*host.server.execs[0].stdinHalfClosed);

    // --stdin's bytes travel in the upload as a file the wrapper makes the code's stdin.
    TestHost withStdin;
    withStdin.in.str("print(1)\n");
    serveRun(withStdin, testing::execRan("", "", 0));
    REQUIRE(withStdin.run({"sandbox", "run", "--stdin", "--file", dir.file("main.py"), "--",
                           "python3", "-"}) == 0);
    REQUIRE(withStdin.server.execs.size() == 1);
    const std::string& upload = *withStdin.server.execs[0].stdinText;
    CHECK(withStdin.server.execs[0].command ==
          app::run::uploadAndRunCommandLine(
              "/workspace", {"python3", "-"},
              {upload.size(), uploadedMarker(upload), {".rossoctl-stdin"}},
              /*stdinFile=*/true));
    CHECK(upload.find(app::run::kStdinFileName) != std::string::npos);
    CHECK(upload.find("print(1)\n") != std::string::npos);
    CHECK_FALSE(*withStdin.server.execs[0].stdinHalfClosed);
}
