// `sandbox restart` of several sandboxes: shared lists and watches instead of five or more
// requests each (issue 31's restart row), and every rule of a single restart kept.
#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>

#include "budget_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::budget;

namespace {

// Sandbox `name` whose pods carry a label of their own, as the controller makes them.
json sandboxNamed(const std::string& name) {
    json sandbox = sandboxObject(name);
    sandbox["status"]["selector"] = "agents.x-k8s.io/sandbox-name-hash=h-" + name;
    return sandbox;
}

json podNamed(const std::string& sandbox, const std::string& uid, bool ready = true) {
    json pod = podOf(sandbox, uid);
    pod["metadata"]["labels"] = {{"agents.x-k8s.io/sandbox-name-hash", "h-" + sandbox}};
    if (!ready) pod["status"]["conditions"] = {{{"type", "Ready"}, {"status", "False"}}};
    return pod;
}

std::vector<std::string> names(size_t count) {
    std::vector<std::string> result;
    for (size_t i = 0; i < count; ++i) result.push_back("s" + std::to_string(i));
    return result;
}

// What a test scripts differently from the plain case (a route's first reply is the one used).
struct Scripted {
    std::optional<std::vector<json>> pods;           // the namespace's pod list
    std::optional<std::vector<std::string>> events;  // the pod watch
    std::optional<std::string> conflictOn;           // the sandbox whose DELETE gets a 409
};

// The namespace's sandboxes, each with one Ready pod "old-NAME", and a watch in which each
// pod is replaced by a Ready "new-NAME".
void serveRestartable(TestHost& host, const std::vector<std::string>& sandboxes,
                      const Scripted& scripted = {}) {
    host.serveSandboxGroup();
    std::vector<json> listed, pods;
    std::vector<std::string> events;
    for (const auto& name : sandboxes) {
        listed.push_back(sandboxNamed(name));
        pods.push_back(podNamed(name, "old-" + name));
        if (scripted.conflictOn == name)
            host.server.onJson("DELETE", kPods + "/" + name, 409,
                               {{"kind", "Status"},
                                {"status", "Failure"},
                                {"code", 409},
                                {"reason", "Conflict"},
                                {"message", "Precondition failed: UID in precondition: old-s0"}});
        else
            host.server.on("DELETE", kPods + "/" + name, 200, "{}");
        events.push_back(event("DELETED", podNamed(name, "old-" + name)));
        events.push_back(event("ADDED", podNamed(name, "new-" + name)));
    }
    host.server.onJson("GET", kSandboxes, 200, list(listed));
    host.server.onJson("GET", kPods, 200, list(scripted.pods.value_or(pods)));
    host.server.onStream("GET", kPods + "?watch=true", scripted.events.value_or(events));
}

size_t countOf(const std::vector<std::string>& sent, const std::string& request) {
    return static_cast<size_t>(std::count(sent.begin(), sent.end(), request));
}

std::vector<std::string> restartArguments(const std::vector<std::string>& sandboxes) {
    std::vector<std::string> arguments{"sandbox", "restart"};
    arguments.insert(arguments.end(), sandboxes.begin(), sandboxes.end());
    return arguments;
}

}  // namespace

TEST_CASE("request budget: restarting 20 sandboxes is two lists, a DELETE each and two waits",
          "[requests][restart]") {
    TestHost host;
    const auto sandboxes = names(20);
    serveRestartable(host, sandboxes);
    REQUIRE(host.run(restartArguments(sandboxes)) == 0);
    INFO(host.err.str());
    const auto sent = host.sent();
    // Before: a GET, a pod list, a DELETE, a pod watch and a Sandbox list for each (100).
    CHECK(sent.size() == 1 + 2 + 20 + 2);
    CHECK(countOf(sent, "GET " + kSandboxes) == 2);  // the sandboxes, then their Ready
    CHECK(countOf(sent, "GET " + kPods) == 2);       // the pods, then one watch
    for (const auto& name : sandboxes) {
        CHECK(countOf(sent, "DELETE " + kPods + "/" + name) == 1);
        CHECK(host.out.str().find("sandbox/" + name + " restarted (pod uid old-" + name +
                                  " → new-" + name) != std::string::npos);
    }
    for (const auto& remove : host.server.requestsTo("DELETE", kPods + "/s7"))
        CHECK(json::parse(remove.body)["preconditions"]["uid"] == "old-s7");
    // The watch starts where the pod list ended: no DELETE's event is missed.
    for (const auto& request : host.server.requestsTo("GET", kPods))
        if (request.url.find("watch=true") != std::string::npos)
            CHECK(request.url.find("resourceVersion=10") != std::string::npos);
}

TEST_CASE("restart --wait=false of many sandboxes is two lists and a DELETE each",
          "[requests][restart]") {
    TestHost host;
    const auto sandboxes = names(5);
    serveRestartable(host, sandboxes);
    auto arguments = restartArguments(sandboxes);
    arguments.push_back("--wait=false");
    REQUIRE(host.run(arguments) == 0);
    CHECK(host.sent().size() == 1 + 2 + 5);
    CHECK(host.out.str().find("sandbox/s3 pod deleted (pod uid old-s3") != std::string::npos);
}

TEST_CASE("a shared restart never takes a pod it controls that the controller did not make",
          "[restart][review48]") {
    TestHost host;
    json decoy = podNamed("s0", "decoy-uid");
    decoy["metadata"]["name"] = "decoy";
    Scripted scripted;
    scripted.events = {event("DELETED", podNamed("s0", "old-s0")), event("ADDED", decoy),
                       event("DELETED", podNamed("s1", "old-s1")),
                       event("ADDED", podNamed("s1", "new-s1"))};
    serveRestartable(host, {"s0", "s1"}, scripted);
    CHECK(host.run({"sandbox", "restart", "s0", "s1"}) == kExitError);
    CHECK(host.err.str().find("sandbox/s0 pod decoy names it as its controller but is not the "
                              "pod the controller makes (s0)") != std::string::npos);
    CHECK(host.out.str().find("sandbox/s1 restarted (pod uid old-s1 → new-s1") !=
          std::string::npos);
    CHECK(host.out.str().find("sandbox/s0 restarted") == std::string::npos);
}

TEST_CASE("a sandbox in another state than one live pod is restarted on its own",
          "[restart][review47b]") {
    TestHost host;
    // s1 controls two pods and records neither: a single restart refuses to choose.
    json first = podNamed("s1", "a");
    first["metadata"]["name"] = "first";
    json second = podNamed("s1", "b");
    second["metadata"]["name"] = "second";
    Scripted scripted;
    scripted.pods = {podNamed("s0", "old-s0"), first, second};
    serveRestartable(host, {"s0", "s1"}, scripted);
    host.server.onJson("GET", kSandboxes + "/s1", 200, sandboxNamed("s1"));
    CHECK(host.run({"sandbox", "restart", "s0", "s1"}) == kExitError);
    CHECK(host.err.str().find("has 2 pods that name it as their controller (first, second)") !=
          std::string::npos);
    CHECK(host.out.str().find("sandbox/s0 restarted (pod uid old-s0 → new-s0") !=
          std::string::npos);
    const auto writes = host.server.writes();
    CHECK(writes == std::vector<std::string>{"DELETE " + kPods + "/s0"});
}

TEST_CASE("a pod replaced under a shared restart is kept and waited for", "[restart]") {
    TestHost host;
    Scripted scripted;
    scripted.conflictOn = "s0";
    scripted.events = {event("MODIFIED", podNamed("s0", "theirs", false)),
                       event("DELETED", podNamed("s1", "old-s1")),
                       event("ADDED", podNamed("s1", "new-s1")),
                       event("MODIFIED", podNamed("s0", "theirs"))};
    serveRestartable(host, {"s0", "s1"}, scripted);
    host.server.onJson("GET", kPods + "?labelSelector=agents.x-k8s.io%2Fsandbox-name-hash%3Dh-s0",
                       200, list({podNamed("s0", "theirs", false)}));
    REQUIRE(host.run({"sandbox", "restart", "s0", "s1"}) == 0);
    CHECK(host.err.str().find("note: pod s0 was replaced by someone else (uid theirs) before "
                              "rossoctl deleted it; the replacement is kept") != std::string::npos);
    CHECK(host.out.str().find("sandbox/s0 restarted (pod uid old-s0 → theirs") !=
          std::string::npos);
    CHECK(countOf(host.server.writes(), "DELETE " + kPods + "/s0") == 1);
}

TEST_CASE("a shared restart whose replacement never comes says so for that sandbox", "[restart]") {
    TestHost host;
    Scripted scripted;
    scripted.events = {event("DELETED", podNamed("s0", "old-s0")),
                       event("DELETED", podNamed("s1", "old-s1")),
                       event("ADDED", podNamed("s1", "new-s1"))};
    serveRestartable(host, {"s0", "s1"}, scripted);
    host.server.latency = std::chrono::milliseconds(300);
    host.server.onJson("GET", kSandboxes + "/s0", 200, sandboxNamed("s0"));
    CHECK(host.run({"sandbox", "restart", "s0", "s1", "--timeout", "5s"}) == kExitError);
    INFO(host.err.str());
    CHECK(host.err.str().find("sandbox/s0 timed out after 5.0s: no replacement pod was ever "
                              "created for pod s0") != std::string::npos);
    CHECK(host.out.str().find("sandbox/s1 restarted") != std::string::npos);
}
