// The streams a pod's or server's bytes reach the user by: a one-shot log read that the server
// keeps open ends within its bound, and on a terminal outside UTF-8 no byte from 0x80 up gets
// through any of them (there 0x9b is CSI: "\xc3\x9b[2J" is a valid "Û[2J" in UTF-8 and clears
// an ISO-8859-1 screen).
#include <algorithm>
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::execRan;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kLog = kPods + "/orders/log";
const std::string kHostile = "\xc3\x9b[2J\xc2\x9d";

json ordersPod() {
    return {
        {"metadata",
         {{"name", "orders"},
          {"namespace", "team1"},
          {"uid", "pod-uid-orders"},
          {"resourceVersion", "7"},
          {"creationTimestamp", "2023-11-14T22:00:05Z"},
          {"ownerReferences",
           {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}}},
        {"spec", {{"containers", {{{"name", "agent"}}}}}},
        {"status",
         {{"phase", "Running"},
          {"containerStatuses",
           {{{"name", "agent"}, {"restartCount", 0}, {"state", {{"running", json::object()}}}}}}}}};
}

// Sandbox "orders", Running, with its pod "orders".
void serveOrders(TestHost& host) {
    host.serveSandboxGroup();
    const json sandbox = {
        {"metadata", {{"name", "orders"}, {"namespace", "team1"}, {"uid", "uid-orders"}}},
        {"spec", {{"operatingMode", "Running"}}},
        {"status",
         {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
          {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox);
    host.server.onJson("GET", kPods, 200, list({ordersPod()}));
    host.server.onJson("GET", kPods + "/orders", 200, ordersPod());
}

// A terminal on stdout and stderr whose locale is ISO-8859-1.
void latin1Terminal(TestHost& host) {
    host.environment["LANG"] = "de_DE.ISO-8859-1";
    host.stdoutIsTerminal = true;
    host.stderrIsTerminal = true;
}

bool hasHighByte(const std::string& text) {
    return std::any_of(text.begin(), text.end(),
                       [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
}

// The log route as a server that never ends the stream: only the read's own time-out (the
// transport's, here thrown at once) ends it; a read without one would wait forever.
void stallLogs(TestHost& host) {
    host.server.onRequest = [](const kube::HttpRequest& request) {
        if (request.url.find("/pods/orders/log") == std::string::npos) return;
        if (request.timeout.count() == 0)
            FAIL("a one-shot log read without a time-out would wait forever");
        throw kube::TransportError(kube::TransportError::Kind::Timeout, "operation timed out");
    };
}

}  // namespace

TEST_CASE("a one-shot sandbox logs ends within its bound; -f keeps the stream open",
          "[hostile][logs]") {
    for (const auto& [flags, bound] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{}, "300s"}, {{"--request-timeout", "20s"}, "20s"}}) {
        TestHost host;
        serveOrders(host);
        host.server.onStream("GET", kLog, {"first line\n"});
        stallLogs(host);
        std::vector<std::string> argv = flags;  // global flags go before the command
        argv.insert(argv.end(), {"sandbox", "logs", "orders"});
        CHECK(host.run(argv) == kExitError);
        INFO(host.err.str());
        CHECK(host.err.str() == "error: sandbox/orders log did not end within " + bound +
                                    ": the server kept the read open; follow it with -f, or "
                                    "give it longer with --request-timeout\n");
        const auto reads = host.server.requestsTo("GET", kLog);
        REQUIRE(reads.size() == 1);
        CHECK(reads[0].timeout ==
              (flags.empty() ? std::chrono::minutes(5) : std::chrono::milliseconds(20'000)));
    }

    // A follow is bounded by nothing but the user and the stream's end (here the sandbox goes).
    TestHost host;
    serveOrders(host);
    host.server.on("GET", kSandboxes + "/orders", 404, testing::kNotFoundBody);
    host.server.onStream("GET", kLog, {"line\n"});
    CHECK(host.run({"sandbox", "logs", "orders", "-f"}) == 0);
    const auto reads = host.server.requestsTo("GET", kLog);
    REQUIRE(reads.size() == 1);
    CHECK(reads[0].timeout.count() == 0);
    CHECK(host.out.str() == "line\n");
}

TEST_CASE("outside UTF-8, sandbox exec's output reaches a terminal escaped, with -t and without",
          "[hostile][locale][exec]") {
    {  // -it: the session filter drops what it cannot show
        TestHost host;
        latin1Terminal(host);
        host.stdinIsTerminal = true;
        serveOrders(host);
        host.server.onExec("team1", "orders", execRan("prompt " + kHostile + "$ ", "", 0));
        CHECK(host.run({"sandbox", "exec", "orders", "-it", "--", "sh"}) == 0);
        REQUIRE(host.server.execs.size() == 1);
        CHECK(host.server.execs[0].tty);
        CHECK_FALSE(hasHighByte(host.out.str()));
        CHECK(host.out.str().find("prompt ") == 0);
    }
    {  // no -t: stdout and stderr escaped
        TestHost host;
        latin1Terminal(host);
        serveOrders(host);
        host.server.onExec("team1", "orders", execRan("out " + kHostile, "err " + kHostile, 0));
        CHECK(host.run({"sandbox", "exec", "orders", "--", "cat", "f"}) == 0);
        CHECK(host.out.str() == "out \\xc3\\x9b[2J\\xc2\\x9d");
        CHECK(host.err.str() == "err \\xc3\\x9b[2J\\xc2\\x9d");
    }
}

TEST_CASE("outside UTF-8, the line saying why an exec could not start is escaped",
          "[hostile][locale][exec]") {
    TestHost host;
    latin1Terminal(host);
    serveOrders(host);
    testing::ExecScript script;
    script.statusBody = json{{"status", "Failure"},
                             {"reason", "InternalError"},
                             {"message", "cannot start " + kHostile}}
                            .dump();
    host.server.onExec("team1", "orders", script);
    CHECK(host.run({"sandbox", "exec", "orders", "--", "nope"}) == 126);
    INFO(host.err.str());
    CHECK_FALSE(hasHighByte(host.err.str()));
    CHECK(host.err.str().find("error: cannot start \\xc3\\x9b[2J") == 0);
}

TEST_CASE("outside UTF-8, sandbox logs on a terminal are escaped", "[hostile][locale][logs]") {
    TestHost host;
    latin1Terminal(host);
    serveOrders(host);
    host.server.onStream("GET", kLog, {"a " + kHostile + "\n"});
    CHECK(host.run({"sandbox", "logs", "orders"}) == 0);
    CHECK(host.out.str() == "a \\xc3\\x9b[2J\\xc2\\x9d\n");
}

TEST_CASE("outside UTF-8, sandbox run's streamed output is escaped", "[hostile][locale][run]") {
    const std::string runPodName = "rossoctl-run-00000001";
    const auto runPod = [&](const json& state) {
        return json{
            {"metadata", {{"name", runPodName}, {"namespace", "team1"}, {"uid", "uid-run"}}},
            {"spec", {{"containers", {{{"name", "run"}}}}}},
            {"status",
             {{"phase", state.contains("running") ? "Running" : "Pending"},
              {"containerStatuses",
               {{{"name", "run"}, {"image", "python:3.12-slim"}, {"state", state}}}}}}};
    };
    TestHost host;
    latin1Terminal(host);
    host.server.onJson("POST", kPods, 201, runPod(json::object()));
    host.server.onJson("GET", kPods, 200, list({runPod({{"running", json::object()}})}));
    host.server.on("DELETE", kPods + "/" + runPodName, 200, "{}");
    host.server.onExec("team1", runPodName, execRan("o " + kHostile, "e " + kHostile, 0));
    CHECK(host.run({"sandbox", "run", "--", "python3", "main.py"}) == 0);
    CHECK(host.out.str() == "o \\xc3\\x9b[2J\\xc2\\x9d");
    CHECK(host.err.str() == "e \\xc3\\x9b[2J\\xc2\\x9d");
}

TEST_CASE("outside UTF-8, the names cp refuses reach the terminal escaped",
          "[hostile][locale][cp]") {
    testing::TempDir dir;
    std::string archive;
    app::run::TarWriter writer(archive, 0);
    writer.addSymlink("./" + kHostile, "/etc");  // refused: it leaves the directory
    writer.addFile("./ok.txt", "fine", 0644);
    writer.finish();
    TestHost host;
    latin1Terminal(host);
    serveOrders(host);
    host.server.onExec("team1", "orders", execRan("d - tar\n", "", 0));
    host.server.onExec("team1", "orders", execRan(archive, "", 0));
    CHECK(host.run({"sandbox", "cp", "orders:/workspace", dir.file("dest")}) == kExitError);
    INFO(host.err.str());
    CHECK_FALSE(hasHighByte(host.err.str()));
    CHECK(host.err.str().find("warning: refused: \\xc3\\x9b[2J") != std::string::npos);
}
