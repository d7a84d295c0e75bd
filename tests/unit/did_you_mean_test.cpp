// "Did you mean" for a mistyped flag and a mistyped sandbox name (issue 34 point 10), offline.
#include <catch2/catch.hpp>

#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";

json sandboxNamed(const std::string& name) {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata", {{"name", name}, {"namespace", "team1"}, {"uid", "uid-" + name}}}};
}

// A namespace holding `names` in which `missing` is not found.
void serveSandboxesWithout(TestHost& host, const std::string& missing,
                           const std::vector<std::string>& names) {
    host.serveSandboxGroup();
    host.server.on("GET", kSandboxes + "/" + missing, 404, testing::kNotFoundBody);
    json items = json::array();
    for (const auto& name : names) items.push_back(sandboxNamed(name));
    host.server.onJson("GET", kSandboxes, 200,
                       {{"kind", "SandboxList"}, {"metadata", json::object()}, {"items", items}});
}

}  // namespace

TEST_CASE("a mistyped flag is named with the flag it nearly spells", "[conventions][usage]") {
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    const std::vector<Case> cases = {
        {{"agents", "import", "from-image", "--name", "a", "--envvar", "A=1"},
         "unknown flag: --envvar; did you mean --envVar?"},
        {{"agents", "import", "from-image", "--name", "a", "--image", "busybox"},
         "unknown flag: --image; did you mean --container-image?"},
        {{"sandbox", "list", "--namespcae", "x"},
         "unknown flag: --namespcae; did you mean --namespace?"},
        {{"sandbox", "run", "--fiel", "a.py", "--", "python3", "a.py"},
         "unknown flag: --fiel; did you mean --file?"},
    };
    for (const auto& c : cases) {
        TestHost host;
        INFO(c.args[1] << " " << c.message);
        CHECK(host.run(c.args) != 0);
        CHECK(host.err.str().find(c.message) != std::string::npos);
        CHECK(host.server.requests.empty());
    }
    TestHost far;
    CHECK(far.run({"sandbox", "list", "--zzzzzzzz"}) == kExitUsage);
    CHECK(far.err.str().find("unknown flag: --zzzzzzzz (see") != std::string::npos);
}

TEST_CASE("sandbox get of a mistyped name suggests the sandbox it nearly spells",
          "[conventions][names]") {
    TestHost host;
    serveSandboxesWithout(host, "order", {"orders", "billing"});
    CHECK(host.run({"sandbox", "get", "order"}) == kExitError);
    CHECK(host.err.str() ==
          "error: sandbox \"order\" not found in namespace \"team1\"; did you mean \"orders\"?\n");
    CHECK(host.server.writes().empty());

    TestHost none;
    serveSandboxesWithout(none, "zebra", {"orders"});
    CHECK(none.run({"sandbox", "get", "zebra"}) == kExitError);
    CHECK(none.err.str().find("; run \"rossoctl sandbox list -n team1\"") != std::string::npos);
}

TEST_CASE("sandbox verify of a mistyped name suggests the sandbox and verifies nothing",
          "[conventions][names]") {
    TestHost host;
    serveSandboxesWithout(host, "ordrs", {"orders"});
    CHECK(host.run({"sandbox", "verify", "ordrs"}) == kExitError);
    CHECK(host.err.str().find("not found in namespace team1; did you mean \"orders\"?") !=
          std::string::npos);
    CHECK(host.server.writes().empty());
}

TEST_CASE("a kubectl habit gets the rossoctl command it meant, not a near word",
          "[conventions][usage][hints]") {
    struct Case {
        std::vector<std::string> args;
        std::string message;
        int code = kExitUsage;
    };
    const std::vector<Case> cases = {
        {{"get", "sandboxes", "-n", "team1"},
         "unknown command \"get\" for \"rossoctl\"; use \"rossoctl sandbox list -n team1\""},
        {{"get", "sandbox", "orders"}, "; use \"rossoctl sandbox get orders\""},
        {{"get", "orders"},
         "; use \"rossoctl agents get orders\" or \"rossoctl sandbox get orders\""},
        {{"describe", "sandbox", "orders"}, "\"rossoctl sandbox get NAME -o wide\""},
        {{"delete", "sandbox", "orders"},
         "; a sandbox is deleted with its agent: \"rossoctl agents delete NAME\""},
        {{"logs", "orders"}, "; use \"rossoctl sandbox logs orders\""},
        {{"exec", "orders", "--", "ls"}, "; use \"rossoctl sandbox exec orders -- ls\""},
        {{"cp", "orders:/a", "b"}, "; use \"rossoctl sandbox cp orders:/a b\""},
        {{"top"}, "; use \"rossoctl sandbox top\""},
        {{"apply", "-f", "x.yaml"}, "\"rossoctl agents import from-image --name NAME ...\""},
        {{"sandbox", "list", "--all"},
         "unknown flag: --all; for every namespace use -A/--all-namespaces ("},
        {{"sandbox", "set-env", "orders", "--env", "A=1"},
         "unknown flag: --env; give NAME=VALUE as arguments: rossoctl sandbox set-env orders "
         "A=1 ("},
        {{"sandbox", "set-env", "orders", "--env=A=1", "--restart"},
         "give NAME=VALUE as arguments: rossoctl sandbox set-env orders A=1 --restart ("},
        {{"agents", "import", "--deployment-type", "sandbox", "--name", "x", "--containerImage",
          "busybox"},
         "unknown flag: --name; it is a flag of \"rossoctl agents import from-image\": did you "
         "leave out \"from-image\"?"},
        {{"agents", "import", "--deployment-type", "sandbox", "from-image", "x", "--containerImage",
          "busybox"},
         "unknown command \"x\" for \"rossoctl agents import from-image\"; give the name with "
         "--name x ("},
        {{"sandbox", "exec", "orders", "ls", "-la"},
         "unknown shorthand flag: 'l' in -la; put the command after \"--\" so that its flags are "
         "its own: rossoctl sandbox exec orders -- ls -la ("},
        {{"sandbox", "exec", "orders", "-c", "agent", "ls", "-la"},
         "rossoctl sandbox exec orders -c agent -- ls -la ("},
        {{"sandbox", "run", "-n", "P", "python3", "-c", "print(1)"},
         "unknown shorthand flag: 'c' in -c; put the command after \"--\" so that its flags are "
         "its own: rossoctl sandbox run -n P -- python3 -c 'print(1)' (",
         125},  // sandbox run's own usage errors are docker run's 125
        // Walk 7 W2: after a bare --pool the word may be a pool's name; both readings offered.
        {{"sandbox", "run", "-n", "P", "--pool", "py", "python3", "-c", "print(2)"},
         "put the command after \"--\" so that its flags are its own: rossoctl sandbox run -n P "
         "--pool -- py python3 -c 'print(2)', or, when py names a warm pool: rossoctl sandbox "
         "run -n P --pool=py -- python3 -c 'print(2)' (",
         125},
        // Walk 7 W1: a hosted sandbox CLI's words lead to a sandbox, not a project.
        {{"sandbox", "create", "foo", "-n", "team1"},
         "unknown command \"create\" for \"rossoctl sandbox\"; use \"rossoctl agents import "
         "--deployment-type sandbox from-image --name NAME --containerImage IMAGE\""},
        {{"sandbox", "rm", "orders"},
         "; a sandbox is deleted with its agent: \"rossoctl agents "
         "delete NAME\""},
        {{"sandbox", "ssh", "orders"}, "; use \"rossoctl sandbox exec NAME -it -- sh\""},
        {{"agents", "import", "from-image", "--name", "x", "--containerImage", "busybox",
          "--command", "sh", "-c", "echo hi"},
         "unknown shorthand flag: 'c' in -c; give each of the command's arguments with --args "
         "(--args=-c)"},
        {{"sandbox", "get", "-n", "P"},
         "name is required; to list them all, \"rossoctl sandbox list -n P\""},
        {{"sandbox", "list", "orders"},
         "unknown command \"orders\" for \"rossoctl sandbox list\"; to show one, \"rossoctl "
         "sandbox get orders\""},
        // sandbox delete takes only a pod sandbox run --keep kept.
        {{"sandbox", "delete", "orders"},
         "a sandbox goes with its agent: rossoctl agents delete orders"},
        {{"sandbox", "describe", "orders"},
         "; use \"rossoctl sandbox get NAME -o wide\" or \"rossoctl project describe PROJECT\""},
    };
    for (const auto& c : cases) {
        TestHost host;
        std::string line;
        for (const auto& word : c.args) line += word + " ";
        INFO(line << "-> " << host.err.str());
        CHECK(host.run(c.args) == c.code);
        INFO(host.err.str());
        CHECK(host.err.str().find(c.message) != std::string::npos);
        CHECK(host.err.str().find("did you mean \"gc\"") == std::string::npos);
        CHECK(host.err.str().find("--help-all?") == std::string::npos);
        CHECK(host.err.str().find("--v?") == std::string::npos);
        CHECK(host.server.requests.empty());
    }
    // A typo still gets its near word.
    TestHost typo;
    CHECK(typo.run({"sandbox", "lst"}) == kExitUsage);
    CHECK(typo.err.str().find("did you mean \"list\"?") != std::string::npos);
}
