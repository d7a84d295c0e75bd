// The fifth newcomer walkthrough (notes walk5, issue 34), its remaining MINOR findings. Each case
// failed on the code before its fix.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "table_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::linesOf;
using rossoctl::testing::list;
using rossoctl::testing::sandboxWithReason;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Sandbox `name`'s pod, labelled and owned as the controller makes it.
json podOf(const std::string& name, const std::string& phase) {
    return {
        {"metadata",
         {{"name", name},
          {"namespace", "team1"},
          {"uid", "pod-" + name},
          {"creationTimestamp", "2023-11-14T22:00:05Z"},
          {"labels", {{"agents.x-k8s.io/sandbox-name-hash", "abc"}}},
          {"ownerReferences",
           {{{"kind", "Sandbox"}, {"name", name}, {"uid", "uid-" + name}, {"controller", true}}}}}},
        {"status", {{"phase", phase}}}};
}

}  // namespace

TEST_CASE("sandbox list: a sandbox whose pod is being deleted is Restarting, not PodFailed",
          "[walk7][sandbox][command]") {
    // walk5 MINOR 10: an agent that ignores SIGTERM is killed at the grace period's end, its pod
    // ends Failed while it is deleted, and the controller says Finished, PodFailed.
    json finished = sandboxWithReason("orders", "5", "PodFailed");
    finished["status"]["conditions"].push_back(
        {{"type", "Finished"}, {"status", "True"}, {"reason", "PodFailed"}});
    json killed = podOf("orders", "Failed");
    killed["metadata"]["deletionTimestamp"] = "2023-11-14T22:13:00Z";
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes, 200, list({finished}));
    host.server.onJson("GET", kPods, 200, list({killed}));
    REQUIRE(host.run({"sandbox", "list"}) == 0);
    const auto lines = linesOf(host.out.str());
    INFO(host.out.str());
    REQUIRE(lines.size() == 2);
    CHECK(contains(lines[1], "Restarting"));
    CHECK(contains(lines[1], "PodTerminating"));
    CHECK(!contains(lines[1], "PodFailed"));
    CHECK(!contains(lines[1], "Finished"));

    // Its replacement, made before the controller rewrote Finished: still a restart.
    TestHost replaced;
    replaced.serveSandboxGroup();
    replaced.server.onJson("GET", kSandboxes, 200, list({finished}));
    replaced.server.onJson("GET", kPods, 200, list({podOf("orders", "Pending")}));
    REQUIRE(replaced.run({"sandbox", "list"}) == 0);
    INFO(replaced.out.str());
    CHECK(contains(replaced.out.str(), "Restarting"));
    CHECK(contains(replaced.out.str(), "PodReplaced"));
    CHECK(!contains(replaced.out.str(), "PodFailed"));

    // A pod that failed on its own, not deleted, still says so.
    TestHost ended;
    ended.serveSandboxGroup();
    ended.server.onJson("GET", kSandboxes, 200, list({finished}));
    ended.server.onJson("GET", kPods, 200, list({podOf("orders", "Failed")}));
    REQUIRE(ended.run({"sandbox", "list"}) == 0);
    CHECK(contains(ended.out.str(), "Finished"));
    CHECK(contains(ended.out.str(), "PodFailed"));
}

TEST_CASE("sandbox list -n with a namespace that does not exist says so, still exit 0",
          "[walk7][sandbox][command]") {
    // walk5 MINOR 11: a typo in -n gave kubectl's "No sandboxes found" and nothing more.
    const json namespaces =
        list({{{"metadata", {{"name", "nc5-team1"}}}}, {{"metadata", {{"name", "kube-system"}}}}});
    // The apiserver lists an empty namespace and one that does not exist alike.
    auto serveEmpty = [&](TestHost& host, const std::string& ns) {
        host.serveSandboxGroup();
        host.server.onJson("GET", "/apis/agents.x-k8s.io/v1beta1/namespaces/" + ns + "/sandboxes",
                           200, list({}));
        host.server.onJson("GET", "/api/v1/namespaces/" + ns + "/pods", 200, list({}));
    };
    TestHost typo;
    serveEmpty(typo, "nc5-tema1");
    typo.server.onJson("GET", "/api/v1/namespaces", 200, namespaces);
    REQUIRE(typo.run({"sandbox", "list", "-n", "nc5-tema1"}) == 0);
    CHECK(typo.err.str() ==
          "No sandboxes found in namespace \"nc5-tema1\".\n"
          "note: namespace \"nc5-tema1\" does not exist; did you mean \"nc5-team1\"?\n");

    TestHost empty;  // there, and empty: kubectl's line alone, after one LIST of namespaces
    serveEmpty(empty, "nc5-team1");
    empty.server.onJson("GET", "/api/v1/namespaces", 200, namespaces);
    REQUIRE(empty.run({"sandbox", "list", "-n", "nc5-team1"}) == 0);
    CHECK(empty.err.str() == "No sandboxes found in namespace \"nc5-team1\".\n");

    TestHost forbidden;  // not allowed to list namespaces: nothing more is said
    serveEmpty(forbidden, "nc5-tema1");
    forbidden.server.on("GET", "/api/v1/namespaces", 403,
                        testing::statusBody(403, "Forbidden", "namespaces is forbidden"));
    REQUIRE(forbidden.run({"sandbox", "list", "-n", "nc5-tema1"}) == 0);
    CHECK(forbidden.err.str() == "No sandboxes found in namespace \"nc5-tema1\".\n");

    TestHost listed;  // a list with rows costs no request more
    listed.serveSandboxGroup();
    listed.server.onJson("GET", "/apis/agents.x-k8s.io/v1beta1/namespaces/nc5-team1/sandboxes", 200,
                         list({sandboxWithReason("orders")}));
    listed.server.onJson("GET", "/api/v1/namespaces/nc5-team1/pods", 200, list({}));
    REQUIRE(listed.run({"sandbox", "list", "-n", "nc5-team1"}) == 0);
    CHECK(listed.server.requestsTo("GET", "/api/v1/namespaces").empty());
}

TEST_CASE("sandbox logs pod/NAME of a kept run pod says the run's output is not in its log",
          "[walk7][keep][command]") {
    // walk5 MINOR 6: the run's command went through exec, the container only sleeps: the log
    // was empty and logs exited 0 with nothing said, though --keep had listed logs as a way in.
    const std::string kept = "rossoctl-run-002e1c6c";
    json pod = podOf(kept, "Running");
    pod["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "rossoctl"},
                                 {"rossoctl.dev/run", "true"}};
    pod["spec"] = {{"containers", json::array({{{"name", "run"}}})}};
    TestHost host;
    host.server.onJson("GET", kPods + "/" + kept, 200, pod);
    host.server.onStream("GET", kPods + "/" + kept + "/log", {});
    CHECK(host.run({"sandbox", "logs", "pod/" + kept}) == 0);
    CHECK(host.out.str().empty());
    CHECK(host.err.str() ==
          "note: pod/" + kept +
              " only sleeps: sandbox run ran its command through exec, so the command's output "
              "is not in this log (the run printed it); look inside with \"rossoctl sandbox exec "
              "pod/" +
              kept + " -n team1 -- sh\"\n");

    // --keep no longer lists logs as a way in.
    const auto lines = app::run::keptPodLines("team1", kept, "/workspace", std::nullopt,
                                              std::chrono::system_clock::now());
    for (const auto& line : lines) CHECK(!contains(line, "sandbox logs"));
}

TEST_CASE("sandbox exec: a kept run pod named without pod/, and a sandbox's pod named with it",
          "[walk7][keep][command]") {
    // walk5 MINOR 5: kubectl habits. The kept pod's name alone gave "sandbox/... not found; run
    // sandbox list"; pod/keeper (sandbox keeper's own pod) gave "use kubectl for other pods".
    const std::string kept = "rossoctl-run-002e1c6c";
    json runPod = podOf(kept, "Running");
    runPod["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "rossoctl"},
                                    {"rossoctl.dev/run", "true"}};
    TestHost bare;
    bare.serveSandboxGroup();
    bare.server.onJson("GET", kPods + "/" + kept, 200, runPod);
    CHECK(bare.run({"sandbox", "exec", kept, "--", "cat", "/tmp/f"}) == kExitError);
    CHECK(bare.err.str() == "error: sandbox/" + kept +
                                " not found in namespace team1; did you mean pod/" + kept +
                                "? (a pod \"sandbox run --keep\" kept is named pod/NAME)\n");
    CHECK(bare.server.execs.empty());

    TestHost typo;  // any other missing name: no pod is looked up, the sandboxes are listed
    typo.serveSandboxGroup();
    typo.server.onJson("GET", kSandboxes, 200, list({sandboxWithReason("orders")}));
    CHECK(typo.run({"sandbox", "exec", "ordres", "--", "ls"}) == kExitError);
    CHECK(contains(typo.err.str(), "did you mean \"orders\"?"));
    CHECK(typo.server.requestsTo("GET", kPods + "/ordres").empty());

    TestHost own;  // pod/keeper: the pod of sandbox keeper
    own.server.onJson("GET", kPods + "/keeper", 200, podOf("keeper", "Running"));
    CHECK(own.run({"sandbox", "exec", "pod/keeper", "--", "ls"}) == kExitError);
    CHECK(own.err.str() ==
          "error: pod/keeper is the pod of sandbox keeper: name the sandbox, not its pod: "
          "\"rossoctl sandbox exec keeper -n team1 -- COMMAND\"\n");
    CHECK(own.server.execs.empty());
}

TEST_CASE("sandbox run --pool NAME CMD without -- says NAME is a pool when it is one",
          "[walk7][run][pool][command]") {
    // walk5 MINOR 7: "py" was taken for the command and a pod cold-started to run it.
    const std::string pools =
        "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/team1/"
        "sandboxwarmpools";
    auto serveExtensions = [](TestHost& host) {
        host.server.on("GET", "/apis/extensions.agents.x-k8s.io", 200,
                       R"({"kind":"APIGroup","name":"extensions.agents.x-k8s.io",)"
                       R"("versions":[{"version":"v1beta1"}]})");
    };
    TestHost host;
    serveExtensions(host);
    host.server.onJson("GET", pools + "/py", 200, {{"metadata", {{"name", "py"}}}});
    CHECK(host.run({"sandbox", "run", "-n", "team1", "--pool", "py", "echo", "hi"}) == 125);
    CHECK(host.err.str() ==
          "error: \"py\" after --pool is read as the command to run, but it names a "
          "SandboxWarmPool in namespace team1; nothing ran: a name follows --pool with \"=\" or "
          "when the command comes after \"--\": rossoctl sandbox run -n team1 --pool=py -- echo "
          "hi\n");
    CHECK(host.server.writes().empty());
    CHECK(host.server.requestsTo("GET", pools + "/py").size() == 1);

    // With "--" the words are the command's, whatever pools there are: no GET of them.
    TestHost dashed;
    serveExtensions(dashed);
    dashed.server.onJson("GET", pools + "/python3", 200, {{"metadata", {{"name", "python3"}}}});
    dashed.server.on("POST", kPods, 500, testing::statusBody(500, "InternalError", "stop here"));
    dashed.run({"sandbox", "run", "--pool", "--", "python3", "-c", "print(1)"});
    CHECK(dashed.server.requestsTo("GET", pools + "/python3").empty());
    CHECK(!contains(dashed.err.str(), "after --pool"));
}
