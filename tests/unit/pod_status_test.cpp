// The pod's real reason where a row shows why an agent is not ready (issue 34 point 2): kubectl
// shows ImagePullBackOff where the Sandbox only says Pending DependenciesNotReady.
#include "rossoctl/model/pod_status.hpp"

#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";

json containerStatus(const json& state, bool ready = false) {
    return {{"name", "agent"}, {"ready", ready}, {"state", state}};
}

json podWith(const std::string& phase, const std::vector<json>& containers,
             const std::vector<json>& inits = {}) {
    json pod = {{"metadata", {{"name", "orders"}}},
                {"spec", {{"containers", {{{"name", "agent"}}}}}},
                {"status", {{"phase", phase}, {"containerStatuses", containers}}}};
    if (!inits.empty()) {
        pod["status"]["initContainerStatuses"] = inits;
        pod["spec"]["initContainers"] = json::array();
        for (size_t i = 0; i < inits.size(); ++i) pod["spec"]["initContainers"].push_back({});
    }
    return pod;
}

json waiting(const std::string& reason) {
    return {{"waiting", {{"reason", reason}}}};
}
json terminated(const json& fields) {
    return {{"terminated", fields}};
}

// A Sandbox whose controller says only that its pod is not ready, and that pod.
json pendingSandbox() {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", "orders"},
              {"namespace", "team1"},
              {"uid", "uid-orders"},
              {"creationTimestamp", "2023-11-14T22:00:00Z"},
              {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}},
            {"spec",
             {{"podTemplate",
               {{"spec", {{"containers", {{{"name", "agent"}, {"image", "nope:1"}}}}}}}}}},
            {"status",
             {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
              {"conditions",
               {{{"type", "Ready"},
                 {"status", "False"},
                 {"reason", "DependenciesNotReady"},
                 {"message", "Pod is not ready"}}}}}}};
}

json pullingPod() {
    json pod = podWith("Pending", {containerStatus(waiting("ImagePullBackOff"))});
    pod["metadata"] = {
        {"name", "orders"},
        {"namespace", "team1"},
        {"uid", "pod-uid"},
        {"creationTimestamp", "2023-11-14T22:00:01Z"},
        {"labels",
         {{"app.kubernetes.io/name", "orders"}, {"app.kubernetes.io/managed-by", "rossoctl"}}},
        {"ownerReferences", {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}};
    return pod;
}

// The STATUS column of the first row under the header.
std::string statusColumn(const std::string& table) {
    std::istringstream lines(table);
    std::string header, row;
    std::getline(lines, header);
    std::getline(lines, row);
    const size_t at = header.find("STATUS");
    if (at == std::string::npos || row.size() <= at) return "";
    return row.substr(at, row.find(' ', at) - at);
}

}  // namespace

TEST_CASE("a pod's STATUS reads as kubectl get pods prints it", "[pod-status]") {
    CHECK(model::podStatusText(podWith("Pending", {})) == "Pending");
    CHECK(model::podStatusText(json::object()) == "Pending");
    CHECK(model::podStatusText(podWith(
              "Pending", {containerStatus(waiting("ImagePullBackOff"))})) == "ImagePullBackOff");
    CHECK(model::podStatusText(podWith(
              "Pending", {containerStatus(waiting("ContainerCreating"))})) == "ContainerCreating");
    CHECK(model::podStatusText(podWith(
              "Running", {containerStatus(waiting("CrashLoopBackOff"))})) == "CrashLoopBackOff");
    CHECK(model::podStatusText(podWith(
              "Failed",
              {containerStatus(terminated({{"reason", "OOMKilled"}, {"exitCode", 137}}))})) ==
          "OOMKilled");
    CHECK(model::podStatusText(
              podWith("Failed", {containerStatus(terminated({{"exitCode", 3}}))})) == "ExitCode:3");
    CHECK(model::podStatusText(podWith(
              "Failed", {containerStatus(terminated({{"exitCode", 137}, {"signal", 9}}))})) ==
          "Signal:9");
    CHECK(model::podStatusText(podWith(
              "Running", {containerStatus({{"running", json::object()}}, true)})) == "Running");
    // Init containers first: the one not done yet says where the pod is.
    CHECK(model::podStatusText(podWith("Pending", {containerStatus(waiting("PodInitializing"))},
                                       {containerStatus(waiting("ErrImagePull"))})) ==
          "Init:ErrImagePull");
    CHECK(model::podStatusText(podWith("Pending", {},
                                       {containerStatus(terminated({{"exitCode", 0}})),
                                        containerStatus({{"running", json::object()}})})) ==
          "Init:1/2");
    json evicted = podWith("Failed", {});
    evicted["status"]["reason"] = "Evicted";
    CHECK(model::podStatusText(evicted) == "Evicted");
    json deleting = podWith("Running", {containerStatus({{"running", json::object()}}, true)});
    deleting["metadata"]["deletionTimestamp"] = "2023-11-14T22:13:20Z";
    CHECK(model::podStatusText(deleting) == "Terminating");
}

TEST_CASE("sandbox list and get show the pod's ImagePullBackOff, not Pending",
          "[pod-status][sandbox]") {
    for (const auto& argv :
         std::vector<std::vector<std::string>>{{"sandbox", "list"}, {"sandbox", "get", "orders"}}) {
        TestHost host;
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes, 200, list({pendingSandbox()}));
        host.server.onJson("GET", kSandboxes + "/orders", 200, pendingSandbox());
        host.server.onJson("GET", kPods, 200, list({pullingPod()}));
        host.server.onJson("GET", kPods + "/orders", 200, pullingPod());
        INFO(argv[1]);
        REQUIRE(host.run(argv) == 0);
        INFO(host.out.str());
        CHECK(statusColumn(host.out.str()) == "ImagePullBackOff");
        CHECK(host.out.str().find("DependenciesNotReady") != std::string::npos);
    }
}

TEST_CASE("agents list and get show the pod's ImagePullBackOff as the STATUS",
          "[pod-status][agents]") {
    for (const auto& argv :
         std::vector<std::vector<std::string>>{{"agents", "list"}, {"agents", "get", "orders"}}) {
        TestHost host;
        host.serveGroups();
        for (const char* path : {"/apis/apps/v1/namespaces/team1/deployments",
                                 "/apis/apps/v1/namespaces/team1/statefulsets",
                                 "/apis/batch/v1/namespaces/team1/jobs"})
            host.server.onJson("GET", path, 200, list({}));
        host.server.onJson("GET", kSandboxes, 200, list({pendingSandbox()}));
        host.server.onJson("GET", kSandboxes + "/orders", 200, pendingSandbox());
        host.server.onJson("GET", kPods, 200, list({pullingPod()}));
        host.server.onJson("GET", kPods + "/orders", 200, pullingPod());
        INFO(argv[1]);
        REQUIRE(host.run(argv) == 0);
        INFO(host.out.str() << host.err.str());
        CHECK(statusColumn(host.out.str()) == "ImagePullBackOff");
    }
}

TEST_CASE("agents list reads no pods when every agent is ready", "[pod-status][agents]") {
    TestHost host;
    host.serveGroups();
    for (const char* path :
         {"/apis/apps/v1/namespaces/team1/deployments",
          "/apis/apps/v1/namespaces/team1/statefulsets", "/apis/batch/v1/namespaces/team1/jobs"})
        host.server.onJson("GET", path, 200, list({}));
    json ready = pendingSandbox();
    ready["status"]["conditions"] = {{{"type", "Ready"}, {"status", "True"}, {"reason", "Ready"}}};
    host.server.onJson("GET", kSandboxes, 200, list({ready}));
    REQUIRE(host.run({"agents", "list"}) == 0);
    CHECK(host.server.requestsTo("GET", kPods).empty());
}
