// Issue 34's second newcomer walkthrough, offline: what tripped a new user on the local cluster.
#include <catch2/catch.hpp>

#include "cp_fixtures.hpp"
#include "json_fixtures.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";

json sandboxNamed(const std::string& name, const std::string& mode = "Running") {
    const json container = {{"name", "agent"}, {"image", "busybox"}};
    const json podSpec = {{"containers", json::array({container})}};
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", name},
              {"namespace", "team1"},
              {"uid", "uid-" + name},
              {"creationTimestamp", "2023-11-14T22:00:00Z"},
              {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}},
            {"spec", {{"operatingMode", mode}, {"podTemplate", {{"spec", podSpec}}}}}};
}

// The namespace holds sandboxes "orders" and "billing"; "ordrs" is a typo of the first.
void serveTwoSandboxes(TestHost& host) {
    host.serveSandboxGroup();
    host.server.on("GET", kSandboxes + "/ordrs", 404, testing::kNotFoundBody);
    host.server.onJson("GET", kSandboxes, 200,
                       list({sandboxNamed("orders"), sandboxNamed("billing")}));
}

}  // namespace

TEST_CASE("every command that takes a sandbox name suggests the one a typo nearly spells",
          "[walkthrough34][names]") {
    const std::vector<std::vector<std::string>> lines = {
        {"sandbox", "exec", "ordrs", "--", "ls"},
        {"sandbox", "cp", "-", "ordrs:/workspace/in.txt"},
        {"sandbox", "set-env", "ordrs", "A=1"},
        {"sandbox", "restart", "ordrs"},
        {"sandbox", "suspend", "ordrs"},
        {"sandbox", "resume", "ordrs"},
        {"sandbox", "logs", "ordrs"},
    };
    for (const auto& line : lines) {
        TestHost host;
        serveTwoSandboxes(host);
        INFO(line[1]);
        CHECK(host.run(line) == kExitError);
        INFO(host.err.str());
        CHECK(host.err.str().find("ordrs") != std::string::npos);
        CHECK(host.err.str().find("not found in namespace") != std::string::npos);
        CHECK(host.err.str().find("did you mean \"orders\"?") != std::string::npos);
        CHECK(host.server.writes().empty());
    }
    // Nothing near: the command to list them, with -n, as before.
    TestHost far;
    far.serveSandboxGroup();
    far.server.on("GET", kSandboxes + "/zebra", 404, testing::kNotFoundBody);
    far.server.onJson("GET", kSandboxes, 200, list({sandboxNamed("orders")}));
    CHECK(far.run({"sandbox", "exec", "zebra", "--", "ls"}) == kExitError);
    CHECK(far.err.str() ==
          "error: sandbox/zebra not found in namespace team1; run \"rossoctl "
          "sandbox list -n team1\"\n");
}

TEST_CASE("agents get, wait and delete suggest the agent a typo nearly spells",
          "[walkthrough34][names]") {
    for (const char* verb : {"get", "wait", "delete"}) {
        TestHost host;
        host.serveGroups();
        host.server.onJson("GET", kSandboxes, 200, list({sandboxNamed("orders")}));
        for (const char* path :
             {"/apis/apps/v1/namespaces/team1/deployments",
              "/apis/apps/v1/namespaces/team1/statefulsets", "/apis/batch/v1/namespaces/team1/jobs",
              "/api/v1/namespaces/team1/pods"})
            host.server.onJson("GET", path, 200, list({}));
        INFO(verb);
        CHECK(host.run({"agents", verb, "ordrs"}) == kExitError);
        INFO(host.err.str());
        CHECK(host.err.str().find(
                  "agent \"ordrs\" not found in namespace \"team1\"; did you mean \"orders\"?") !=
              std::string::npos);
        CHECK(host.server.writes().empty());
    }
}

TEST_CASE("exec into a suspended sandbox says how to resume it, with -n",
          "[walkthrough34][wording]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandboxNamed("orders", "Suspended"));
    CHECK(host.run({"sandbox", "exec", "orders", "--", "ls"}) == kExitError);
    CHECK(host.err.str() ==
          "error: sandbox/orders is suspended (operatingMode Suspended); it has no pod to run "
          "commands in: resume it with \"rossoctl sandbox resume orders -n team1\"\n");
}

TEST_CASE("-o jsonpath takes text in single quotes, as kubectl does", "[walkthrough34][jsonpath]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandboxNamed("orders"));
    REQUIRE(host.run({"sandbox", "get", "orders", "-o",
                      "jsonpath={.metadata.name}{'\\t'}{.spec.operatingMode}{'\\n'}"}) == 0);
    CHECK(host.out.str() == "orders\tRunning\n");
}

TEST_CASE("a word on the wrong side of -- is the one named, not the command",
          "[walkthrough34][usage]") {
    struct Case {
        std::vector<std::string> args;
        int code;
        std::string message;
    };
    const std::vector<Case> cases = {
        {{"sandbox", "run", "--env", "A=1", "B=2", "--", "printenv", "A", "B"},
         125,
         "error: unexpected \"B=2\" before \"--\": --env takes one value, so give each its own "
         "(--env B=2) (see 'rossoctl sandbox run --help')\n"},
        {{"sandbox", "run", "--file", "main.py", "other.py", "--", "python3", "other.py"},
         125,
         "error: unexpected \"other.py\" before \"--\": --file takes one value, so give each its "
         "own (--file other.py) (see 'rossoctl sandbox run --help')\n"},
        {{"sandbox", "exec", "orders", "extra", "--", "ls"},
         kExitUsage,
         "error: unexpected \"extra\" before \"--\": the command and its arguments go after "
         "\"--\" (see 'rossoctl sandbox exec --help')\n"},
        {{"agents", "import", "from-image", "--name", "a", "--containerImage", "busybox:1.36", "--",
          "sh", "-c", "echo hi"},
         kExitUsage,
         "error: unexpected \"sh\" after \"--\": this command takes none; give the container's "
         "command with --command sh and each argument with --args (see 'rossoctl agents import "
         "from-image --help')\n"},
        {{"project", "create", "team2", "--allow-host", "pypi.org", "files.pythonhosted.org"},
         kExitUsage,
         "error: accepts at most 1 arg(s), received 2: unexpected \"files.pythonhosted.org\": "
         "--allow-host takes one value, so give each its own (--allow-host "
         "files.pythonhosted.org) (see 'rossoctl project create --help')\n"},
        {{"agents", "import", "from-image", "--name", "a", "--containerImage", "busybox:1.36",
          "--envVar", "A=1", "B=2"},
         kExitUsage,
         "error: unknown command \"B=2\" for \"rossoctl agents import from-image\": --envVar "
         "takes one value, so give each its own (--envVar B=2) (see 'rossoctl agents import "
         "from-image --help')\n"},
    };
    for (const auto& c : cases) {
        TestHost host;
        INFO(c.args[1]);
        CHECK(host.run(c.args) == c.code);
        CHECK(host.err.str() == c.message);
        CHECK(host.server.requests.empty());
    }
}

TEST_CASE("a long exec failure keeps its end, where the runtime says why",
          "[walkthrough34][exec]") {
    // containerd's answer to `sandbox exec S -- nosuchcmd` on the local node, as the apiserver
    // sends it: the reason comes after a 64-hex exec ID.
    const std::string message =
        "Internal error occurred: error executing command in container: failed to exec in "
        "container: failed to start exec "
        "\"6fa8d7d17417d00b851859ca1a48c3f8130979525047e84d240420c3c259d5de\": OCI runtime exec "
        "failed: exec failed: unable to start container process: exec: \"nosuchcmd\": executable "
        "file not found in $PATH: unknown";
    const std::string shown = kube::boundedServerMessage(message, 300);
    CHECK(shown.size() <= 300);
    CHECK(shown.rfind("Internal error occurred: error executing command", 0) == 0);
    CHECK(shown.find("...") != std::string::npos);
    CHECK(shown.find("exec: \"nosuchcmd\": executable file not found in $PATH: unknown") !=
          std::string::npos);
    CHECK(kube::boundedServerMessage("short", 300) == "short");
}

TEST_CASE("sandbox cp of a directory onto its own name in the pod says it nested",
          "[walkthrough34][cp]") {
    testing::TempDir dir;
    dir.write("data/a.txt", "alpha");
    TestHost host;
    testing::serveCpOrders(host);
    host.server.onExec("team1", "orders", testing::execRan("d - tar\n", "", 0));  // a directory
    host.server.onExec("team1", "orders", testing::execRan("", "", 0));
    REQUIRE(host.run({"sandbox", "cp", dir.file("data"), "orders:/workspace/data"}) == 0);
    REQUIRE(host.server.execs.size() == 2);
    CHECK(host.server.execs[1].command.at(4) == "/workspace/data/data");  // kubectl cp's reading
    CHECK(host.err.str() ==
          "copied 1 file, 5 bytes\n"
          "note: orders:/workspace/data was a directory already, so data went into it as "
          "/workspace/data/data, as kubectl cp does; to update its files instead, copy to "
          "orders:/workspace\n");
    // Into a directory of another name: where kubectl cp puts it, nothing to say.
    TestHost other;
    testing::serveCpOrders(other);
    other.server.onExec("team1", "orders", testing::execRan("d - tar\n", "", 0));
    other.server.onExec("team1", "orders", testing::execRan("", "", 0));
    REQUIRE(other.run({"sandbox", "cp", dir.file("data"), "orders:/workspace"}) == 0);
    CHECK(other.err.str() == "copied 1 file, 5 bytes\n");
}
