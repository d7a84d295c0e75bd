// Attack 67 C2: init containers filled four memory-backed emptyDirs and ended; their pages
// stayed, charged to no pod's cgroup on a node whose kubelet makes none (cgroupsPerQOS false),
// and limits passed for a pod holding 400 MiB beyond every container's limit.
#include <catch2/catch.hpp>
#include <string>

#include "rossoctl/verify/probe_site.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::testing;

namespace {

// verify's limits verdict for `pod` as the hardened sandbox's, on a node whose configz answers
// `kubeletconfig`.
json limitsOf(const json& kubeletconfig, const json& pod) {
    TestHost host;
    host.server.onJson("GET", "/api/v1/nodes/node-1/proxy/configz", 200,
                       {{"kubeletconfig", kubeletconfig}});
    verify_fixtures::serveHardened(host, "curl", verify_fixtures::sandbox(), pod, pod);
    verify_fixtures::runVerifyJson(host, {"--no-restart"});
    INFO(host.err.str());
    return verify_fixtures::verdicts(printedJson(host.out.str()))["limits"];
}

// Its static half for the hardened pod, with a memory-backed emptyDir or without.
json limitsWith(const json& kubeletconfig, bool memoryVolume = true) {
    json pod = verify_fixtures::hardenedPod("pod-uid-1");
    if (memoryVolume)
        pod["spec"]["volumes"].push_back({{"name", "m0"}, {"emptyDir", {{"medium", "Memory"}}}});
    return limitsOf(kubeletconfig, pod)["static"];
}

}  // namespace

TEST_CASE("attack 67 C2: a memory-backed emptyDir on a node with no pod cgroups",
          "[verify][false-pass]") {
    const json noPodCgroups = limitsWith({{"seccompDefault", true}, {"cgroupsPerQOS", false}});
    INFO(noPodCgroups.dump(2));
    CHECK(noPodCgroups["result"] == "unproven");
    CHECK_THAT(noPodCgroups["evidence"].dump(),
               Catch::Contains("memory-backed emptyDir m0 keeps what a container wrote after it "
                               "ends") &&
                   Catch::Contains("the node's kubelet runs with cgroupsPerQOS false"));
    // Pod cgroups (the kubelet's default, omitted): the pod's limit bounds them.
    CHECK(limitsWith({{"seccompDefault", true}})["result"] == "pass");
    // Huge pages too (review 68).
    {
        json pod = verify_fixtures::hardenedPod("pod-uid-1");
        pod["spec"]["volumes"].push_back(
            {{"name", "h"}, {"emptyDir", {{"medium", "HugePages-2Mi"}}}});
        CHECK(limitsOf({{"seccompDefault", true}, {"cgroupsPerQOS", false}},
                       pod)["static"]["result"] == "unproven");
    }
    // No such volume: nothing is held there.
    CHECK(limitsWith({{"seccompDefault", true}, {"cgroupsPerQOS", false}}, false)["result"] ==
          "pass");
}

TEST_CASE(
    "attack 67 C3: a container that restarted left shared memory outside every limit on a node "
    "with no pod cgroups",
    "[verify][false-pass]") {
    const json noPodCgroups = {{"seccompDefault", true}, {"cgroupsPerQOS", false}};
    json pod = verify_fixtures::hardenedPod("pod-uid-1");
    // Never restarted, only the gate ran: a pass that states what a later restart does.
    const json quiet = limitsOf(noPodCgroups, pod)["live"];
    INFO(quiet.dump(2));
    CHECK(quiet["result"] == "pass");
    CHECK_THAT(quiet["evidence"].dump(),
               Catch::Contains("no container has restarted or ended; the node's kubelet makes "
                               "no pod cgroups"));
    json restarted = pod;
    for (auto& status : restarted["status"]["containerStatuses"]) status["restartCount"] = 3;
    const json moved = limitsOf(noPodCgroups, restarted)["live"];
    INFO(moved.dump(2));
    CHECK(moved["result"] == "unproven");
    CHECK_THAT(moved["evidence"].dump(),
               Catch::Contains("has restarted 3 times") &&
                   Catch::Contains("charged to no limit since (attack 67 C3)"));
    // A tenant's init container runs and ends too (C2's, with shared memory).
    json init = pod;
    init["spec"]["initContainers"].push_back({{"name", "fill"}, {"image", "busybox"}});
    CHECK(limitsOf(noPodCgroups, init)["live"]["result"] == "unproven");
    // An earlier verify's probe that ended ran only verify's script, whatever its image; any
    // other ephemeral container that ended ran what its image holds.
    rossoctl::verify::TrustedProbeOptions options;
    options.image = "busybox:1.36";
    json probed = pod;
    probed["spec"]["ephemeralContainers"] =
        json::array({rossoctl::verify::trustedProbeContainer("rossoctl-probe-1a2b3c", options)});
    probed["status"]["ephemeralContainerStatuses"] = json::array(
        {{{"name", "rossoctl-probe-1a2b3c"}, {"state", {{"terminated", json::object()}}}}});
    CHECK(limitsOf(noPodCgroups, probed)["live"]["result"] == "pass");
    probed["spec"]["ephemeralContainers"][0]["command"] = json::array({"sh", "-c", "true"});
    CHECK(limitsOf(noPodCgroups, probed)["live"]["result"] == "unproven");
    // With pod cgroups, the pod's limit holds what is left: nothing to say.
    const json bounded = limitsOf({{"seccompDefault", true}}, restarted)["live"];
    CHECK(bounded["result"] == "pass");
    CHECK_THAT(bounded["evidence"].dump(), !Catch::Contains("pod cgroups"));
}
