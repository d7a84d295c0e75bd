// The command line the way a kubectl user types it (issue 21): --dry-run's three modes, usage
// errors worded as kubectl words them, TYPE/NAME arguments, not-found hints. Offline: the whole
// CLI parses argv exactly as main does and talks to a scripted server.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/ui/jsonpath.hpp"
#include "rossoctl/ui/nearest_word.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

namespace {

// The Sandbox API served at v1alpha1 only: these cases predate v1beta1 and their objects say so.
void serveAlphaSandboxGroup(TestHost& host) {
    host.server.on("GET", "/apis/agents.x-k8s.io", 200,
                   R"({"kind":"APIGroup","name":"agents.x-k8s.io","versions":[)"
                   R"({"version":"v1alpha1"}],"preferredVersion":{"version":"v1alpha1"}})");
}

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1alpha1/namespaces/team1/sandboxes";
// Projects are the namespaces labelled as sandbox projects.
const std::string kNamespaces = "/api/v1/namespaces";

long lineCount(const std::string& text) {
    return std::count(text.begin(), text.end(), '\n');
}

const std::string kNotFound = R"({"kind":"Status","code":404,"reason":"NotFound"})";

std::string sandboxJson(const std::string& name, const std::string& env = "") {
    return json{
        {"apiVersion", "agents.x-k8s.io/v1alpha1"},
        {"kind", "Sandbox"},
        {"metadata", {{"name", name}, {"namespace", "team1"}, {"resourceVersion", "7"}}},
        {"spec",
         {{"podTemplate",
           {{"spec",
             {{"containers",
               json::array({{{"name", "agent"},
                             {"image", "busybox"},
                             {"env", env.empty() ? json::array()
                                                 : json::array({{{"name", env},
                                                                 {"value", "1"}}})}}})}}}}}}}}
        .dump();
}

}  // namespace

// --- (2) --dry-run=none|client|server ---------------------------------------------------------

TEST_CASE("--dry-run: bare is client, =server is taken, anything else is a usage error",
          "[conventions][dry-run]") {
    std::ostringstream warnings;
    using commands::DryRun;
    CHECK(commands::parseDryRun("", warnings) == DryRun::None);
    CHECK(commands::parseDryRun("none", warnings) == DryRun::None);
    CHECK(commands::parseDryRun("client", warnings) == DryRun::Client);
    CHECK(commands::parseDryRun("server", warnings) == DryRun::Server);
    CHECK(warnings.str().empty());
    CHECK(commands::parseDryRun("true", warnings) == DryRun::Client);
    CHECK(warnings.str().find("--dry-run=true is deprecated (boolean value) and can be replaced "
                              "with --dry-run=client") != std::string::npos);
    CHECK(commands::parseDryRun("false", warnings) == DryRun::None);
    CHECK_THROWS_WITH(commands::parseDryRun("maybe", warnings),
                      Catch::Contains("must be \"none\", \"client\" or \"server\""));
}

TEST_CASE("set-env: bare --dry-run is client (nothing sent but the GET), =server sends dryRun=All",
          "[conventions][dry-run]") {
    {
        TestHost host;
        serveAlphaSandboxGroup(host);
        host.server.on("GET", kSandboxes + "/orders", 200, sandboxJson("orders"));
        REQUIRE(host.run({"sandbox", "set-env", "orders", "A=1", "--dry-run", "-o", "json"}) == 0);
        CHECK(host.server.requestsTo("GET", kSandboxes + "/orders").size() == 1);
        for (const auto& request : host.server.requests) CHECK(request.method == "GET");
        auto printed = testing::printedJson(host.out.str());
        CHECK(printed["spec"]["podTemplate"]["spec"]["containers"][0]["env"][0]["name"] == "A");
    }
    {
        TestHost host;
        serveAlphaSandboxGroup(host);
        host.server.on("GET", kSandboxes + "/orders", 200, sandboxJson("orders"));
        host.server.on("PUT", kSandboxes + "/orders", 200, sandboxJson("orders", "A"));
        REQUIRE(host.run({"sandbox", "set-env", "orders", "A=1", "--dry-run=server"}) == 0);
        CHECK(host.server.writes() == std::vector<std::string>{"PUT " + kSandboxes + "/orders"});
        REQUIRE(host.server.requests.size() == 3);
        CHECK(host.server.requests[2].method == "PUT");
        CHECK(host.server.requests[2].url.find("dryRun=All") != std::string::npos);
        CHECK(host.out.str().find("(server dry run)") != std::string::npos);
    }
    {
        TestHost host;
        CHECK(host.run({"sandbox", "set-env", "orders", "A=1", "--dry-run=maybe"}) == kExitUsage);
        CHECK(host.server.requests.empty());
    }
}

TEST_CASE("--help renders --dry-run[=client], never --dry-run{client}", "[conventions][dry-run]") {
    for (auto path :
         std::vector<std::vector<std::string>>{{"sandbox", "set-env", "--help"},
                                               {"project", "create", "--help"},
                                               {"agents", "import", "from-image", "--help"}}) {
        TestHost host;
        CHECK(host.run(path) == 0);
        INFO(host.out.str());
        CHECK(host.out.str().find("--dry-run[=client]") != std::string::npos);
        CHECK(host.out.str().find("{client}") == std::string::npos);
    }
}

TEST_CASE("agents import and project create take all three --dry-run modes",
          "[conventions][dry-run]") {
    TestHost bad;
    CHECK(bad.run({"project", "create", "team9", "--dry-run=later"}) == kExitUsage);
    CHECK(bad.err.str().find("invalid argument \"later\" for \"--dry-run\" flag") !=
          std::string::npos);
    CHECK(bad.server.requests.empty());
}

// --- (3) typos and usage errors ---------------------------------------------------------------

TEST_CASE("a mistyped command is named, with the nearest one, exit 2", "[conventions][usage]") {
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    std::vector<Case> cases = {
        {{"sandbox", "lsit"},
         "error: unknown command \"lsit\" for \"rossoctl sandbox\"; did you mean \"list\"? (see "
         "'rossoctl sandbox --help')"},
        {{"sandbx", "list"},
         "unknown command \"sandbx\" for \"rossoctl\"; did you mean \"sandbox\"?"},
        {{"sandbox", "describe", "orders"},
         "unknown command \"describe\" for \"rossoctl sandbox\""},
        {{"project", "lis"}, "did you mean \"list\"?"},
        {{"sandbox", "list", "--namespcae", "x"}, "error: unknown flag: --namespcae"},
        {{"sandbox", "list", "-Z"}, "unknown shorthand flag: 'Z' in -Z"},
        {{"sandbox", "get", "orders", "-n"}, "flag needs an argument: -n"},
        {{"sandbox"}, "\"rossoctl sandbox\" needs a command: list, get"},
        {{"sandbox", "pool", "--size", "abc"},
         "invalid argument \"abc\" for \"--size\" flag: not a number"},
        // Extra arguments in the user's order, in cobra's words (CLI11 listed them reversed).
        {{"sandbox", "list", "a", "b", "c"}, "unknown command \"a\" for \"rossoctl sandbox list\""},
        {{"version", "extra"}, "unknown command \"extra\" for \"rossoctl version\""},
        {{"sandbox", "pool", "py", "extra", "--size", "1"},
         "accepts at most 1 arg(s), received 2: unexpected \"extra\""},
        {{"agents", "wait", "orders", "billing", "-n", "team1"},
         "error: accepts at most 1 arg(s), received 2: unexpected \"billing\" (see 'rossoctl "
         "agents wait --help')"},
        {{"project", "create", "team1", "team2"},
         "accepts at most 1 arg(s), received 2: unexpected \"team2\""},
    };
    for (const auto& c : cases) {
        TestHost host;
        INFO(c.args.front() << " " << (c.args.size() > 1 ? c.args[1] : ""));
        CHECK(host.run(c.args) == kExitUsage);
        CHECK(host.err.str().find(c.message) != std::string::npos);
        CHECK(host.err.str().find("not expected") == std::string::npos);
        CHECK(lineCount(host.err.str()) == 1);
        CHECK(host.server.requests.empty());
    }
}

TEST_CASE("usage errors name the argument as --help shows it", "[conventions][usage]") {
    TestHost host;
    CHECK(host.run({"sandbox", "set-env"}) == kExitUsage);
    CHECK(host.err.str().find("sandbox_and_changes") == std::string::npos);
    CHECK(host.err.str().find("SANDBOX is required") != std::string::npos);
    TestHost help;
    CHECK(help.run({"sandbox", "set-env", "--help"}) == 0);
    CHECK(help.out.str().find("SANDBOX") != std::string::npos);
}

TEST_CASE("pool --size -1 reaches the range check instead of reading as a flag",
          "[conventions][usage]") {
    TestHost host;
    CHECK(host.run({"sandbox", "pool", "--size", "-1"}) == kExitUsage);
    CHECK(host.err.str().find("0 to 100") != std::string::npos);
    CHECK(host.err.str().find("is required") == std::string::npos);
    CHECK(host.server.requests.empty());
}

TEST_CASE("a server's names past a Kubernetes name's length are never suggested",
          "[conventions][hostile]") {
    // A hostile list of 1 MiB names starting with the typed one had the first printed whole.
    const std::string huge = "orders" + std::string(1 << 20, 'x');
    CHECK(rossoctl::ui::nearestWord("orders", {huge}).empty());
    CHECK(rossoctl::ui::nearestWord("ordres", {huge, "orders"}) == "orders");
}

TEST_CASE("nearestWord: edit distance 2 or a prefix, else nothing", "[conventions][usage]") {
    const std::vector<std::string> known{"list", "get", "set-env", "restart"};
    CHECK(commands::nearestWord("lsit", known) == "list");
    CHECK(commands::nearestWord("rsetart", known) == "restart");
    CHECK(commands::nearestWord("set", known) == "set-env");
    CHECK(commands::nearestWord("delete", known).empty());
}

// --- (4) TYPE/NAME --------------------------------------------------------------------------

TEST_CASE("TYPE/NAME as -o name prints it is taken wherever a name is", "[conventions][names]") {
    using commands::objectName;
    const std::vector<commands::ObjectType> sandbox{commands::sandboxType()};
    for (auto spelling : {"orders", "sandbox/orders", "sandboxes/orders",
                          "sandbox.agents.x-k8s.io/orders", "Sandbox/orders"})
        CHECK(objectName(spelling, sandbox, "sandbox") == "orders");
    CHECK_THROWS_WITH(objectName("deployment.apps/orders", sandbox, "sandbox"),
                      Catch::Contains("is not a sandbox"));
    CHECK(objectName("deployment.apps/web", commands::agentTypes(), "agent") == "web");
    CHECK(objectName("sts/db", commands::agentTypes(), "agent") == "db");
    CHECK(objectName("namespace/team1", {commands::namespaceType()}, "project") == "team1");
    CHECK(commands::objectNames({"a", "sandbox/a", "b"}, sandbox, "sandbox") ==
          std::vector<std::string>{"a", "b"});
}

TEST_CASE("sandbox get takes several names and TYPE/NAME; a missing one is hinted with -n",
          "[conventions][names]") {
    TestHost host;
    serveAlphaSandboxGroup(host);
    host.server.on("GET", kSandboxes + "/orders", 200, sandboxJson("orders"));
    host.server.on("GET", kSandboxes + "/ghost", 404, kNotFound);  // and orders has no pod yet
    CHECK(host.run({"sandbox", "get", "sandbox.agents.x-k8s.io/orders", "sandboxes/ghost", "-n",
                    "team1"}) == kExitError);
    CHECK(host.server.requestsTo("GET", kSandboxes + "/ghost").size() == 1);
    CHECK(host.out.str().find("orders") != std::string::npos);
    CHECK(host.err.str().find("sandbox \"ghost\" not found in namespace \"team1\"; run "
                              "\"rossoctl sandbox list -n team1\"") != std::string::npos);
    TestHost bad;
    CHECK(bad.run({"sandbox", "get", "deployment.apps/orders"}) == kExitUsage);
    CHECK(bad.server.requests.empty());
}

TEST_CASE("sandbox restart orders orders restarts and prints once", "[conventions][names]") {
    TestHost host;
    serveAlphaSandboxGroup(host);
    host.server.on("GET", kSandboxes + "/orders", 404, kNotFound);
    CHECK(host.run({"sandbox", "restart", "orders", "sandbox/orders", "--wait=false"}) ==
          kExitError);
    int gets = 0;
    for (const auto& line : host.sent())
        if (line.find("/sandboxes/orders") != std::string::npos) ++gets;
    CHECK(gets == 1);
    CHECK(host.server.writes().empty());
    CHECK(lineCount(host.err.str()) == 1);
}

// --- (7) not-found hints --------------------------------------------------------------------

TEST_CASE("set-env of a missing sandbox gets the hint with the -n in use", "[conventions][hints]") {
    TestHost host;
    serveAlphaSandboxGroup(host);
    const std::string ordres = "/apis/agents.x-k8s.io/v1alpha1/namespaces/shop/sandboxes/ordres";
    host.server.on("GET", ordres, 404, kNotFound);
    CHECK(host.run({"sandbox", "set-env", "ordres", "A=1", "-n", "shop"}) == kExitError);
    // The list after the 404 looks for a name it nearly spells (none here: the hint stays);
    // before it, whether the name is an agent of type deployment (walk 6 MINOR 13).
    CHECK(host.sent() ==
          std::vector<std::string>{"GET /apis/agents.x-k8s.io", "GET " + ordres,
                                   "GET /apis/apps/v1/namespaces/shop/deployments/ordres",
                                   "GET /apis/agents.x-k8s.io/v1alpha1/namespaces/shop/sandboxes"});
    CHECK(host.err.str().find("Error from server") == std::string::npos);
    CHECK(host.err.str().find("\"rossoctl sandbox list -n shop\"") != std::string::npos);
}

TEST_CASE("project delete of a missing project says it does not exist", "[conventions][hints]") {
    TestHost host;
    host.server.on("GET", kNamespaces + "/ghost", 404, kNotFound);
    CHECK(host.run({"project", "delete", "project/ghost", "--yes"}) == kExitError);
    CHECK(host.sent() == std::vector<std::string>{"GET " + kNamespaces + "/ghost"});
    CHECK(host.err.str().find("project \"ghost\" does not exist") != std::string::npos);
    CHECK(host.err.str().find("project create") == std::string::npos);
}

// --- (5) list conventions -------------------------------------------------------------------

TEST_CASE("-l/--selector reaches every list's request", "[conventions][list]") {
    {
        TestHost host;
        serveAlphaSandboxGroup(host);
        host.server.on("GET", kSandboxes, 200, R"({"items":[]})");
        CHECK(host.run({"sandbox", "list", "-l", "tier=web", "-o", "json"}) == 0);
        CHECK(host.sent().back() == "GET " + kSandboxes);
        CHECK(host.server.requests.back().url.find("labelSelector=tier%3Dweb") !=
              std::string::npos);
    }
    {
        TestHost host;
        host.server.on("GET", kNamespaces, 200, R"({"items":[]})");
        CHECK(host.run({"project", "ls", "--selector", "team=a", "-o", "name"}) == 0);
        CHECK(host.sent().back() == "GET " + kNamespaces);
        CHECK(host.server.requests.back().url.find("team%3Da") != std::string::npos);
        CHECK(host.server.requests.back().url.find("sandbox-project%3Dtrue") != std::string::npos);
    }
}

TEST_CASE("-o=name is -o name; --version prints the version", "[conventions][list]") {
    TestHost host;
    host.server.on("GET", kNamespaces, 200, R"({"items":[{"metadata":{"name":"team1"}}]})");
    CHECK(host.run({"project", "list", "-o=name"}) == 0);
    CHECK(host.out.str() == "namespace/team1\n");
    TestHost version;
    CHECK(version.run({"--version"}) == 0);
    CHECK(version.out.str().find("rossoctl v") == 0);
}

// --- (6) output parity ----------------------------------------------------------------------

TEST_CASE("-o yaml/json hide managedFields unless --show-managed-fields", "[conventions][output]") {
    const std::string withFields =
        R"({"metadata":{"name":"team1","creationTimestamp":"2026-01-02T03:04:05Z",)"
        R"("managedFields":[{"manager":"rossoctl"}]}})";
    TestHost host;
    host.server.on("GET", kNamespaces, 200, "{\"items\":[" + withFields + "]}");
    CHECK(host.run({"project", "list", "-o", "yaml"}) == 0);
    CHECK(host.out.str().find("managedFields") == std::string::npos);
    CHECK(host.out.str().find("kind: List") != std::string::npos);
    // PyYAML would read an unquoted timestamp as a datetime: quoted, as kubectl prints it.
    CHECK(host.out.str().find("creationTimestamp: \"2026-01-02T03:04:05Z\"") != std::string::npos);
    TestHost shown;
    shown.server.on("GET", kNamespaces, 200, "{\"items\":[" + withFields + "]}");
    CHECK(shown.run({"project", "list", "-o", "json", "--show-managed-fields"}) == 0);
    CHECK(shown.out.str().find("managedFields") != std::string::npos);
    CHECK(shown.out.str().find("\n    \"apiVersion\"") != std::string::npos);  // 4 spaces
}

TEST_CASE("YAML quotes what a YAML 1.1 reader would retype", "[conventions][output]") {
    std::ostringstream out;
    ui::printYaml(out, json{{"answer", "yes"}, {"at", "2026-01-02"}, {"name", "orders"}});
    CHECK(out.str().find("at: \"2026-01-02\"") != std::string::npos);
    CHECK(out.str().find("answer: \"yes\"") != std::string::npos);
    CHECK(out.str().find("name: orders") != std::string::npos);
}

// --- (8) waits that know better -------------------------------------------------------------

TEST_CASE("agents wait on a suspended sandbox fails at once, without watching",
          "[conventions][wait]") {
    TestHost host;
    serveAlphaSandboxGroup(host);  // no deployment, statefulset or job "orders": 404
    host.server.on("GET", kSandboxes + "/orders", 200,
                   R"({"metadata":{"name":"orders","namespace":"team1","resourceVersion":"5",)"
                   R"("labels":{"app.kubernetes.io/managed-by":"rossoctl"}},)"
                   R"("spec":{"replicas":0}})");
    CHECK(host.run({"agents", "wait", "sandbox/orders", "--timeout", "10m"}) == kExitError);
    CHECK(host.err.str().find("will not become Ready: it is suspended") != std::string::npos);
    CHECK(host.server.requestsTo("GET", kSandboxes + "/orders").size() == 1);
    for (const auto& request : host.server.requests)  // no watch: the URL with its query
        CHECK(request.url.find("watch") == std::string::npos);
}

// --- (9) the small ones ---------------------------------------------------------------------

TEST_CASE("project create --allow-cidr 0.0.0.0/0 is refused without --force",
          "[conventions][small]") {
    for (auto cidr : {"0.0.0.0/0", "::/0"}) {
        TestHost host;
        CHECK(host.run({"project", "create", "team9", "--allow-cidr", cidr}) == kExitUsage);
        CHECK(host.err.str().find("add --force") != std::string::npos);
        CHECK(host.server.requests.empty());
    }
}

TEST_CASE("sandbox run --artifacts naming a file is refused before anything runs",
          "[conventions][small]") {
    TestHost host;
    rossoctl::testing::TempDir dir;
    const std::string file = dir.path() + "/file.txt";
    std::ofstream(file) << "x";
    CHECK(host.run({"sandbox", "run", "--artifacts", file, "--", "true"}) != 0);
    CHECK(host.err.str().find("not a directory") != std::string::npos);
    CHECK(host.server.requests.empty());
}

// --- (7) no internal URL reaches the user ---------------------------------------------------

TEST_CASE("a Status quoting the node's exec URL names the endpoint, not its address or query",
          "[conventions][hints]") {
    const std::string script(6000, 'x');
    const std::string body =
        json{{"kind", "Status"},
             {"code", 500},
             {"message",
              "error dialing backend: dial tcp: Get \"https://10.0.0.5:10250/exec/team1/"
              "orders/agent?command=sh&command=-c&command=" +
                  script + "\": connection refused"}}
            .dump();
    const auto error = kube::apiErrorFromResponse(500, body);
    const std::string message = error.what();
    CHECK(message.size() < 300);
    CHECK(message.find("10.0.0.5") == std::string::npos);
    CHECK(message.find("Get the node's exec endpoint: connection refused") != std::string::npos);
    CHECK(message.find("command=") == std::string::npos);
    CHECK(message.find("connection refused") != std::string::npos);
}

TEST_CASE("-o jsonpath=, -o custom-columns= and --sort-by on a list", "[conventions][list]") {
    const std::string items = R"({"items":[{"metadata":{"name":"zeta","labels":{"tier":"web"}}},)"
                              R"({"metadata":{"name":"alpha"}}]})";
    {
        TestHost host;
        host.server.on("GET", kNamespaces, 200, items);
        CHECK(host.run({"project", "list", "-o", "jsonpath={.items[*].metadata.name}"}) == 0);
        CHECK(host.out.str() == "zeta alpha");  // kubectl adds no newline
    }
    {
        TestHost host;
        host.server.on("GET", kNamespaces, 200, items);
        CHECK(host.run({"project", "list", "--sort-by=.metadata.name", "-o",
                        R"(jsonpath={range .items[*]}{.metadata.name}{"\n"}{end})"}) == 0);
        CHECK(host.out.str() == "alpha\nzeta\n");
    }
    {
        TestHost host;
        host.server.on("GET", kNamespaces, 200, items);
        CHECK(host.run({"project", "list",
                        "-o=custom-columns=NAME:.metadata.name,TIER:.metadata."
                        "labels.tier"}) == 0);
        CHECK(host.out.str() == "NAME    TIER\nzeta    web\nalpha   <none>\n");
    }
    {
        TestHost host;
        CHECK(host.run({"project", "list", "-o", "custom-columns=NAME"}) == kExitUsage);
        CHECK(host.run({"sandbox", "list", "--sort-by", "{.metadata[name"}) == kExitUsage);
        CHECK(host.server.requests.empty());
    }
}

TEST_CASE("jsonpath reads fields, indexes, quoted keys and every element", "[conventions][list]") {
    const json object = {{"a", {{"b.c", 1}, {"list", {1, 2, 3}}}}};
    const auto quoted = ui::findPath(object, ".a['b.c']");
    REQUIRE(quoted.size() == 1);
    CHECK(*quoted[0] == 1);
    const auto last = ui::findPath(object, "{.a.list[-1]}");
    REQUIRE(last.size() == 1);
    CHECK(*last[0] == 3);
    CHECK(ui::findPath(object, ".a.list[*]").size() == 3);
    CHECK(ui::findPath(object, ".missing.field").empty());
}

TEST_CASE("agents import --cpu over the project's LimitRange max: exit 2, nothing written",
          "[conventions][wait]") {
    TestHost host;
    host.serveRuntimeGroup();
    serveAlphaSandboxGroup(host);  // the 4 workload types and the runtime: 404, the agent is new
    host.server.on("GET", "/api/v1/namespaces/team1/limitranges", 200,
                   R"({"items":[{"metadata":{"name":"sandbox-limits"},"spec":{"limits":)"
                   R"([{"type":"Container","max":{"cpu":"2","memory":"4Gi"}}]}}]})");
    CHECK(host.run({"agents", "import", "from-image", "--name", "orders", "--containerImage",
                    "nginx", "--cpu", "10", "-n", "team1"}) == kExitUsage);
    CHECK(host.err.str().find("--cpu 10 is more than a container may have in namespace team1 "
                              "(max cpu 2, LimitRange sandbox-limits); nothing was created") !=
          std::string::npos);
    CHECK(host.server.requestsTo("GET", kSandboxes + "/orders").size() == 1);
    for (const auto& request : host.server.requests) CHECK(request.method == "GET");
}
