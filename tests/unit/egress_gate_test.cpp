// Attack 56 E7: a runc pod's containers may send before the network engine enforces its
// policies. rossoctl's sandboxes start with the egress gate; verify trusts only that gate,
// exactly as rossoctl writes it, and only once it confirmed.
#include "rossoctl/model/egress_gate.hpp"

#include <catch2/catch.hpp>

#include "rossoctl/model/project.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "rossoctl/verify/egress_gate.hpp"
#include "rossoctl/verify/isolation.hpp"
#include "rossoctl/verify/probe_site.hpp"

using namespace rossoctl;
using nlohmann::json;

namespace {

json gatedSandbox(const std::string& gateImage) {
    model::SandboxOptions options;
    options.name = "orders";
    options.namespaceName = "team1";
    options.pod.image = "python:3.12";
    options.gateImage = gateImage;
    const std::chrono::system_clock::time_point now{std::chrono::hours(400'000)};
    options.shutdownTime = now + std::chrono::hours(24);
    return model::buildSandbox(options, now);
}

// The pod the template makes, its gate ended as given.
json gatedPod(const std::string& message, long exitCode = 0) {
    json pod;
    pod["metadata"]["name"] = "orders";
    pod["spec"] = gatedSandbox("busybox:1.36")["spec"]["podTemplate"]["spec"];
    pod["status"]["initContainerStatuses"] = json::array(
        {{{"name", "rossoctl-egress-gate"},
          {"image", "docker.io/library/busybox:1.36"},
          {"state",
           {{"terminated",
             {{"exitCode", exitCode}, {"reason", "Completed"}, {"message", message}}}}}}});
    return pod;
}

const std::string kHeld = "rossoctl-egress-gate: policies held after 4 tries\n";

std::string evidenceOf(const verify::Finding& finding) {
    std::string text;
    for (const auto& line : finding.evidence) text += line + "\n";
    return text;
}

}  // namespace

TEST_CASE("a sandbox's pod starts with the egress gate, hardened", "[model][gate]") {
    const json sandbox = gatedSandbox("registry.local/tools/busybox:1.36");
    const json& spec = sandbox["spec"]["podTemplate"]["spec"];
    REQUIRE(spec["initContainers"].is_array());
    const json& gate = spec["initContainers"][0];
    CHECK(gate["name"] == "rossoctl-egress-gate");
    CHECK(gate["image"] == "registry.local/tools/busybox:1.36");
    CHECK(gate["command"] == json(model::egressGateCommand()));
    CHECK(gate["command"][2].get<std::string>().find("KUBERNETES_SERVICE_HOST") !=
          std::string::npos);
    CHECK(gate["command"][2].get<std::string>().find("/dev/termination-log") != std::string::npos);
    const json& security = gate["securityContext"];
    CHECK(security["runAsNonRoot"] == true);
    CHECK(security["runAsUser"] == model::kSandboxUid);
    CHECK(security["allowPrivilegeEscalation"] == false);
    CHECK(security["privileged"] == false);
    CHECK(security["readOnlyRootFilesystem"] == true);
    CHECK(security["capabilities"]["drop"] == json::array({"ALL"}));
    CHECK(security["seccompProfile"]["type"] == "RuntimeDefault");
    CHECK(gate["resources"]["requests"].contains("cpu"));
    CHECK(gate["resources"]["requests"].contains("memory"));
    CHECK(gate["resources"]["limits"].contains("cpu"));
    CHECK(gate["resources"]["limits"].contains("memory"));
    CHECK_FALSE(gate.contains("env"));
    CHECK_FALSE(gate.contains("volumeMounts"));
    CHECK(model::egressGateMismatch(spec, "registry.local/tools/busybox:1.36").empty());
}

TEST_CASE("a sandbox without a gate image has no gate", "[model][gate]") {
    const json sandbox = gatedSandbox("");
    CHECK_FALSE(sandbox["spec"]["podTemplate"]["spec"].contains("initContainers"));
    CHECK(model::recordedGateImage(json{{"metadata", json::object()}}).empty());
}

TEST_CASE("the token ServiceAccount admission mounts into the gate does not unmake it",
          "[model][gate]") {
    json spec = {{"enableServiceLinks", false}};
    model::addEgressGate(spec, "busybox:1.36");
    spec["initContainers"][0]["volumeMounts"] =
        json::array({{{"name", "kube-api-access-x1"},
                      {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
                      {"readOnly", true}}});
    CHECK(model::egressGateMismatch(spec, "busybox:1.36").empty());
    spec["initContainers"][0]["volumeMounts"].push_back(
        {{"name", "preload"}, {"mountPath", "/etc/ld.so.preload"}});
    CHECK(model::egressGateMismatch(spec, "busybox:1.36") == "it sets volumeMounts");
}

TEST_CASE("the gate goes first, once, before init containers already there", "[model][gate]") {
    json spec = {{"initContainers", json::array({{{"name", "setup"}, {"image", "x"}},
                                                 {{"name", "rossoctl-egress-gate"}}})}};
    model::addEgressGate(spec, "busybox:1.36");
    REQUIRE(spec["initContainers"].size() == 2);
    CHECK(spec["initContainers"][0] == model::egressGateContainer("busybox:1.36"));
    CHECK(spec["initContainers"][1]["name"] == "setup");
}

TEST_CASE("the project records its gate image; its absence means the default", "[model][gate]") {
    model::ProjectOptions options;
    options.name = "team1";
    options.gateImage = "registry.local/busybox:1.36";
    const json ns = model::buildProjectNamespace(options);
    CHECK(ns["metadata"]["annotations"]["rossoctl.dev/gate-image"] ==
          "registry.local/busybox:1.36");
    CHECK(model::gateImageOf(ns) == "registry.local/busybox:1.36");
    CHECK(model::gateImageOf(json{{"metadata", json::object()}}) == "busybox:1.36");
    CHECK(model::gateImageOf(std::nullopt) == "busybox:1.36");
}

TEST_CASE("verify: a gate as rossoctl writes it that saw the policies held closes the window",
          "[verify][gate]") {
    const auto finding = verify::egressGateLive(gatedPod(kHeld), "busybox:1.36");
    CHECK(finding.verdict == verify::Verdict::Pass);
    CHECK(evidenceOf(finding) ==
          "no container started before the policies held: rossoctl's egress gate saw them "
          "enforced (4 tries)\n");
    CHECK(verify::egressGateStatic(gatedPod(kHeld), "busybox:1.36").verdict ==
          verify::Verdict::Pass);
}

TEST_CASE("verify: without a confirmed gate, the start window leaves egress unproven",
          "[verify][gate]") {
    json pod = gatedPod(kHeld);
    std::string why;
    SECTION("no gate at all") {
        pod["spec"].erase("initContainers");
        pod["status"].erase("initContainerStatuses");
        why =
            "this pod has no rossoctl egress gate (it has no init container); rossoctl writes "
            "the gate into a Sandbox `agents import` makes in a namespace `project create` "
            "made (run it again on a project an older rossoctl made): import it again there";
    }
    SECTION("the gate's command edited to true") {
        pod["spec"]["initContainers"][0]["command"] = json::array({"true"});
        why = "this pod has no rossoctl egress gate (its command is not the gate's)";
    }
    SECTION("another image") {
        pod["spec"]["initContainers"][0]["image"] = "tenant.example/busybox:1.36";
        why = "its image is \"tenant.example/busybox:1.36\", not the project's gate image";
    }
    SECTION("an env that points it elsewhere") {
        pod["spec"]["initContainers"][0]["env"] =
            json::array({{{"name", "KUBERNETES_SERVICE_HOST"}, {"value", "192.0.2.1"}}});
        why = "(it sets env)";
    }
    SECTION("a mount over its tools") {
        pod["spec"]["initContainers"][0]["volumeMounts"] =
            json::array({{{"name", "tools"}, {"mountPath", "/bin"}}});
        why = "(it sets volumeMounts)";
    }
    SECTION("a sidecar started before it") {
        auto& inits = pod["spec"]["initContainers"];
        inits.insert(
            inits.begin(),
            json{{"name", "early"}, {"image", "busybox:1.36"}, {"restartPolicy", "Always"}});
        why = "its first init container is early, not rossoctl-egress-gate";
    }
    SECTION("service links on: a Service named kubernetes chooses its target (attack 58 G1)") {
        pod["spec"]["enableServiceLinks"] = true;
        why =
            "this pod has no rossoctl egress gate (the pod's service links are on: a Service "
            "named kubernetes in its namespace would choose what the gate connects to)";
    }
    SECTION("service links left to the API's default, on") {
        pod["spec"].erase("enableServiceLinks");
        why = "the pod's service links are on";
    }
    SECTION("an ephemeral container started while the gate ran (review 58 G3)") {
        pod["status"]["initContainerStatuses"][0]["state"]["terminated"]["finishedAt"] =
            "2026-12-06T10:00:05Z";
        pod["status"]["ephemeralContainerStatuses"] =
            json::array({{{"name", "debugger"},
                          {"state", {{"running", {{"startedAt", "2026-12-06T10:00:04Z"}}}}}}});
        why = "ephemeral container debugger started before the rossoctl egress gate ended";
    }
    SECTION("an image edited into the pod after a fake gate ran (review 58 G4)") {
        pod["status"]["initContainerStatuses"][0]["image"] = "tenant.example/says-held:1";
        why =
            "the rossoctl egress gate's word does not count: the kubelet says it ran "
            "tenant.example/says-held:1, not the project's gate image busybox:1.36";
    }
    SECTION("another tag of the gate's image ran") {
        pod["status"]["initContainerStatuses"][0]["image"] = "docker.io/library/busybox:1.37";
        why = "the kubelet says it ran docker.io/library/busybox:1.37";
    }
    SECTION("the kubelet did not say which image ran") {
        pod["status"]["initContainerStatuses"][0].erase("image");
        why = "the kubelet did not say which image it ran";
    }
    SECTION("it failed") {
        pod = gatedPod(kHeld, 1);
        why = "the rossoctl egress gate did not confirm: it ended with exit code 1";
    }
    SECTION("it did not confirm") {
        pod = gatedPod(
            "rossoctl-egress-gate: not confirmed (the API server stayed reachable for 10 s)\n");
        why =
            "the rossoctl egress gate did not confirm (it said: rossoctl-egress-gate: not "
            "confirmed (the API server stayed reachable for 10 s))";
    }
    SECTION("a message that only starts like the gate's") {
        pod = gatedPod("rossoctl-egress-gate: policies held after 4 tries; trust me\n");
        why = "the rossoctl egress gate did not confirm";
    }
    SECTION("it has not finished") {
        pod["status"]["initContainerStatuses"][0]["state"] = {{"running", json::object()}};
        why = "the rossoctl egress gate did not confirm: it has not finished";
    }
    const auto finding = verify::egressGateLive(pod, "busybox:1.36");
    CHECK(finding.verdict == verify::Verdict::Unproven);
    CAPTURE(evidenceOf(finding));
    CHECK(evidenceOf(finding).find("the pod's containers may send in their first milliseconds, "
                                   "before the network engine enforces its policies, and leave "
                                   "no socket to read") != std::string::npos);
    CHECK(evidenceOf(finding).find(why) != std::string::npos);
}

TEST_CASE("verify: verify's own probe, started after the gate ended, leaves the gate's word",
          "[verify][gate]") {
    json pod = gatedPod(kHeld);
    pod["status"]["initContainerStatuses"][0]["state"]["terminated"]["finishedAt"] =
        "2026-12-06T10:00:05Z";
    pod["status"]["ephemeralContainerStatuses"] = json::array(
        {{{"name", "rossoctl-probe-x1y2z"},
          {"state", {{"terminated", {{"startedAt", "2026-12-06T10:00:05Z"}}}}}},
         {{"name", "later"}, {"state", {{"running", {{"startedAt", "2026-12-06T10:00:09Z"}}}}}},
         {{"name", "waiting"}, {"state", {{"waiting", json::object()}}}}});
    verify::TrustedProbeOptions probe;
    probe.image = "curlimages/curl:8";
    pod["spec"]["ephemeralContainers"] =
        json::array({verify::trustedProbeContainer("rossoctl-probe-x1y2z", probe)});
    const verify::ProbeSite ours{"rossoctl-probe-x1y2z", "curlimages/curl:8"};
    CHECK(verify::egressGateLive(pod, "busybox:1.36", ours).verdict == verify::Verdict::Pass);
    // A tenant's container under verify's prefix is not verify's (attack 59 D2): by its spec,
    // and with no trusted probe in this run none is.
    CHECK(verify::egressGateLive(pod, "busybox:1.36").verdict == verify::Verdict::Unproven);
    // Review 61 #8: a lookalike of the probe's spec under another name is not this run's.
    json lookalike = pod;
    lookalike["spec"]["ephemeralContainers"][0]["name"] = "rossoctl-probe-other";
    lookalike["status"]["ephemeralContainerStatuses"][0]["name"] = "rossoctl-probe-other";
    CHECK(verify::egressGateLive(lookalike, "busybox:1.36", ours).verdict ==
          verify::Verdict::Unproven);
    pod["spec"]["ephemeralContainers"][0]["image"] = "tenant.example/probe:1";
    CHECK(verify::egressGateLive(pod, "busybox:1.36", ours).verdict == verify::Verdict::Unproven);
}

TEST_CASE("verify: the image the kubelet names is the gate image in any of its spellings",
          "[verify][gate]") {
    for (const auto& [gate, ran] : std::vector<std::pair<std::string, std::string>>{
             {"busybox:1.36", "docker.io/library/busybox:1.36"},
             {"busybox:1.36", "index.docker.io/library/busybox:1.36"},
             {"docker.io/busybox", "docker.io/library/busybox:latest"},
             {"registry.local:5000/tools/busybox:1.36",
              "registry.local:5000/tools/busybox:1.36"}}) {
        INFO(gate << " ran as " << ran);
        json pod = gatedPod(kHeld);
        pod["spec"]["initContainers"][0]["image"] = gate;
        pod["status"]["initContainerStatuses"][0]["image"] = ran;
        CHECK(verify::egressGateLive(pod, gate).verdict == verify::Verdict::Pass);
    }
}

TEST_CASE("verify: a gate pinned by digest is judged by the digest the kubelet says it pulled",
          "[verify][gate]") {
    // containerd names such an image by its config ID (or a tag it has on the node); imageID
    // carries the digest (review 59 #7).
    const std::string gate = "busybox@sha256:ab12";
    json pod = gatedPod(kHeld);
    pod["spec"]["initContainers"][0]["image"] = gate;
    auto& status = pod["status"]["initContainerStatuses"][0];
    status["image"] = "sha256:77ee";
    status["imageID"] = "docker.io/library/busybox@sha256:ab12";
    CAPTURE(evidenceOf(verify::egressGateLive(pod, gate)));
    CHECK(verify::egressGateLive(pod, gate).verdict == verify::Verdict::Pass);
    status["imageID"] = "docker.io/tenant/says-held@sha256:cd34";
    const auto finding = verify::egressGateLive(pod, gate);
    CHECK(finding.verdict == verify::Verdict::Unproven);
    CHECK(evidenceOf(finding).find("the kubelet says it ran the image "
                                   "docker.io/tenant/says-held@sha256:cd34") != std::string::npos);
    status.erase("imageID");
    CHECK(verify::egressGateLive(pod, gate).verdict == verify::Verdict::Unproven);
}

TEST_CASE("verify: a template without the gate makes pods whose first milliseconds are open",
          "[verify][gate]") {
    json pod = gatedPod(kHeld);
    pod["spec"]["initContainers"][0]["command"] = json::array({"true"});
    const auto finding = verify::egressGateStatic(pod, "busybox:1.36");
    CHECK(finding.verdict == verify::Verdict::Unproven);
    CHECK(evidenceOf(finding).find("its pods have no rossoctl egress gate") != std::string::npos);
    CHECK(evidenceOf(finding).find("import it again there") != std::string::npos);
}

namespace {

// What verify read of the `kubernetes` Service: its cluster IP, or nothing (forbidden).
verify::EgressInputs apiServerAt(const std::vector<std::string>& clusterIPs) {
    verify::EgressInputs egress;
    for (const auto& ip : clusterIPs) egress.apiServerTargets.emplace_back(ip, 443);
    egress.apiServerServiceCount = clusterIPs.size();
    egress.apiServerTargets.emplace_back("172.18.0.2", 6443);  // an endpoint: not the gate's
    return egress;
}

}  // namespace

TEST_CASE("verify: a Service claiming the API server's address speaks for the gate's target",
          "[verify][gate]") {
    verify::ExternalNames services;
    services.read = true;
    services.ns = "team1";
    services.names.push_back({"team1", "web", "10.96.0.20", {}, {}, {"192.0.2.7", "172.18.0.2"}});
    CHECK(verify::egressGateTargetClaims(services, apiServerAt({"10.96.0.1"})).verdict ==
          verify::Verdict::Pass);
    std::string claimed = "10.96.0.1";
    SECTION("as an external IP (review 58 G2)") {
        services.names.push_back({"team1", "decoy", "10.96.0.21", {}, {}, {"10.96.0.1"}});
    }
    SECTION("as a load balancer's address, in another namespace") {
        services.names.push_back({"other", "lb", "10.96.0.22", {}, {}, {"192.0.2.9", "10.96.0.1"}});
    }
    SECTION("spelled with leading zeros, as the API server accepts it (review 59 #1)") {
        services.names.push_back({"team1", "decoy", "10.96.0.21", {}, {}, {"010.096.000.001"}});
    }
    SECTION("spelled as an IPv4-mapped IPv6 address") {
        services.names.push_back({"team1", "decoy", "10.96.0.21", {}, {}, {"::ffff:10.96.0.1"}});
    }
    SECTION("an IPv6 API server address in another spelling") {
        services.names.push_back(
            {"team1", "decoy", "10.96.0.21", {}, {}, {"FD00:10:96:0:0:0:0:1"}});
        claimed = "fd00:10:96::1";
    }
    auto egress = apiServerAt({"10.96.0.1"});
    if (claimed != "10.96.0.1") egress = apiServerAt({"10.96.0.1", "fd00:10:96::1"});
    const auto finding = verify::egressGateTargetClaims(services, egress);
    CHECK(finding.verdict == verify::Verdict::Unproven);
    CAPTURE(evidenceOf(finding));
    CHECK(evidenceOf(finding).find("claims " + claimed +
                                   ", the API server's address the gate connects to, as an "
                                   "external IP") != std::string::npos);
}

TEST_CASE("verify: with the API server's address unread, any external IP may be it",
          "[verify][gate]") {
    verify::ExternalNames services;
    services.read = true;
    services.names.push_back({"team1", "web", "10.96.0.20", {}, {}, {}});
    CHECK(verify::egressGateTargetClaims(services, apiServerAt({})).verdict ==
          verify::Verdict::Pass);
    services.names.push_back({"team1", "decoy", "10.96.0.21", {}, {}, {"10.96.0.1"}});
    const auto finding = verify::egressGateTargetClaims(services, apiServerAt({}));
    CHECK(finding.verdict == verify::Verdict::Unproven);
    CHECK(evidenceOf(finding).find("the API server's address the gate connects to was not read") !=
          std::string::npos);
}

TEST_CASE(
    "verify: an external IP verify cannot read, or the namespace's Services unread, leave "
    "the gate's target unproven",
    "[verify][gate]") {
    verify::ExternalNames services;
    services.read = true;
    services.ns = "team1";
    SECTION("an address of five-digit octets") {
        services.names.push_back({"team1", "decoy", "10.96.0.21", {}, {}, {"00010.96.0.1"}});
        CHECK(evidenceOf(verify::egressGateTargetClaims(services, apiServerAt({"10.96.0.1"})))
                  .find("an address verify cannot read") != std::string::npos);
    }
    SECTION("the pod's namespace's Services refused") {
        services.problem = "services is forbidden";
        CHECK(evidenceOf(verify::egressGateTargetClaims(services, apiServerAt({"10.96.0.1"})))
                  .find("the Services of namespace team1 were not read") != std::string::npos);
    }
    CHECK(verify::egressGateTargetClaims(services, apiServerAt({"10.96.0.1"})).verdict ==
          verify::Verdict::Unproven);
}

TEST_CASE("verify: a RuntimeClass named or handled gvisor or runsc is gVisor's", "[verify]") {
    json pod = {{"spec", {{"runtimeClassName", "sandboxed"}}}};
    verify::KernelInputs inputs;
    CHECK_FALSE(verify::runsUnderGvisor(pod, inputs));
    inputs.runtimeClass = json{{"handler", "runsc"}};
    CHECK(verify::runsUnderGvisor(pod, inputs));
    CHECK(verify::runsUnderGvisor({{"spec", {{"runtimeClassName", "gVisor"}}}}, {}));
    CHECK_FALSE(verify::runsUnderGvisor({{"spec", {{"runtimeClassName", "kata"}}}}, {}));
}
