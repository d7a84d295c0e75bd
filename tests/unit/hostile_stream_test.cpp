// The streams a pod's or server's bytes reach the user by: a one-shot log read that the server
// keeps open ends within its bound, and on a terminal outside UTF-8 no byte from 0x80 up gets
// through any of them (there 0x9b is CSI: "\xc3\x9b[2J" is a valid "Û[2J" in UTF-8 and clears
// an ISO-8859-1 screen).
#include <algorithm>
#include <catch2/catch.hpp>

#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kLog = kPods + "/orders/log";

json list(const std::vector<json>& items) {
    return {{"kind", "List"}, {"metadata", {{"resourceVersion", "10"}}}, {"items", items}};
}

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
        std::vector<std::string> argv = {"sandbox", "logs", "orders"};
        argv.insert(argv.end(), flags.begin(), flags.end());
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
