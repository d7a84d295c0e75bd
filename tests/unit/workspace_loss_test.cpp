// Files lost with a pod are said where it happens (issue 34 point 3): restart, suspend and
// set-env --restart delete the pod, and with it what it wrote to an emptyDir /workspace;
// a sandbox imported with --storage keeps /workspace in a claim and gets no note.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kLost =
    "note: what pod orders wrote to /workspace is gone with it (an emptyDir; a sandbox "
    "imported with --storage keeps its work volume)\n";

// A Sandbox as agents import writes it, Ready, with or without --storage.
json importedSandbox(const std::string& storage, const std::string& mode = "Running") {
    model::SandboxOptions options;
    options.name = "orders";
    options.namespaceName = "team1";
    options.pod.image = "busybox";
    options.storage = storage;
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
    options.shutdownTime = now + std::chrono::hours(24);
    json sandbox = model::buildSandbox(options, now);
    sandbox["metadata"]["uid"] = "uid-orders";
    sandbox["metadata"]["resourceVersion"] = "5";
    sandbox["spec"]["operatingMode"] = mode;
    sandbox["status"] = {
        {"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
        {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "PodReady"}}}}};
    return sandbox;
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
            {"status",
             {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

}  // namespace

TEST_CASE("a sandbox's pod-only mounts: its emptyDir /workspace, none with --storage",
          "[sandbox][workspace]") {
    CHECK(model::podOnlyMounts(importedSandbox("")) == std::vector<std::string>{"/workspace"});
    CHECK(model::podOnlyMounts(importedSandbox("1Gi")).empty());
    CHECK(model::podOnlyMounts(json()).empty());
    CHECK(model::podOnlyFilesNote(importedSandbox("1Gi"), "orders").empty());
}

TEST_CASE("sandbox restart says the pod's /workspace went with it", "[sandbox][workspace]") {
    for (const std::string storage : {"", "1Gi"}) {
        TestHost host;
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes + "/orders", 200, importedSandbox(storage));
        host.server.onJson("GET", kPods, 200, list({runningPod()}));
        host.server.on("DELETE", kPods + "/orders", 200, "{}");
        INFO(storage);
        REQUIRE(host.run({"sandbox", "restart", "orders", "--wait=false"}) == 0);
        CHECK((host.err.str().find(kLost) != std::string::npos) == storage.empty());
    }
}

TEST_CASE("sandbox suspend says the pod's /workspace goes with it", "[sandbox][workspace]") {
    for (const std::string storage : {"", "1Gi"}) {
        TestHost host;
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes + "/orders", 200, importedSandbox(storage));
        host.server.onJson("PATCH", kSandboxes + "/orders", 200,
                           importedSandbox(storage, "Suspended"));
        INFO(storage);
        REQUIRE(host.run({"sandbox", "suspend", "orders", "--wait=false"}) == 0);
        CHECK((host.err.str().find(kLost) != std::string::npos) == storage.empty());
    }
    TestHost help;
    CHECK(help.help({"sandbox", "suspend"}).find("lost unless imported with --storage") !=
          std::string::npos);
    CHECK(help.help({"sandbox", "set-env"}).find("lost unless imported with --storage") !=
          std::string::npos);
}

TEST_CASE("sandbox suspend interrupted while its pod goes still says /workspace goes with it",
          "[sandbox][workspace][walk5]") {
    // walk5 MINOR 2: Ctrl-C during the wait said only that the sandbox stays suspended.
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, importedSandbox(""));
    host.server.onJson("PATCH", kSandboxes + "/orders", 200, importedSandbox("", "Suspended"));
    host.server.onJson("GET", kPods, 200, list({runningPod()}));
    host.server.onQuietWatch(kPods + "?watch=true");
    host.server.onQuietWatch(kSandboxes + "?watch=true");
    host.server.onRequest = [&host](const kube::HttpRequest& request) {
        if (request.method == "PATCH") host.cancel.cancel();  // Ctrl-C once it is suspended
    };
    CHECK(host.run({"sandbox", "suspend", "orders"}) == kExitCancelled);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.find("interrupted") != std::string::npos);
    CHECK(err.find(kLost) != std::string::npos);
}
