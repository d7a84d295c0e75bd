// Usage errors in pflag's words and names as kubectl takes them (issue 21 points 3 and 4, issue 18
// point 6): a flag given twice keeps its last value, -w=false and --wait=maybe read as pflag
// reads them, -it, TYPE/NAME wherever a name is taken (sandbox cp's NAMESPACE/SANDBOX:PATH,
// agentruntime/NAME), agents get with several names. Offline, through TestHost.
#include <catch2/catch.hpp>
#include <sstream>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kDeployments = "/apis/apps/v1/namespaces/team1/deployments";

json sandboxObject(const std::string& name, const std::string& ns = "team1") {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", name},
              {"namespace", ns},
              {"uid", "uid-" + name},
              {"resourceVersion", "5"},
              {"creationTimestamp", "2023-11-14T22:00:00Z"},
              {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}},
            {"spec",
             {{"podTemplate",
               {{"spec", {{"containers", {{{"name", "agent"}, {"image", "busybox"}}}}}}}}}},
            {"status",
             {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
              {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "Ready"}}}}}}};
}

json podOf(const std::string& sandbox) {
    return {{"metadata",
             {{"name", sandbox},
              {"namespace", "team1"},
              {"uid", "pod-uid-" + sandbox},
              {"creationTimestamp", "2023-11-14T22:00:05Z"},
              {"labels", {{"agents.x-k8s.io/sandbox-name-hash", "abc"}}},
              {"ownerReferences",
               {{{"kind", "Sandbox"},
                 {"name", sandbox},
                 {"uid", "uid-" + sandbox},
                 {"controller", true}}}}}},
            {"spec", {{"containers", {{{"name", "agent"}}}}}},
            {"status", {{"phase", "Running"}}}};
}

// Sandbox "orders" in team1 with its running pod.
void serveOrders(TestHost& host) {
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandboxObject("orders"));
    host.server.onJson("GET", kSandboxes, 200, list({sandboxObject("orders")}));
    host.server.onJson("GET", kPods, 200, list({podOf("orders")}));
}

json managedDeployment(const std::string& name) {
    return {
        {"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata",
         {{"name", name},
          {"namespace", "team1"},
          {"uid", "uid-" + name},
          {"creationTimestamp", "2023-11-14T22:00:00Z"},
          {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}},
        {"spec",
         {{"replicas", 1},
          {"template", {{"spec", {{"containers", {{{"name", "agent"}, {"image", "nginx"}}}}}}}}}},
        {"status", {{"replicas", 1}, {"readyReplicas", 1}, {"availableReplicas", 1}}}};
}

// Deployments `names` exist (managed) in team1; every other workload list is empty.
void serveAgents(TestHost& host, const std::vector<std::string>& names) {
    host.serveGroups();
    std::vector<json> items;
    for (const auto& name : names) {
        items.push_back(managedDeployment(name));
        host.server.onJson("GET", kDeployments + "/" + name, 200, managedDeployment(name));
    }
    host.server.onJson("GET", kDeployments, 200, list(items));
    for (const char* path :
         {"/apis/apps/v1/namespaces/team1/statefulsets", "/apis/batch/v1/namespaces/team1/jobs",
          "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes",
          "/api/v1/namespaces/team1/pods"})
        host.server.onJson("GET", path, 200, list({}));
}

std::string firstLine(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

std::vector<std::string> words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> result;
    for (std::string word; in >> word;) result.push_back(word);
    return result;
}

}  // namespace

// --- (a) a flag given twice -------------------------------------------------------------------

TEST_CASE("a single-valued flag given twice keeps its last value, as pflag does",
          "[usage-names][usage]") {
    TestHost host;
    serveOrders(host);
    REQUIRE(host.run({"sandbox", "list", "-o", "yaml", "-o", "json"}) == 0);
    CHECK(testing::printedJson(host.out.str())["items"].size() == 1);

    TestHost namespaces;  // a global flag and a command's own, given twice each
    namespaces.serveSandboxGroup();
    const std::string team2 = "/apis/agents.x-k8s.io/v1beta1/namespaces/team2/sandboxes";
    namespaces.server.onJson("GET", team2 + "/orders", 200, sandboxObject("orders", "team2"));
    CHECK(namespaces.run({"-n", "team3", "sandbox", "get", "orders", "-n", "team2", "-o", "name",
                          "--output=json", "-o", "name"}) == 0);
    CHECK(namespaces.out.str() == "sandbox.agents.x-k8s.io/orders\n");
    CHECK(namespaces.server.requestsTo("GET", team2 + "/orders").size() == 1);

    // A list flag still keeps every value: both names reach the dry-run's egress rules.
    TestHost lists;
    lists.resolver.addresses["a.example.com"] = {"192.0.2.1"};
    lists.resolver.addresses["b.example.com"] = {"192.0.2.2"};
    INFO(lists.err.str());
    REQUIRE(lists.run({"project", "create", "team9", "--allow-host", "a.example.com",
                       "--allow-host", "b.example.com", "--dry-run=client", "-o", "yaml"}) == 0);
    CHECK(lists.out.str().find("a.example.com") != std::string::npos);
    CHECK(lists.out.str().find("b.example.com") != std::string::npos);
}

// --- (b) -X=true|false ------------------------------------------------------------------------

TEST_CASE("a boolean shorthand takes =true and =false, as pflag's -w=false",
          "[usage-names][usage]") {
    TestHost host;
    serveOrders(host);
    REQUIRE(host.run({"sandbox", "list", "-w=false"}) == 0);  // listed once, no watch
    for (const auto& request : host.server.requests)
        CHECK(request.url.find("watch=true") == std::string::npos);
    CHECK(firstLine(host.out.str()).rfind("NAME", 0) == 0);

    TestHost follow;
    serveOrders(follow);
    follow.server.on("GET", kPods + "/orders/log", 200, "line one\n");
    follow.server.onRequest = [&follow](const kube::HttpRequest& request) {
        if (request.url.find("/log") != std::string::npos) follow.cancel.cancel();  // Ctrl-C
    };
    follow.run({"sandbox", "logs", "orders", "-f=true"});
    INFO(follow.err.str());
    const auto logs = follow.server.requestsTo("GET", kPods + "/orders/log");
    REQUIRE_FALSE(logs.empty());
    CHECK(logs.front().url.find("follow=true") != std::string::npos);

    TestHost notFollowing;
    serveOrders(notFollowing);
    notFollowing.server.on("GET", kPods + "/orders/log", 200, "line one\n");
    CHECK(notFollowing.run({"sandbox", "logs", "orders", "-f=false"}) == 0);
    const auto plain = notFollowing.server.requestsTo("GET", kPods + "/orders/log");
    REQUIRE(plain.size() == 1);
    CHECK(plain.front().url.find("follow=true") == std::string::npos);
}

// --- (c) a boolean flag given a word that is not one -----------------------------------------

TEST_CASE("a boolean flag given a non-boolean value is refused in pflag's words",
          "[usage-names][usage]") {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"project", "delete", "x", "--wait=maybe"},
         "error: invalid argument \"maybe\" for \"--wait\" flag: strconv.ParseBool: parsing "
         "\"maybe\": invalid syntax (see 'rossoctl project delete --help')\n"},
        {{"sandbox", "list", "--no-headers=maybe"},
         "error: invalid argument \"maybe\" for \"--no-headers\" flag: strconv.ParseBool: parsing "
         "\"maybe\": invalid syntax (see 'rossoctl sandbox list --help')\n"},
        // CLI11 took yes and 2 as true; pflag does not.
        {{"sandbox", "list", "--no-headers=yes"},
         "error: invalid argument \"yes\" for \"--no-headers\" flag: strconv.ParseBool: parsing "
         "\"yes\": invalid syntax (see 'rossoctl sandbox list --help')\n"},
        {{"sandbox", "list", "-w=2"},
         "error: invalid argument \"2\" for \"-w, --watch\" flag: strconv.ParseBool: parsing "
         "\"2\": invalid syntax (see 'rossoctl sandbox list --help')\n"},
        {{"sandbox", "logs", "x", "--follow=on"},
         "error: invalid argument \"on\" for \"-f, --follow\" flag: strconv.ParseBool: parsing "
         "\"on\": invalid syntax (see 'rossoctl sandbox logs --help')\n"},
    };
    for (const auto& [args, expected] : cases) {
        TestHost host;
        CHECK(host.run(args) == kExitUsage);
        CHECK(host.err.str() == expected);
        CHECK(host.server.requests.empty());
    }
    // Every spelling strconv.ParseBool takes is taken.
    for (const char* value :
         {"1", "0", "t", "f", "T", "F", "true", "false", "TRUE", "FALSE", "True", "False"}) {
        TestHost host;
        serveOrders(host);
        INFO(value);
        CHECK(host.run({"sandbox", "list", std::string("--no-headers=") + value}) == 0);
    }
}

// --- (d) -it ----------------------------------------------------------------------------------

TEST_CASE("sandbox exec -it asks for a TTY when stdin is a terminal, as kubectl exec does",
          "[usage-names][exec]") {
    TestHost host;
    serveOrders(host);
    host.stdinIsTerminal = true;
    host.server.onExec("team1", "orders", testing::execRan("/ # ", "", 0));
    CHECK(host.run({"sandbox", "exec", "orders", "-it", "--", "sh"}) == 0);
    REQUIRE(host.server.execs.size() == 1);
    CHECK(host.server.execs[0].tty);
    CHECK(host.server.execs[0].command == std::vector<std::string>{"sh"});
    CHECK(host.err.str().empty());

    // A pipe on stdin: no TTY, with kubectl's note; -t without -i: no TTY, no note.
    TestHost piped;
    serveOrders(piped);
    piped.server.onExec("team1", "orders", testing::execRan("", "", 0));
    CHECK(piped.run({"sandbox", "exec", "orders", "-i", "--tty", "--", "sh"}) == 0);
    REQUIRE(piped.server.execs.size() == 1);
    CHECK_FALSE(piped.server.execs[0].tty);
    CHECK(piped.err.str() ==
          "Unable to use a TTY - input is not a terminal or the right kind of file\n");

    TestHost alone;
    serveOrders(alone);
    alone.stdinIsTerminal = true;
    alone.server.onExec("team1", "orders", testing::execRan("", "", 0));
    CHECK(alone.run({"sandbox", "exec", "orders", "-t", "--", "ls"}) == 0);
    REQUIRE(alone.server.execs.size() == 1);
    CHECK_FALSE(alone.server.execs[0].tty);
    CHECK(alone.err.str().empty());
}

TEST_CASE("sandbox exec -it on a terminal: colours pass, a hostile pod's clipboard write does not",
          "[usage-names][exec]") {
    TestHost host;
    serveOrders(host);
    host.stdinIsTerminal = true;
    host.stdoutIsTerminal = true;
    // OSC 52 would put a command line on the user's clipboard; OSC 0 retitle the window.
    host.server.onExec("team1", "orders",
                       testing::execRan("\x1b]52;c;cm0gLXJmIH4K\x07\x1b]0;bank\x07"
                                        "\x1b[1;32m/ #\x1b[0m ",
                                        "", 0));
    CHECK(host.run({"sandbox", "exec", "orders", "-it", "--", "sh"}) == 0);
    const std::string out = host.out.str();
    CHECK(out.rfind("\x1b[1;32m/ #\x1b[0m ", 0) == 0);
    CHECK(out.find("\x1b]") == std::string::npos);
    CHECK(out.find("cm0gLXJmIH4K") == std::string::npos);
    CHECK(out.find("\x1b[?1049l") != std::string::npos);  // modes reset when the session ends
}

// --- (e) wording --------------------------------------------------------------------------------

TEST_CASE("a wrong type on an agent name says \"is not an agent\"", "[usage-names][names]") {
    TestHost host;
    CHECK(host.run({"agents", "get", "pod/orders"}) == kExitUsage);
    CHECK(host.err.str().rfind("error: \"pod/orders\" is not an agent: give NAME or "
                               "deployment/NAME",
                               0) == 0);
    CHECK(host.server.requests.empty());
}

// --- (f) sandbox cp TYPE/NAME:PATH and NAMESPACE/NAME:PATH -----------------------------------

TEST_CASE("sandbox cp reads TYPE/SANDBOX:PATH and NAMESPACE/SANDBOX:PATH as kubectl cp does",
          "[usage-names][cp]") {
    for (const char* source :
         {"sandbox/orders:/tmp", "sandboxes.agents.x-k8s.io/orders:/tmp", "team1/orders:/tmp"}) {
        TestHost host;
        host.serveSandboxGroup();  // orders is 404: the first request names it
        INFO(source << "\n" << host.err.str());
        CHECK(host.run({"sandbox", "cp", source, "./x-copied"}) == kExitError);
        // then whether it is an agent of type deployment, and the namespace's sandboxes, for
        // a "did you mean"
        CHECK(host.sent() ==
              std::vector<std::string>{"GET /apis/agents.x-k8s.io", "GET " + kSandboxes + "/orders",
                                       "GET /apis/apps/v1/namespaces/team1/deployments/orders",
                                       "GET " + kSandboxes});
    }
    // NAMESPACE/ without -n is the namespace; with a different -n it is a usage error.
    TestHost other;
    other.serveSandboxGroup();
    CHECK(other.run({"-n", "", "sandbox", "cp", "team2/orders:/tmp", "./x-copied"}) == kExitError);
    INFO(other.err.str());
    CHECK(other.server
              .requestsTo("GET", "/apis/agents.x-k8s.io/v1beta1/namespaces/team2/sandboxes/orders")
              .size() == 1);

    TestHost conflict;
    CHECK(conflict.run({"sandbox", "cp", "team2/orders:/tmp", "./x-copied", "-n", "team1"}) ==
          kExitUsage);
    CHECK(conflict.err.str() ==
          "error: team2/orders: names namespace \"team2\" but -n says \"team1\"; give the "
          "namespace once\n");
    CHECK(conflict.server.requests.empty());

    testing::checkUsageErrors({{"sandbox", "cp", "a/b/c:/tmp", "./x-copied"},
                               {"sandbox", "cp", "deployment.apps/orders:/tmp", "./x-copied"},
                               {"sandbox", "cp", "Team_2/orders:/tmp", "./x-copied"}});
}

// --- (g) agentruntime/NAME ----------------------------------------------------------------------

TEST_CASE("agents get, delete and wait take the agentruntime name agents import -o name prints",
          "[usage-names][names]") {
    for (const char* name : {"agentruntime.agent.rossoctl.dev/orders", "agentruntimes/orders",
                             "agentruntime/orders"}) {
        TestHost host;
        serveAgents(host, {"orders"});
        INFO(name << "\n" << host.err.str());
        REQUIRE(host.run({"agents", "get", name, "-o", "name"}) == 0);
        CHECK(host.out.str() == "deployment.apps/orders\n");
    }
    TestHost deleting;
    serveAgents(deleting, {"orders"});
    deleting.run({"agents", "delete", "agentruntime.agent.rossoctl.dev/orders", "--wait=false"});
    CHECK(deleting.server.requestsTo("DELETE", kDeployments + "/orders").size() == 1);

    TestHost waiting;
    serveAgents(waiting, {"orders"});
    waiting.server.latency = std::chrono::milliseconds(100);
    waiting.run({"agents", "wait", "agentruntime.agent.rossoctl.dev/orders", "--timeout", "5s"});
    INFO(waiting.err.str());
    CHECK(waiting.server.requestsTo("GET", kDeployments + "/orders").size() >= 1);
}

// --- (h) agents get with several names ---------------------------------------------------------

TEST_CASE("agents get takes several names: one table or List, a missing one reported after",
          "[usage-names][names]") {
    TestHost host;
    serveAgents(host, {"orders", "billing"});
    CHECK(host.run({"agents", "get", "orders", "ghost", "deployment/billing"}) == kExitError);
    const std::string out = host.out.str();
    INFO(out << host.err.str());
    CHECK(std::count(out.begin(), out.end(), '\n') == 3);  // one header, two rows
    CHECK(out.find("orders") < out.find("billing"));
    CHECK(host.err.str() ==
          "error: agent \"ghost\" not found in namespace \"team1\"; see the agents there with "
          "\"rossoctl agents list -n team1\"\n");

    TestHost asJson;
    serveAgents(asJson, {"orders", "billing"});
    REQUIRE(asJson.run({"agents", "get", "orders", "billing", "-o", "json"}) == 0);
    const json printed = testing::printedJson(asJson.out.str());
    CHECK(printed["kind"] == "List");
    CHECK(printed["items"].size() == 2);

    TestHost once;  // the same agent twice is shown once
    serveAgents(once, {"orders"});
    REQUIRE(once.run({"agents", "get", "orders", "deployment.apps/orders", "-o", "name"}) == 0);
    CHECK(once.out.str() == "deployment.apps/orders\n");
}

// --- (i) one table for agents get and list ------------------------------------------------------

TEST_CASE("agents get and list print one table: get adds the pod", "[usage-names][agents]") {
    TestHost listed;
    serveAgents(listed, {"orders"});
    REQUIRE(listed.run({"agents", "list", "-o", "wide"}) == 0);
    TestHost got;
    serveAgents(got, {"orders"});
    REQUIRE(got.run({"agents", "get", "orders", "-o", "wide"}) == 0);
    auto getHeader = words(firstLine(got.out.str()));
    CHECK(getHeader == std::vector<std::string>{"NAME", "TYPE", "READY", "STATUS", "IMAGE", "POD",
                                                "AGE", "MESSAGE"});
    getHeader.erase(std::find(getHeader.begin(), getHeader.end(), "POD"));
    CHECK(words(firstLine(listed.out.str())) == getHeader);
    // The rows agree too, but for the pod (none here).
    auto getRow = words(got.out.str().substr(got.out.str().find('\n') + 1));
    getRow.erase(std::find(getRow.begin(), getRow.end(), "<none>"));
    CHECK(words(listed.out.str().substr(listed.out.str().find('\n') + 1)) == getRow);
}

// --- (j) TYPE/NAME wherever a name is taken ---------------------------------------------------

TEST_CASE("every name-taking command sends its request for NAME given TYPE/NAME",
          "[usage-names][names]") {
    const std::vector<std::vector<std::string>> lines{
        {"sandbox", "get", "sandbox/orders"},
        {"sandbox", "restart", "sandboxes/orders", "--wait=false"},
        {"sandbox", "verify", "sandbox.agents.x-k8s.io/orders"},
        {"sandbox", "set-env", "sbx/orders", "A=1"},
        {"sandbox", "logs", "sandbox/orders"},
        {"sandbox", "exec", "sandbox/orders", "--", "ls"},
        {"sandbox", "suspend", "sandbox/orders"},
        {"sandbox", "resume", "sandbox/orders"},
        {"sandbox", "cp", "sandbox/orders:/tmp", "./x-copied"},
        {"agents", "get", "deployment.apps/orders"},
        {"agents", "delete", "statefulset/orders"},
        {"agents", "wait", "job.batch/orders"},
        {"project", "describe", "namespace/orders"},
        {"project", "delete", "project/orders", "--yes"},
    };
    for (const auto& args : lines) {
        TestHost host;
        host.serveGroups();  // every object is 404
        std::string line;
        for (const auto& word : args) line += " " + word;
        const int code = host.run(args);
        INFO("rossoctl" << line << "\n" << host.err.str());
        CHECK(code != kExitUsage);
        bool named = false;
        for (const auto& sent : host.sent()) {
            CHECK(sent.find("/sandbox/") == std::string::npos);
            if (sent.size() > 7 && sent.compare(sent.size() - 7, 7, "/orders") == 0) named = true;
        }
        CHECK(named);
    }
    testing::checkUsageErrors({
        {"sandbox", "get", "deployment.apps/orders"},
        {"sandbox", "restart", "deployment/orders"},
        {"sandbox", "verify", "pod/orders"},
        {"sandbox", "set-env", "deployment/orders", "A=1"},
        {"sandbox", "logs", "deployment/orders"},
        {"sandbox", "exec", "service/orders", "--", "ls"},
        {"sandbox", "suspend", "deployment/orders"},
        {"sandbox", "resume", "deployment/orders"},
        {"agents", "get", "pod/orders"},
        {"agents", "delete", "service/orders"},
        {"agents", "wait", "pod/orders"},
        {"project", "describe", "sandbox/orders"},
        {"project", "delete", "deployment/orders", "--yes"},
    });
}
