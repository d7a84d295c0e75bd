// sandbox port-forward offline: real loopback listeners, a scripted pods/portforward stream
// behind them (port_forward_fakes.hpp), a scripted pod watch.
#include <catch2/catch.hpp>
#include <regex>
#include <thread>

#include "json_fixtures.hpp"
#include "port_forward_fakes.hpp"
#include "rossoctl/app/port_forward.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::FakePortForward;
using rossoctl::testing::list;
using rossoctl::testing::PortForwardRecord;
using rossoctl::testing::PortForwardScript;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";

json readySandbox() {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata", {{"name", "orders"}, {"namespace", "team1"}, {"uid", "uid-orders"}}},
            {"spec", {{"podTemplate", {{"spec", {{"containers", json::array()}}}}}}},
            {"status",
             {{"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "PodReady"}}}}}}};
}

json runningPod() {
    return {{"metadata",
             {{"name", "orders"},
              {"namespace", "team1"},
              {"uid", "pod-1"},
              {"resourceVersion", "7"},
              {"creationTimestamp", "2023-11-14T22:00:05Z"},
              {"ownerReferences",
               {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}}},
            {"spec", {{"containers", {{{"name", "agent"}}}}}},
            {"status",
             {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

// A host with sandbox orders Running, its pod watched quietly (until Ctrl-C), and every
// port-forward upgrade played by `script`.
struct ForwardHost {
    explicit ForwardHost(PortForwardScript script = {}, bool quietWatch = true) {
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes + "/orders", 200, readySandbox());
        host.server.onJson("GET", kPods, 200, list({runningPod()}));
        if (quietWatch) host.server.onQuietWatch(kPods + "?watch=true");
        host.server.onRequest = [this](const kube::HttpRequest& request) {
            if (request.url.find("watch=true") != std::string::npos) watching.store(true);
        };
        host.server.onOtherUpgrade = [this, script](const kube::HttpRequest& request) {
            return std::make_unique<FakePortForward>(request, script, record);
        };
    }
    // Runs the command on its own thread; the test talks to its ports, then presses Ctrl-C.
    void start(std::vector<std::string> args) {
        runner = std::thread([this, args] { exitCode = host.run(args); });
    }
    int stop() {
        host.cancel.cancel();
        runner.join();
        return exitCode;
    }
    // Waits (real time, a few seconds at most) until the pod watch is open: the listeners are.
    void waitForWatch() {
        const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!watching.load() && std::chrono::steady_clock::now() < giveUp)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }

    TestHost host;
    std::shared_ptr<PortForwardRecord> record = std::make_shared<PortForwardRecord>();
    std::thread runner;
    int exitCode = -1;
    std::atomic<bool> watching{false};
};

}  // namespace

TEST_CASE("sandbox port-forward: every help example parses and validates", "[port-forward]") {
    testing::checkHelpExamples({"sandbox", "port-forward"});
}

TEST_CASE("sandbox port-forward rejects bad ports and addresses before sending anything",
          "[port-forward]") {
    testing::checkUsageErrors(
        {{"sandbox", "port-forward", "orders"},
         {"sandbox", "port-forward", "orders", "0"},
         {"sandbox", "port-forward", "orders", "65536"},
         {"sandbox", "port-forward", "orders", "http"},
         {"sandbox", "port-forward", "orders", "80:"},
         {"sandbox", "port-forward", "orders", "-1:80"},
         {"sandbox", "port-forward", "orders", "8080:+80"},
         {"sandbox", "port-forward", "orders", "a:80"},
         {"sandbox", "port-forward", "orders", "80", "--address", "example.com"},
         {"sandbox", "port-forward", "orders", "80", "--address", "1.2.3.4,"},
         {"sandbox", "port-forward", "Bad!", "80"}});
}

TEST_CASE("port mappings and addresses read as kubectl reads them", "[port-forward]") {
    auto mapping = app::parsePortMapping("8080");
    CHECK((mapping.local == 8080 && mapping.remote == 8080));
    mapping = app::parsePortMapping("9000:80");
    CHECK((mapping.local == 9000 && mapping.remote == 80));
    mapping = app::parsePortMapping(":80");
    CHECK((mapping.local == 0 && mapping.remote == 80));
    mapping = app::parsePortMapping("0:5432");
    CHECK((mapping.local == 0 && mapping.remote == 5432));
    const auto addresses = app::parseListenAddresses({"localhost", "10.0.0.1,::1"});
    REQUIRE(addresses.size() == 3);
    CHECK((addresses[0].ip == "127.0.0.1" && !addresses[0].optional));
    CHECK((addresses[1].ip == "::1" && !addresses[1].optional));  // named: now required
    CHECK(addresses[2].ip == "10.0.0.1");
}

TEST_CASE("sandbox port-forward relays each connection over its own stream until Ctrl-C",
          "[port-forward]") {
    ForwardHost forward;
    const uint16_t port = testing::freeLoopbackPort();
    forward.start({"sandbox", "port-forward", "orders", std::to_string(port) + ":80", "-v", "1",
                   "--address", "127.0.0.1"});
    for (const std::string text : {"GET / HTTP/1.0\r\n\r\n", "second connection"}) {
        const int socket = testing::connectLoopback(port);
        REQUIRE(socket >= 0);
        CHECK(::send(socket, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()));
        CHECK(testing::readFrom(socket, text.size()) == text);  // echoed through the stream
        ::close(socket);
    }
    CHECK(forward.stop() == 0);
    CHECK(forward.host.out.str() ==
          "Forwarding from 127.0.0.1:" + std::to_string(port) + " -> 80\n");
    const std::string handling = "Handling connection for " + std::to_string(port) + "\n";
    CHECK(forward.host.err.str() == handling + handling);
    std::lock_guard lock(forward.record->mutex);
    CHECK(forward.record->paths ==
          std::vector<std::string>{"/api/v1/namespaces/team1/pods/orders/portforward?ports=80",
                                   "/api/v1/namespaces/team1/pods/orders/portforward?ports=80"});
    CHECK(forward.record->received == "GET / HTTP/1.0\r\n\r\nsecond connection");
    CHECK(forward.record->closedByClient == 2);  // each stream closed when its client left
}

TEST_CASE("sandbox port-forward with LOCAL 0 picks a free port and prints it", "[port-forward]") {
    ForwardHost forward;
    forward.start(
        {"sandbox", "port-forward", "orders", ":8080", "0:9090", "--address", "127.0.0.1"});
    forward.waitForWatch();
    CHECK(forward.stop() == 0);
    std::smatch match;
    const std::string out = forward.host.out.str();
    REQUIRE(std::regex_match(out, match,
                             std::regex("Forwarding from 127\\.0\\.0\\.1:(\\d+) -> 8080\n"
                                        "Forwarding from 127\\.0\\.0\\.1:(\\d+) -> 9090\n")));
    CHECK(std::stoi(match[1]) > 0);
    CHECK(std::stoi(match[2]) > 0);
    CHECK(match[1] != match[2]);
    CHECK(forward.host.err.str().empty());  // no line per connection without -v
}

TEST_CASE("sandbox port-forward ends with exit 1 when the pod goes away", "[port-forward]") {
    ForwardHost forward({}, false);
    json deleted = {{"type", "DELETED"}, {"object", runningPod()}};
    forward.host.server.onStream("GET", kPods + "?watch=true", {deleted.dump() + "\n"});
    const uint16_t port = testing::freeLoopbackPort();
    CHECK(forward.host.run({"sandbox", "port-forward", "orders", std::to_string(port), "--address",
                            "127.0.0.1"}) == 1);
    CHECK(forward.host.err.str() == "error: lost connection to pod: pod orders was deleted\n");
    // Replaced by a pod of the same name (a restart): not the pod the forward was for.
    ForwardHost replaced({}, false);
    json newPod = runningPod();
    newPod["metadata"]["uid"] = "pod-2";
    replaced.host.server.onStream("GET", kPods + "?watch=true",
                                  {json{{"type", "MODIFIED"}, {"object", newPod}}.dump() + "\n"});
    CHECK(replaced.host.run({"sandbox", "port-forward", "orders", std::to_string(port), "--address",
                             "127.0.0.1"}) == 1);
    CHECK(replaced.host.err.str() == "error: lost connection to pod: pod orders was replaced\n");
}

TEST_CASE("sandbox port-forward: a port already in use is one clear error, exit 1",
          "[port-forward]") {
    const uint16_t port = testing::freeLoopbackPort();
    const int taken = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(taken, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(taken, 1) == 0);
    ForwardHost forward;
    CHECK(forward.host.run({"sandbox", "port-forward", "orders", std::to_string(port), "--address",
                            "127.0.0.1"}) == 1);
    ::close(taken);
    CHECK(forward.host.err.str() == "error: unable to listen on 127.0.0.1:" + std::to_string(port) +
                                        ": Address already in use\n");
    CHECK(forward.host.out.str().empty());
}

TEST_CASE("sandbox port-forward: the pod's error text is bounded and cannot steer the terminal",
          "[port-forward][hostile]") {
    PortForwardScript script;
    script.errorText = "\x1b]0;owned\x07\x1b[2J" + std::string(1024 * 1024, 'A') + "\x1b[31m";
    ForwardHost forward(script);
    const uint16_t port = testing::freeLoopbackPort();
    forward.start({"sandbox", "port-forward", "orders", std::to_string(port) + ":80", "--address",
                   "127.0.0.1"});
    const int socket = testing::connectLoopback(port);
    REQUIRE(socket >= 0);
    CHECK(testing::readFrom(socket, 1).empty());  // the stream ended: so did the connection
    ::close(socket);
    CHECK(forward.stop() == 0);
    const std::string err = forward.host.err.str();
    const std::string prefix =
        "error: an error occurred forwarding " + std::to_string(port) + " -> 80: ";
    REQUIRE(err.rfind(prefix, 0) == 0);
    CHECK(err.find('\x1b') == std::string::npos);
    CHECK(err.find('\x07') == std::string::npos);
    CHECK(err.size() < prefix.size() + 310);
    CHECK(err.back() == '\n');
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
}

TEST_CASE("sandbox port-forward refuses a stream for another port and an oversized frame",
          "[port-forward][hostile]") {
    for (const bool wrongPort : {true, false}) {
        PortForwardScript script;
        if (wrongPort)
            script.announcedPort = 81;
        else
            script.oversizedFrame = 2 * 1024 * 1024;
        ForwardHost forward(script);
        const uint16_t port = testing::freeLoopbackPort();
        forward.start({"sandbox", "port-forward", "orders", std::to_string(port) + ":80",
                       "--address", "127.0.0.1"});
        const int socket = testing::connectLoopback(port);
        REQUIRE(socket >= 0);
        CHECK(testing::readFrom(socket, 1).empty());  // nothing of it reached the client
        ::close(socket);
        CHECK(forward.stop() == 0);
        INFO(forward.host.err.str());
        CHECK(forward.host.err.str().find(
                  wrongPort ? "the server opened a stream for port 81, not 80"
                            : "websocket: frame of 2097153 bytes exceeds the limit") !=
              std::string::npos);
    }
}

TEST_CASE("sandbox port-forward holds back what a slow local reader has not taken",
          "[port-forward][hostile]") {
    PortForwardScript script;
    script.floodBytes = 64 * 1024 * 1024;
    ForwardHost forward(script);
    const uint16_t port = testing::freeLoopbackPort();
    forward.start({"sandbox", "port-forward", "orders", std::to_string(port) + ":80", "--address",
                   "127.0.0.1"});
    const int socket = testing::connectLoopback(port, 64 * 1024);
    REQUIRE(socket >= 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the client reads nothing
    {
        std::lock_guard lock(forward.record->mutex);
        // What the sockets' buffers hold, and a frame: nowhere near the 64 MiB on offer.
        CHECK(forward.record->handedOut < 12 * 1024 * 1024);
    }
    CHECK(testing::readFrom(socket, script.floodBytes).size() == script.floodBytes);
    ::close(socket);
    CHECK(forward.stop() == 0);
}

TEST_CASE("sandbox port-forward: a refused stream is said per connection, the forward goes on",
          "[port-forward]") {
    PortForwardScript script;
    script.handshakeStatus = 403;
    script.refusalBody = testing::statusBody(
        403, "Forbidden",
        "pods \"orders\" is forbidden: User \"dev\" cannot create resource \"pods/portforward\"");
    ForwardHost forward(script);
    const uint16_t port = testing::freeLoopbackPort();
    forward.start({"sandbox", "port-forward", "orders", std::to_string(port) + ":80", "--address",
                   "127.0.0.1"});
    for (int i = 0; i < 2; ++i) {
        const int socket = testing::connectLoopback(port);
        REQUIRE(socket >= 0);
        CHECK(testing::readFrom(socket, 1).empty());
        ::close(socket);
    }
    CHECK(forward.stop() == 0);
    const std::string line = "error: an error occurred forwarding " + std::to_string(port) +
                             " -> 80: pods \"orders\" is forbidden: User \"dev\" cannot create "
                             "resource \"pods/portforward\"\n";
    CHECK(forward.host.err.str() == line + line);
}

TEST_CASE("sandbox port-forward: a sandbox without a running pod is exit 1, nothing listens",
          "[port-forward]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.on("GET", kSandboxes + "/orders", 404, testing::kNotFoundBody);
    CHECK(host.run({"sandbox", "port-forward", "orders", "8080"}) == 1);
    CHECK(host.out.str().empty());
}
