// Attack 56 L2: a user who may not read the pod's node got "limits pass" for limits beyond it;
// what the node was not read for is unproven, with a line saying so, never a silent pass.
#include <catch2/catch.hpp>

#include "rossoctl/kube/timestamp.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;

namespace {

// Three containers of cpu 30 / memory 20Gi: beyond a 32-cpu node together (attack 55 L1b).
json threeBigContainers(json spec) {
    json container = spec["containers"][0];
    container["resources"]["limits"] = {{"cpu", "30"}, {"memory", "20Gi"}};
    spec["containers"] = json::array();
    for (const char* name : {"agent", "second", "third"}) {
        container["name"] = name;
        spec["containers"].push_back(container);
    }
    return spec;
}

json bigQuota() {
    return json::parse(R"([{"metadata": {"name": "q"},
        "spec": {"hard": {"limits.cpu": "100", "limits.memory": "100Gi"}}}])");
}

verify::DeadlineBound today() {
    return {*kube::parseTimestamp("2029-12-31T12:00:00Z"), std::chrono::hours(24),
            "the project's lifetime"};
}

bool mentions(const verify::Finding& finding, const std::string& text) {
    for (const auto& line : finding.evidence)
        if (line.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("attack 56 L2: the node not read leaves whether the limits fit it unproven",
          "[verify][false-pass]") {
    json pod = hardenedPod("pod-uid-1");
    pod["spec"] = threeBigContainers(pod["spec"]);
    SECTION("not read: unproven, with why") {
        const verify::Finding finding =
            verify::limitsStatic(pod, json::object(), bigQuota(), today(), nullptr,
                                 "node local-node was not read (forbidden)");
        CHECK(finding.verdict == verify::Verdict::Unproven);
        CHECK(mentions(finding,
                       "node local-node was not read (forbidden): whether the limits fit "
                       "it is not known"));
    }
    SECTION("read without a capacity: unproven") {
        const json node = {{"metadata", {{"name", "local-node"}}}, {"status", json::object()}};
        const verify::Finding finding =
            verify::limitsStatic(pod, json::object(), bigQuota(), today(), node);
        CHECK(finding.verdict == verify::Verdict::Unproven);
        CHECK(mentions(finding, "node local-node gives no cpu capacity"));
    }
    SECTION("read with its capacity: beyond it fails, within it passes") {
        const json node = json::parse(R"({"metadata": {"name": "local-node"},
            "status": {"capacity": {"cpu": "32", "memory": "24590812Ki"}}})");
        CHECK(verify::limitsStatic(pod, json::object(), bigQuota(), today(), node).verdict ==
              verify::Verdict::Fail);
        json small = hardenedPod("pod-uid-1");
        CHECK(verify::limitsStatic(small, json::object(), bigQuota(), today(), node).verdict ==
              verify::Verdict::Pass);
    }
    SECTION("a limit that fails still fails when the node is not read") {
        json zero = hardenedPod("pod-uid-1");
        zero["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "0";
        CHECK(verify::limitsStatic(zero, json::object(), bigQuota(), today(), nullptr, "node x")
                  .verdict == verify::Verdict::Fail);
    }
}

TEST_CASE("attack 56 L2: a user refused the node gets limits unproven, not pass",
          "[verify][false-pass]") {
    json box = sandbox();
    json pod = hardenedPod("pod-uid-1");
    json next = hardenedPod("pod-uid-2");
    box["spec"]["podTemplate"]["spec"] = threeBigContainers(box["spec"]["podTemplate"]["spec"]);
    for (json* each : {&pod, &next}) {
        (*each)["spec"] = threeBigContainers((*each)["spec"]);
        (*each)["spec"]["nodeName"] = "local-node";
        for (const char* name : {"second", "third"})
            (*each)["status"]["containerStatuses"].push_back(
                {{"name", name}, {"state", {{"running", json::object()}}}});
    }
    // Each container's cgroup shows its limits: cpu 30, memory 20Gi.
    auto answers = [plain = hardenedPodAnswers("curl")](const std::vector<std::string>& command) {
        if (command.size() > 2 && command[2].find("memory.max") != std::string::npos)
            return testing::execRan(
                "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=21474836480\n"
                "rossoctl-cpu=/sys/fs/cgroup/cpu.max 3000000 100000\n",
                "", 0);
        return plain(command);
    };
    TestHost host;
    serveHardened(host, "curl", box, pod, next, answers);
    host.server.on("GET", "/api/v1/nodes/local-node", 403,
                   statusBody(403, "Forbidden",
                              "nodes \"local-node\" is forbidden: User \"tenant\" cannot get "
                              "resource \"nodes\""));
    const int exitCode = runVerifyJson(host);
    INFO(host.out.str() + host.err.str());
    const json checks = verdicts(testing::printedJson(host.out.str()));
    CHECK(checks["limits"]["result"] == "unproven");
    CHECK_THAT(checks["limits"]["static"]["evidence"].dump(),
               Catch::Contains("node local-node was not read (forbidden): whether the limits fit "
                               "it is not known"));
    CHECK(exitCode == 3);
}

TEST_CASE("a replacement scheduled on another node is judged on that node's capacity",
          "[verify][false-pass]") {
    // The first pod fits node-1 (32 cpu); the replacement verify's restart made landed on a
    // node of 250m, where its 500m bound nothing. Judged on node-1, it passed.
    json next = hardenedPod("pod-uid-2");
    next["spec"]["nodeName"] = "small-node";
    TestHost host;
    serveHardened(host, "curl", sandbox(), hardenedPod("pod-uid-1"), next);
    host.server.onJson("GET", "/api/v1/nodes/small-node", 200, json::parse(R"({
        "metadata": {"name": "small-node"},
        "status": {"capacity": {"cpu": "250m", "memory": "4Gi", "pods": "110"}}})"));
    const int exitCode = runVerifyJson(host);
    INFO(host.out.str() + host.err.str());
    const json checks = verdicts(testing::printedJson(host.out.str()));
    CHECK(checks["limits"]["result"] == "fail");
    CHECK_THAT(checks["limits"]["static"]["evidence"].dump(),
               Catch::Contains("replacement") && Catch::Contains("small-node"));
    CHECK(exitCode == 3);
}
