// sandbox list/get/set-env/restart/exec end to end against a routed fake apiserver (and
// scripted exec sessions): bad input sends nothing, happy paths, 404/403/409 read well.
#include <catch2/catch.hpp>
#include <fstream>

#include "json_fixtures.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;
using rossoctl::testing::watchEvent;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";

json sandboxObject(const std::string& name, const std::string& resourceVersion = "5") {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", name},
              {"namespace", "team1"},
              {"uid", "uid-" + name},
              {"resourceVersion", resourceVersion},
              {"creationTimestamp", "2023-11-14T22:00:00Z"},
              {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}},
            {"spec",
             {{"podTemplate",
               {{"spec",
                 {{"containers",
                   {{{"name", "agent"},
                     {"image", "ghcr.io/acme/orders:1.4"},
                     {"env", {{{"name", "LOG_LEVEL"}, {"value", "debug"}}}}}}}}}}}}},
            {"status",
             {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
              {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "Ready"}}}}}}};
}

json podOf(const std::string& sandbox, const std::string& phase = "Running") {
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
            {"status", {{"phase", phase}}}};
}

// A cluster with sandbox "orders" and its running pod.
void serveOrders(TestHost& host) {
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandboxObject("orders"));
    host.server.onJson("GET", kSandboxes, 200, list({sandboxObject("orders")}));
    host.server.onJson("GET", kPods, 200, list({podOf("orders")}));
}

}  // namespace

TEST_CASE("sandbox commands: every help example parses and validates", "[sandbox][command]") {
    for (const char* command : {"list", "get", "set-env", "restart", "exec"})
        testing::checkHelpExamples({"sandbox", command});
}

TEST_CASE("sandbox list shows each sandbox with its pod", "[sandbox][command]") {
    TestHost host;
    serveOrders(host);
    REQUIRE(host.run({"sandbox", "list"}) == 0);
    const std::string out = host.out.str();
    CHECK(out.rfind("NAME", 0) == 0);
    CHECK(out.find("orders") != std::string::npos);
    CHECK(out.find("True") != std::string::npos);
    CHECK(host.server.writes().empty());

    TestHost names;
    serveOrders(names);
    REQUIRE(names.run({"sandbox", "list", "-o", "name"}) == 0);
    CHECK(names.out.str() == "sandbox.agents.x-k8s.io/orders\n");

    TestHost all;
    serveOrders(all);
    all.server.onJson("GET", "/apis/agents.x-k8s.io/v1beta1/sandboxes", 200,
                      list({sandboxObject("orders")}));
    all.server.onJson("GET", "/api/v1/pods", 200, list({podOf("orders")}));
    REQUIRE(all.run({"sandbox", "list", "-A"}) == 0);
    CHECK(all.out.str().rfind("NAMESPACE", 0) == 0);

    TestHost asJson;  // kubectl's List, in the one JSON style
    serveOrders(asJson);
    REQUIRE(asJson.run({"sandbox", "list", "-o", "json"}) == 0);
    const json printed = testing::printedJson(asJson.out.str());
    CHECK(printed["kind"] == "List");
    CHECK(printed["items"][0]["metadata"]["name"] == "orders");
}

TEST_CASE("sandbox list: a bad -o sends nothing; empty, missing API and 403 say so",
          "[sandbox][command]") {
    TestHost bad;
    CHECK(bad.run({"sandbox", "list", "-o", "csv"}) == kExitUsage);
    CHECK(bad.server.requests.empty());

    TestHost empty;
    empty.serveSandboxGroup();
    empty.server.onJson("GET", kSandboxes, 200, list({}));
    empty.server.onJson("GET", kPods, 200, list({}));
    REQUIRE(empty.run({"sandbox", "list"}) == 0);
    CHECK(empty.err.str() == "No sandboxes found in namespace \"team1\".\n");

    TestHost noApi;  // agents.x-k8s.io answers 404
    CHECK(noApi.run({"sandbox", "list"}) == kExitError);
    CHECK(noApi.err.str().find("install agent-sandbox") != std::string::npos);

    TestHost forbidden;
    forbidden.serveSandboxGroup();
    forbidden.server.on("GET", kSandboxes, 403,
                        statusBody(403, "Forbidden", "sandboxes is forbidden"));
    CHECK(forbidden.run({"sandbox", "list", "-o", "json"}) == kExitError);
    CHECK(forbidden.err.str() == "Error from server (Forbidden): sandboxes is forbidden\n");
}

TEST_CASE("sandbox get shows one sandbox, or says where to look", "[sandbox][command]") {
    TestHost host;
    serveOrders(host);
    REQUIRE(host.run({"sandbox", "get", "orders"}) == 0);
    CHECK(host.out.str().find("orders") != std::string::npos);

    TestHost yaml;
    serveOrders(yaml);
    REQUIRE(yaml.run({"sandbox", "get", "orders", "-o", "yaml"}) == 0);
    CHECK(yaml.out.str().find("kind: Sandbox") != std::string::npos);

    TestHost asJson;
    serveOrders(asJson);
    REQUIRE(asJson.run({"sandbox", "get", "orders", "-o", "json"}) == 0);
    CHECK(testing::printedJson(asJson.out.str())["kind"] == "Sandbox");

    TestHost bad;
    CHECK(bad.run({"sandbox", "get", "Orders!"}) == kExitUsage);
    CHECK(bad.run({"sandbox", "get", "orders", "-o", "csv"}) == kExitUsage);
    CHECK(bad.server.requests.empty());

    TestHost missing;
    missing.serveSandboxGroup();
    CHECK(missing.run({"sandbox", "get", "ghost"}) == kExitError);
    CHECK(missing.err.str() ==
          "error: sandbox \"ghost\" not found in namespace \"team1\"; run \"rossoctl sandbox "
          "list -n team1\"\n");

    TestHost forbidden;
    forbidden.serveSandboxGroup();
    forbidden.server.on("GET", kSandboxes + "/orders", 403,
                        statusBody(403, "Forbidden", "sandboxes \"orders\" is forbidden"));
    CHECK(forbidden.run({"sandbox", "get", "orders"}) == kExitError);
    CHECK(forbidden.err.str().rfind("Error from server (Forbidden)", 0) == 0);
}

TEST_CASE("sandbox set-env rejects bad input before sending anything", "[sandbox][command]") {
    rossoctl::testing::TempDir dir;
    std::vector<std::vector<std::string>> bad = {
        {"sandbox", "set-env"},
        {"sandbox", "set-env", "Orders!", "A=1"},
        {"sandbox", "set-env", "orders"},
        {"sandbox", "set-env", "orders", "1BAD=x"},
        {"sandbox", "set-env", "orders", "A=1", "--list"},
        {"sandbox", "set-env", "orders", "A=1", "--dry-run", "--restart"},
        {"sandbox", "set-env", "orders", "A=1", "--timeout", "soon"},
        {"sandbox", "set-env", "orders", "A=1", "-o", "table"},
        {"sandbox", "set-env", "orders", "A=1", "-c", "Side_Car"},
        {"sandbox", "set-env", "orders", "--from-env-file", dir.path() + "/missing.env"},
        {"sandbox", "set-env", "orders", "--from-env-file", dir.path()},
    };
    testing::checkUsageErrors(bad);
}

TEST_CASE("sandbox set-env writes with the resourceVersion it read and redoes it on 409",
          "[sandbox][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandboxObject("orders", "5"));
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandboxObject("orders", "6"));
    host.server.on("PUT", kSandboxes + "/orders", 409,
                   statusBody(409, "Conflict", "the object has been modified"));
    host.server.onJson("PUT", kSandboxes + "/orders", 200, sandboxObject("orders", "7"));
    REQUIRE(host.run({"sandbox", "set-env", "orders", "MCP_URL=http://mcp:8080", "LOG_LEVEL-"}) ==
            0);
    auto puts = host.server.requestsTo("PUT", kSandboxes + "/orders");
    REQUIRE(puts.size() == 2);
    CHECK(json::parse(puts[0].body)["metadata"]["resourceVersion"] == "5");
    json second = json::parse(puts[1].body);
    CHECK(second["metadata"]["resourceVersion"] == "6");
    CHECK(second["spec"]["podTemplate"]["spec"]["containers"][0]["env"] ==
          json::parse(R"([{"name":"MCP_URL","value":"http://mcp:8080"}])"));
    CHECK(host.out.str().rfind("sandbox/orders env updated", 0) == 0);
    CHECK(host.err.str().find("rossoctl sandbox restart orders -n team1") != std::string::npos);
    CHECK(host.clock.totalSlept().count() > 0);  // backed off before the second try
}

TEST_CASE("sandbox set-env --list reads only; an unchanged value writes nothing",
          "[sandbox][command]") {
    TestHost listing;
    serveOrders(listing);
    REQUIRE(listing.run({"sandbox", "set-env", "orders", "--list"}) == 0);
    CHECK(listing.out.str().find("LOG_LEVEL=debug") != std::string::npos);
    CHECK(listing.server.writes().empty());

    TestHost same;
    serveOrders(same);
    REQUIRE(same.run({"sandbox", "set-env", "orders", "LOG_LEVEL=debug"}) == 0);
    CHECK(same.out.str() == "sandbox/orders: environment unchanged\n");
    CHECK(same.server.writes().empty());
}

TEST_CASE("sandbox set-env from a file, a missing sandbox and a refused write",
          "[sandbox][command]") {
    rossoctl::testing::TempDir dir;
    const std::string envFile = dir.path() + "/agent.env";
    std::ofstream(envFile) << "# settings\nexport MODEL=small\n";
    TestHost fromFile;
    serveOrders(fromFile);
    fromFile.server.onJson("PUT", kSandboxes + "/orders", 200, sandboxObject("orders", "6"));
    REQUIRE(fromFile.run({"sandbox", "set-env", "orders", "--from-env-file", envFile}) == 0);
    auto put = fromFile.server.requestsTo("PUT", kSandboxes + "/orders");
    REQUIRE(put.size() == 1);
    CHECK(put[0].body.find(R"({"name":"MODEL","value":"small"})") != std::string::npos);

    TestHost missing;
    missing.serveSandboxGroup();
    CHECK(missing.run({"sandbox", "set-env", "ghost", "A=1"}) == kExitError);
    const std::string missingErr = missing.err.str();
    INFO(missingErr);
    // The friendly hint (issue 21), naming the namespace in use.
    CHECK(missingErr.find("ghost") != std::string::npos);
    CHECK(missingErr.find("team1") != std::string::npos);

    TestHost forbidden;
    serveOrders(forbidden);
    forbidden.server.on("PUT", kSandboxes + "/orders", 403,
                        statusBody(403, "Forbidden", "sandboxes \"orders\" is forbidden"));
    CHECK(forbidden.run({"sandbox", "set-env", "orders", "A=1"}) == kExitError);
    CHECK(forbidden.err.str() ==
          "Error from server (Forbidden): sandboxes \"orders\" is forbidden\n");
}

TEST_CASE("sandbox restart rejects bad input before sending anything", "[sandbox][command]") {
    std::vector<std::vector<std::string>> bad = {
        {"sandbox", "restart"},
        {"sandbox", "restart", "Orders!"},
        {"sandbox", "restart", "orders", "--all"},
        {"sandbox", "restart", "-l", "app=x", "--all"},
        {"sandbox", "restart", "orders", "--timeout", "soon"},
    };
    testing::checkUsageErrors(bad);
}

TEST_CASE("sandbox restart deletes exactly the sandbox's pod, by UID", "[sandbox][command]") {
    TestHost host;
    serveOrders(host);
    host.server.on("DELETE", kPods + "/orders", 200, "{}");
    REQUIRE(host.run({"sandbox", "restart", "orders", "--wait=false"}) == 0);
    auto deletes = host.server.requestsTo("DELETE", kPods + "/orders");
    REQUIRE(deletes.size() == 1);
    CHECK(json::parse(deletes[0].body)["preconditions"]["uid"] == "pod-uid-orders");
    CHECK(host.server.writes().size() == 1);
    CHECK(host.out.str().find("sandbox/orders") != std::string::npos);
}

TEST_CASE("sandbox restart: nothing selected, a missing sandbox, a refused delete",
          "[sandbox][command]") {
    TestHost none;
    none.serveSandboxGroup();
    none.server.onJson("GET", kSandboxes, 200, list({}));
    CHECK(none.run({"sandbox", "restart", "-l", "app=x"}) == kExitError);
    CHECK(none.err.str() == "No sandboxes found in namespace team1 matching app=x.\n");
    TestHost noneAll;
    noneAll.serveSandboxGroup();
    noneAll.server.onJson("GET", kSandboxes, 200, list({}));
    CHECK(noneAll.run({"sandbox", "restart", "--all"}) == 0);

    TestHost missing;
    missing.serveSandboxGroup();
    CHECK(missing.run({"sandbox", "restart", "ghost"}) == kExitError);
    CHECK(missing.err.str().find("ghost") != std::string::npos);
    CHECK(missing.server.writes().empty());

    TestHost forbidden;
    serveOrders(forbidden);
    forbidden.server.on("DELETE", kPods + "/orders", 403,
                        statusBody(403, "Forbidden", "pods \"orders\" is forbidden"));
    CHECK(forbidden.run({"sandbox", "restart", "orders"}) == kExitError);
    CHECK(forbidden.err.str().find("forbidden") != std::string::npos);
}

TEST_CASE("sandbox exec rejects bad input before sending anything", "[sandbox][command]") {
    std::vector<std::vector<std::string>> bad = {
        {"sandbox", "exec", "orders"},
        {"sandbox", "exec", "Orders!", "--", "ls"},
        {"sandbox", "exec", "orders", "-c", "Side_Car", "--", "ls"},
    };
    testing::checkUsageErrors(bad);
}

TEST_CASE("sandbox exec runs in the sandbox's pod and passes the exit code through",
          "[sandbox][command]") {
    TestHost host;
    serveOrders(host);
    host.server.onExec("team1", "orders", testing::execRan("total 0\n", "warning\n", 3));
    CHECK(host.run({"sandbox", "exec", "orders", "--", "ls", "-la", "/workspace"}) == 3);
    REQUIRE(host.server.execs.size() == 1);
    CHECK(host.server.execs[0].command == std::vector<std::string>{"ls", "-la", "/workspace"});
    CHECK(host.server.execs[0].container == "agent");
    CHECK(host.out.str() == "total 0\n");
    CHECK(host.err.str() == "warning\n");
}

TEST_CASE("sandbox exec: the pod's escape codes reach a terminal only as visible text",
          "[sandbox][command]") {
    const std::string hostile = "ok\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\n";
    TestHost terminal;
    terminal.stdoutIsTerminal = true;
    terminal.stderrIsTerminal = true;
    serveOrders(terminal);
    terminal.server.onExec("team1", "orders", testing::execRan(hostile, hostile, 0));
    REQUIRE(terminal.run({"sandbox", "exec", "orders", "--", "cat", "x"}) == 0);
    for (const std::string& text : {terminal.out.str(), terminal.err.str()}) {
        CHECK(text.find('\x1b') == std::string::npos);
        CHECK(text.find('\x07') == std::string::npos);
        CHECK(text.find("\\x1b]52") != std::string::npos);
        CHECK(text.back() == '\n');  // lines stay lines
    }
    // Into a pipe or file the bytes pass unchanged, as kubectl passes them.
    TestHost piped;
    serveOrders(piped);
    piped.server.onExec("team1", "orders", testing::execRan(hostile, "", 0));
    REQUIRE(piped.run({"sandbox", "exec", "orders", "--", "cat", "x"}) == 0);
    CHECK(piped.out.str() == hostile);
}

TEST_CASE("an error quoting what a server or pod sent shows its control characters escaped",
          "[sandbox][command]") {
    TestHost host;
    serveOrders(host);
    host.server.onExec(
        "team1", "orders",
        testing::execRefused(
            403, statusBody(403, "Forbidden",
                            "pods \"orders\" \x1b[2J\rforged\xc2\x9b line \xe2\x80\xae\\x41")));
    CHECK(host.run({"sandbox", "exec", "orders", "--", "ls"}) == kExitError);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.find('\x1b') == std::string::npos);
    CHECK(err.find('\r') == std::string::npos);
    CHECK(err.find("\xc2\x9b") == std::string::npos);
    CHECK(err.find("\xe2\x80\xae") == std::string::npos);  // a bidi override reorders text
    // Escaped once: a backslash the server sent stays single.
    CHECK(err.find("\\x1b[2J\\rforged\\u009b line \\u202e\\x41") != std::string::npos);
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
}

TEST_CASE("sandbox exec -i streams the Context's stdin, not the process's", "[sandbox][command]") {
    TestHost host;
    serveOrders(host);
    host.in.str("print(1 + 1)\n");
    host.server.onExec("team1", "orders", testing::execRan("2\n", "", 0));
    REQUIRE(host.run({"sandbox", "exec", "orders", "-i", "--", "python3", "-"}) == 0);
    REQUIRE(host.server.execs.size() == 1);
    CHECK(*host.server.execs[0].stdinText == "print(1 + 1)\n");
    CHECK(host.out.str() == "2\n");
}

TEST_CASE("sandbox exec: a missing sandbox, a pod not running, a refused exec",
          "[sandbox][command]") {
    TestHost missing;
    missing.serveSandboxGroup();
    CHECK(missing.run({"sandbox", "exec", "ghost", "--", "ls"}) == kExitError);
    CHECK(missing.err.str() ==
          "error: sandbox/ghost not found in namespace team1; run \"rossoctl sandbox list -n "
          "team1\"\n");

    TestHost pending;
    pending.serveSandboxGroup();
    pending.server.onJson("GET", kSandboxes + "/orders", 200, sandboxObject("orders"));
    pending.server.onJson("GET", kPods, 200, list({podOf("orders", "Pending")}));
    CHECK(pending.run({"sandbox", "exec", "orders", "--", "ls"}) == kExitError);
    CHECK(pending.err.str().find("pod orders is Pending, not Running") != std::string::npos);
    CHECK(pending.server.execs.empty());

    TestHost forbidden;
    serveOrders(forbidden);
    forbidden.server.onExec(
        "team1", "orders",
        testing::execRefused(403, statusBody(403, "Forbidden", "pods \"orders\" is forbidden")));
    CHECK(forbidden.run({"sandbox", "exec", "orders", "--", "ls"}) == kExitError);
    CHECK(forbidden.err.str().rfind("Error from server (Forbidden)", 0) == 0);
}

namespace {

json notReady(json sandbox) {
    sandbox["status"]["conditions"] = {
        {{"type", "Ready"}, {"status", "False"}, {"reason", "PodNotReady"}}};
    return sandbox;
}

// Ctrl-C when the watch is asked for the `nth` time (the first stream has been printed).
void cancelOnWatch(TestHost& host, int nth) {
    auto watches = std::make_shared<int>(0);
    host.server.onRequest = [&host, watches, nth](const kube::HttpRequest& request) {
        if (request.url.find("watch=true") != std::string::npos && ++*watches == nth)
            host.cancel.cancel();
    };
}

}  // namespace

TEST_CASE("sandbox list -w prints the list, then each change, until Ctrl-C (130)",
          "[sandbox][command]") {
    TestHost host;
    serveOrders(host);
    host.server.onStream("GET", kSandboxes + "?watch=true",
                         {watchEvent("MODIFIED", notReady(sandboxObject("orders", "11"))),
                          watchEvent("ADDED", sandboxObject("billing", "12")),
                          watchEvent("DELETED", sandboxObject("orders", "13"))});
    host.server.onStream("GET", kSandboxes + "?watch=true", {});  // the re-watch: quiet
    cancelOnWatch(host, 2);
    CHECK(host.run({"sandbox", "list", "-w"}) == 130);
    const std::string out = host.out.str();
    INFO(out);
    CHECK(std::count(out.begin(), out.end(), '\n') == 5);  // header, list, three changes
    CHECK(out.rfind("NAME", 0) == 0);
    CHECK(out.find("NAME", 1) == std::string::npos);  // one header
    CHECK(out.find("PodNotReady") != std::string::npos);
    CHECK(out.find("billing") != std::string::npos);
    CHECK(host.server.writes().empty());
    // The watch starts from the list's version: nothing between the two is missed.
    auto watches = host.server.requestsTo("GET", kSandboxes);
    REQUIRE(watches.size() >= 2);
    CHECK(watches[1].url.find("resourceVersion=10") != std::string::npos);
}

TEST_CASE(
    "sandbox list --watch-only prints only changes; -o name per change; a bad template "
    "is refused",
    "[sandbox][command]") {
    TestHost host;
    serveOrders(host);
    host.server.onStream("GET", kSandboxes + "?watch=true",
                         {watchEvent("MODIFIED", notReady(sandboxObject("orders", "11")))});
    host.server.onStream("GET", kSandboxes + "?watch=true", {});
    cancelOnWatch(host, 2);
    CHECK(host.run({"sandbox", "list", "--watch-only", "-o", "name"}) == 130);
    CHECK(host.out.str() == "sandbox.agents.x-k8s.io/orders\n");

    TestHost templated;  // a template under -w is read before anything is sent
    CHECK(templated.run({"sandbox", "list", "-w", "-o", "jsonpath={.items[*"}) == 2);
    CHECK(templated.server.requests.empty());
}

TEST_CASE("sandbox restart: a pod replaced under it (409 on the UID) is kept, not deleted",
          "[sandbox][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandboxObject("orders"));
    json replacement = podOf("orders");
    replacement["metadata"]["uid"] = "pod-uid-replacement";
    host.server.onJson("GET", kPods, 200, list({podOf("orders")}));
    host.server.onJson("GET", kPods, 200, list({replacement}));
    host.server.on("DELETE", kPods + "/orders", 409,
                   statusBody(409, "Conflict",
                              "Precondition failed: UID in precondition: pod-uid-orders, UID in "
                              "object meta: pod-uid-replacement"));
    REQUIRE(host.run({"sandbox", "restart", "orders", "--wait=false"}) == 0);
    const auto deletes = host.server.requestsTo("DELETE", kPods + "/orders");
    REQUIRE(deletes.size() == 1);  // never a second DELETE, which would hit the replacement
    CHECK(json::parse(deletes[0].body)["preconditions"]["uid"] == "pod-uid-orders");
    CHECK(host.err.str().find("was replaced by someone else") != std::string::npos);
    CHECK(host.err.str().find("the replacement is kept") != std::string::npos);
}

TEST_CASE("sandbox set-env -o yaml/json hides managedFields unless --show-managed-fields",
          "[sandbox][command]") {
    for (const bool show : {false, true}) {
        for (const std::string format : {"json", "yaml"}) {
            TestHost host;
            host.serveSandboxGroup();
            host.server.onJson("GET", kSandboxes + "/orders", 200, sandboxObject("orders"));
            json written = sandboxObject("orders", "6");
            written["metadata"]["managedFields"] = {{{"manager", "rossoctl"}}};
            host.server.onJson("PUT", kSandboxes + "/orders", 200, written);
            std::vector<std::string> args = {"sandbox", "set-env", "orders", "A=1", "-o", format};
            if (show) args.push_back("--show-managed-fields");
            INFO(format << " show=" << show);
            REQUIRE(host.run(args) == 0);
            CHECK((host.out.str().find("managedFields") != std::string::npos) == show);
            CHECK(host.out.str().find("resourceVersion") != std::string::npos);
        }
    }
}

TEST_CASE("a field of the wrong type from a server is one plain error line", "[sandbox][hostile]") {
    // A metadata or status field of another type than Kubernetes gives it reached the user as
    // "[json.exception.type_error.302] type must be string, but is number".
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"sandbox", "get", "orders"}, {"gc", "--dry-run"}}) {
        const bool gc = args[0] == "gc";  // gc skips the object and goes on with the others
        TestHost host;
        json box = sandboxObject("orders");
        box["metadata"]["labels"] = json{{"app.kubernetes.io/managed-by", 5}};
        box["metadata"]["creationTimestamp"] = 7;
        box["status"] = json{{"conditions", json::array({json{{"type", 1}, {"status", 2}}})}};
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes, 200, list({box}));
        host.server.onJson("GET", kSandboxes + "/orders", 200, box);
        CHECK(host.run(args) == 1);
        const std::string said =
            gc ? "error: skipped a Sandbox listed in team1: a field of another type than "
                 "Kubernetes gives it (type must be string, but is number)\n"
               : "error: malformed data from the server or kubeconfig: type must be string, but "
                 "is number\n";
        CHECK(host.err.str().rfind(said, 0) == 0);
        CHECK(host.server.writes().empty());
    }
}

// Review 48 finding 2: exec, cp and port-forward went to the newest pod naming the Sandbox as
// controller, which anyone who may create pods can make: the user's session ran in theirs.
TEST_CASE("sandbox exec goes to the pod the Sandbox records, never a newer one beside it",
          "[sandbox][command][review48]") {
    json decoy = podOf("orders");
    decoy["metadata"]["name"] = "decoy";
    decoy["metadata"]["uid"] = "pod-uid-decoy";
    decoy["metadata"]["creationTimestamp"] = "2023-11-14T23:00:00Z";
    auto serve = [](TestHost& host, const std::vector<json>& pods) {
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes + "/orders", 200, sandboxObject("orders"));
        host.server.onJson("GET", kPods, 200, list(pods));
    };
    TestHost host;
    serve(host, {podOf("orders"), decoy});
    host.server.onExec("team1", "orders", testing::execRan("", "", 0));
    host.server.onExec("team1", "decoy", testing::execRan("", "", 7));
    CHECK(host.run({"sandbox", "exec", "orders", "--", "true"}) == 0);
    REQUIRE(host.server.execs.size() == 1);
    CHECK(host.server.execs[0].pod == "team1/orders");

    json other = podOf("orders");  // none recorded, two it controls: which is not guessed
    other["metadata"]["name"] = "other";
    other["metadata"]["uid"] = "pod-uid-other";
    TestHost two;
    serve(two, {other, decoy});
    CHECK(two.run({"sandbox", "exec", "orders", "--", "true"}) == kExitError);
    CHECK(two.err.str().find("has 2 pods that name it as their controller (other, decoy)") !=
          std::string::npos);
    CHECK(two.server.execs.empty());
}
