// What a command promises holds whatever the server does: a command's --timeout bounds its
// requests too, and a conflict is retried by one layer at a time, within a time.
#include <catch2/catch.hpp>

#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;
using std::chrono::milliseconds;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kDeployments = "/apis/apps/v1/namespaces/team1/deployments";

json sandbox(const std::string& mode, const std::string& ready) {
    json container = {{"name", "agent"}, {"image", "ghcr.io/acme/orders:1.4"}};
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", "orders"},
              {"namespace", "team1"},
              {"uid", "uid-orders"},
              {"generation", 2},
              {"resourceVersion", "5"},
              {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}},
              {"creationTimestamp", "2023-11-14T22:00:00Z"}}},
            {"spec",
             {{"operatingMode", mode},
              {"podTemplate", {{"spec", {{"containers", json::array({container})}}}}}}},
            {"status",
             {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
              {"conditions", {{{"type", "Ready"}, {"status", ready}, {"reason", "Waiting"}}}}}}};
}

// 409 from the quota admission: nothing stored, and the Client sends it again.
std::string quotaConflict() {
    return json{{"kind", "Status"},
                {"status", "Failure"},
                {"reason", "Conflict"},
                {"code", 409},
                {"message",
                 "Operation cannot be fulfilled on resourcequotas \"q\": the object has been "
                 "modified"},
                {"details", {{"name", "q"}, {"kind", "resourcequotas"}}}}
        .dump();
}

// Every request the server does not answer takes all the time it is given, then times out
// (the fake clock moves by the request's own timeout), as a stalled server makes it.
// Discovery and paths ending in one of `answered` are answered at once.
void stallAllBut(TestHost& host, const std::vector<std::string>& answered) {
    host.server.onRequest = [&host, answered](const kube::HttpRequest& request) {
        const std::string path = request.url.substr(0, request.url.find('?'));
        auto endsWith = [&](const std::string& end) {
            return path.size() >= end.size() &&
                   path.compare(path.size() - end.size(), end.size(), end) == 0;
        };
        if (endsWith("/apis/agents.x-k8s.io")) return;
        for (const auto& end : answered)
            if (endsWith(end)) return;
        host.clock.advance(request.timeout);
    };
}

}  // namespace

TEST_CASE("agents wait --timeout bounds the lookups before the wait, and says it passed",
          "[deadline][wait]") {
    TestHost host;
    host.serveSandboxGroup();
    // The sandbox answers; the Deployment GET before it never does.
    stallAllBut(host, {"/sandboxes/orders"});
    host.server.onFail("GET", kDeployments + "/orders", kube::TransportError::Kind::Timeout,
                       "Unable to connect to the server: timed out");
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox("Running", "False"));
    const auto start = host.clock.monotonic();
    CHECK(host.run({"agents", "wait", "orders", "--timeout", "3s"}) == kExitError);
    // The old code: the GET alone took its 5-minute default (300 s).
    CHECK(host.clock.monotonic() - start <= std::chrono::seconds(3));
    CHECK(host.err.str().find("the command's --timeout 3s passed") != std::string::npos);
    CHECK(host.err.str().find("Unable to connect") == std::string::npos);
}

TEST_CASE("sandbox resume --timeout bounds the wait's LIST, not the 5-minute default",
          "[deadline][wait]") {
    TestHost host;
    host.serveSandboxGroup();
    stallAllBut(host, {"/sandboxes/orders"});
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox("Suspended", "False"));
    host.server.onJson("PATCH", kSandboxes + "/orders", 200, sandbox("Running", "False"));
    host.server.onFail("GET", kSandboxes, kube::TransportError::Kind::Timeout,
                       "Unable to connect to the server: timed out");
    host.server.onFail("GET", kPods, kube::TransportError::Kind::Timeout,
                       "Unable to connect to the server: timed out");
    host.server.onFail("GET", "/api/v1/namespaces/team1/events",
                       kube::TransportError::Kind::Timeout,
                       "Unable to connect to the server: timed out");
    const auto start = host.clock.monotonic();
    CHECK(host.run({"sandbox", "resume", "orders", "--timeout", "3s"}) == kExitError);
    // The old code: 300 s, the LIST of waitForSet on its own default. Within 3 s now: the
    // wait times out, or a request cut short by the --timeout says so.
    CHECK(host.clock.monotonic() - start <= std::chrono::seconds(3));
    CHECK(host.err.str().find("3.0s") != std::string::npos);
    CHECK(host.err.str().find("Unable to connect") == std::string::npos);
}

TEST_CASE("sandbox set-env: a quota conflict is retried by the Client only, not 5 x 10 times",
          "[conflict][env]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox("Running", "True"));
    host.server.on("PUT", kSandboxes + "/orders", 409, quotaConflict());
    CHECK(host.run({"sandbox", "set-env", "orders", "X=1"}) == kExitError);
    CHECK(host.server.requestsTo("PUT", kSandboxes + "/orders").size() == 5);  // the old: 50
    CHECK(host.err.str().find("resourcequotas") != std::string::npos);
}

TEST_CASE("sandbox set-env: its own conflict loop ends within 30 s however slow each round is",
          "[conflict][env]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.clock = &host.clock;
    host.server.latency = std::chrono::seconds(4);  // each request takes 4 s
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox("Running", "True"));
    host.server.on("PUT", kSandboxes + "/orders", 409,
                   testing::statusBody(409, "Conflict", "the object has been modified"));
    const auto start = host.clock.monotonic();
    CHECK(host.run({"sandbox", "set-env", "orders", "X=1"}) == kExitError);
    // The old code: 10 rounds of GET+PUT, 80 s and more.
    CHECK(host.clock.monotonic() - start <= std::chrono::seconds(30 + 8));
    CHECK(host.server.requestsTo("PUT", kSandboxes + "/orders").size() < 10);
    CHECK(host.err.str().find("kept changing under us") != std::string::npos);
}

TEST_CASE("sandbox suspend --timeout: quota conflicts neither multiply nor outlast it",
          "[conflict][suspend]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.clock = &host.clock;
    host.server.latency = milliseconds(500);
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox("Running", "True"));
    host.server.on("PATCH", kSandboxes + "/orders", 409, quotaConflict(), {{"Retry-After", "60"}});
    const auto start = host.clock.monotonic();
    CHECK(host.run({"sandbox", "suspend", "orders", "--timeout", "5s"}) == kExitError);
    // The old code: 3 rounds of the Client's 5 tries (15 writes, past the 5 s).
    CHECK(host.server.writes().size() <= 5);
    CHECK(host.clock.monotonic() - start <= std::chrono::seconds(5));
}
