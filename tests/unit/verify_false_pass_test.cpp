// The false passes of issue 35, offline: each sandbox here got exit 0 from `sandbox verify`
// before the fix; each check named must now fail or be unproven, with evidence saying why.
#include <catch2/catch.hpp>

#include "rossoctl/kube/base64.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::Listener;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;

namespace {

json agentToken() {
    return {
        {"iss", "https://kubernetes.default.svc.cluster.local"},
        {"sub", "system:serviceaccount:team1:agent-bot"},
        {"kubernetes.io", {{"namespace", "team1"}, {"serviceaccount", {{"name", "agent-bot"}}}}}};
}

struct Run {
    int exitCode = 0;
    json checks;
    std::string text;
};

// verify of sandbox `box` whose pod is `pod` (replaced by `next`), as JSON by check.
Run runVerify(TestHost& host, const json& box, const json& pod, const json& next,
              const std::vector<std::string>& extra = {}) {
    serveHardened(host, "curl", box, pod, next);
    Run run;
    run.exitCode = runVerifyJson(host, extra);
    run.text = host.out.str() + host.err.str();
    run.checks = verdicts(testing::printedJson(host.out.str()));
    return run;
}

std::string evidence(const json& check) {
    return check["static"]["evidence"].dump() + check["live"]["evidence"].dump();
}

}  // namespace

TEST_CASE("false pass 2: a zero cpu limit is no limit", "[verify][false-pass]") {
    json box = sandbox();
    json pod = hardenedPod("pod-uid-1");
    for (json* spec : {&box["spec"]["podTemplate"]["spec"], &pod["spec"]})
        (*spec)["containers"][0]["resources"]["limits"]["cpu"] = "0";
    TestHost host;
    const Run run = runVerify(host, box, pod, pod, {"--no-restart"});
    INFO(run.text);
    CHECK(run.exitCode == 3);
    CHECK(run.checks["limits"]["result"] == "fail");
    CHECK_THAT(evidence(run.checks["limits"]), Catch::Contains("cpu limit 0 is no limit"));
}

TEST_CASE("false pass 3: a sidecar without limits fails limits", "[verify][false-pass]") {
    json box = sandbox();
    json pod = hardenedPod("pod-uid-1");
    const json sidecar = {{"name", "sidecar"},
                          {"resources", {{"limits", {{"cpu", "0"}, {"memory", "0"}}}}}};
    box["spec"]["podTemplate"]["spec"]["containers"].push_back(sidecar);
    pod["spec"]["containers"].push_back(sidecar);
    pod["status"]["containerStatuses"].push_back(
        {{"name", "sidecar"}, {"state", {{"running", json::object()}}}});
    TestHost host;
    const Run run = runVerify(host, box, pod, pod, {"--no-restart"});
    INFO(run.text);
    CHECK(run.exitCode == 3);
    CHECK(run.checks["limits"]["result"] == "fail");
    CHECK_THAT(evidence(run.checks["limits"]),
               Catch::Contains("container sidecar has memory limit 0 is no limit"));
    // Each running container's cgroup is read, the sidecar's too.
    std::vector<std::string> probed;
    for (const auto& session : host.server.execs)
        if (session.command.size() > 2 &&
            session.command[2].find("memory.max") != std::string::npos)
            probed.push_back(session.container);
    std::sort(probed.begin(), probed.end());
    CHECK(probed == std::vector<std::string>{"agent", "sidecar"});
}

TEST_CASE("false pass 4: the Sandbox's template and the replacement pod are judged",
          "[verify][false-pass]") {
    SECTION("automount patched to true in the template after the pod started") {
        json box = sandbox();
        box["spec"]["podTemplate"]["spec"]["automountServiceAccountToken"] = true;
        TestHost host;
        const Run run = runVerify(host, box, hardenedPod("pod-uid-1"), hardenedPod("pod-uid-2"),
                                  {"--no-restart"});
        INFO(run.text);
        CHECK(run.exitCode == 3);
        CHECK(run.checks["service-account-token"]["result"] == "fail");
        CHECK_THAT(evidence(run.checks["service-account-token"]),
                   Catch::Contains("the Sandbox's spec.podTemplate: pod (next pod of sandbox "
                                   "orders) sets automountServiceAccountToken: true"));
    }
    SECTION("the pod verify's own restart made carries the token") {
        json next = hardenedPod("pod-uid-2");
        next["spec"]["automountServiceAccountToken"] = true;
        TestHost host;
        const Run run = runVerify(host, sandbox(), hardenedPod("pod-uid-1"), next);
        INFO(run.text);
        CHECK(run.exitCode == 3);
        CHECK(run.checks["service-account-token"]["result"] == "fail");
        CHECK_THAT(evidence(run.checks["service-account-token"]),
                   Catch::Contains("replacement pod orders (uid pod-uid-") &&
                       Catch::Contains("sets automountServiceAccountToken: true"));
    }
}

TEST_CASE("false pass 1: a working token in an ordinary Secret or ConfigMap",
          "[verify][false-pass]") {
    json box = sandbox();
    json pod = hardenedPod("pod-uid-1");
    for (json* spec : {&box["spec"]["podTemplate"]["spec"], &pod["spec"]}) {
        (*spec)["volumes"].push_back({{"name", "notes"}, {"secret", {{"secretName", "notes"}}}});
        (*spec)["containers"][0]["env"] =
            json::array({{{"name", "CONFIG"},
                          {"valueFrom",
                           {{"configMapKeyRef", {{"name", "settings"}, {"key", "kubeconfig"}}}}}}});
    }
    TestHost host;
    const std::string secrets = "/api/v1/namespaces/team1/secrets";
    const std::string configMaps = "/api/v1/namespaces/team1/configmaps";
    SECTION("a copied token in a Secret") {
        host.server.onJson("GET", secrets + "/notes", 200,
                           {{"metadata", {{"name", "notes"}}},
                            {"type", "Opaque"},
                            {"data", {{"bot", kube::base64Encode(jwt(agentToken()))}}}});
        host.server.onJson("GET", configMaps + "/settings", 200,
                           {{"metadata", {{"name", "settings"}}}, {"data", {{"mode", "fast"}}}});
        const Run run = runVerify(host, box, pod, pod, {"--no-restart"});
        INFO(run.text);
        CHECK(run.checks["service-account-token"]["result"] == "fail");
        const std::string why = evidence(run.checks["service-account-token"]);
        CHECK_THAT(why, Catch::Contains("secret/notes key bot holds a Kubernetes service-account "
                                        "token (iss https://kubernetes.default.svc.cluster.local, "
                                        "sub system:serviceaccount:team1:agent-bot)"));
        CHECK(why.find(jwt(agentToken())) == std::string::npos);  // never the value
    }
    SECTION("a kubeconfig in a ConfigMap") {
        host.server.onJson("GET", secrets + "/notes", 200, {{"metadata", {{"name", "notes"}}}});
        host.server.onJson(
            "GET", configMaps + "/settings", 200,
            {{"metadata", {{"name", "settings"}}},
             {"data",
              {{"kubeconfig",
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
                "https://api.test:6443\nusers:\n- name: u\n  user:\n    token: abc\n"}}}});
        const Run run = runVerify(host, box, pod, pod, {"--no-restart"});
        INFO(run.text);
        CHECK(run.checks["service-account-token"]["result"] == "fail");
        CHECK_THAT(evidence(run.checks["service-account-token"]),
                   Catch::Contains("configmap/settings key kubeconfig holds a kubeconfig"));
    }
    SECTION("a Secret this user may not read is unproven, never a pass") {
        host.server.on("GET", secrets + "/notes", 403,
                       statusBody(403, "Forbidden", "secrets \"notes\" is forbidden"));
        host.server.onJson("GET", configMaps + "/settings", 200,
                           {{"metadata", {{"name", "settings"}}}});
        const Run run = runVerify(host, box, pod, pod, {"--no-restart"});
        INFO(run.text);
        CHECK(run.checks["service-account-token"]["result"] == "unproven");
        CHECK_THAT(evidence(run.checks["service-account-token"]),
                   Catch::Contains("secret/notes could not be read"));
    }
}

TEST_CASE("false pass 6: a denial the pod's own processes could write is no pass",
          "[verify][false-pass]") {
    TestHost host;
    const Run run = runVerify(host, sandbox(), hardenedPod("pod-uid-1"), hardenedPod("pod-uid-2"));
    INFO(run.text);
    CHECK(run.exitCode == 3);
    CHECK(run.checks["egress"]["result"] == "unproven");
    CHECK_THAT(evidence(run.checks["egress"]),
               Catch::Contains("from the pod, forgeable") && Catch::Contains("--trusted-probe"));
    for (const char* id : {"service-account-token", "limits", "nothing-survives"}) {
        INFO(id);
        CHECK(run.checks[id]["result"] == "pass");
    }
}

namespace {

// The attacker's template patch (review 35 H1): host network and IPC, root, four capabilities.
void hostPatch(json& spec) {
    spec["hostNetwork"] = true;
    spec["hostIPC"] = true;
    spec["securityContext"] = {{"runAsUser", 0}, {"seccompProfile", {{"type", "RuntimeDefault"}}}};
    spec["containers"][0]["securityContext"] = {
        {"allowPrivilegeEscalation", true},
        {"capabilities", {{"add", {"SYS_ADMIN", "NET_ADMIN", "SYS_PTRACE", "NET_RAW"}}}}};
}

}  // namespace

TEST_CASE("review 35 H1: host access in the template or the replacement pod is judged",
          "[verify][false-pass]") {
    SECTION("the template patched after the pod started") {
        json box = sandbox();
        hostPatch(box["spec"]["podTemplate"]["spec"]);
        TestHost host;
        const Run run = runVerify(host, box, hardenedPod("pod-uid-1"), hardenedPod("pod-uid-2"),
                                  {"--no-restart"});
        INFO(run.text);
        CHECK(run.exitCode == 3);
        CHECK(run.checks["host-isolation"]["result"] == "fail");
        CHECK_THAT(evidence(run.checks["host-isolation"]),
                   Catch::Contains("the Sandbox's spec.podTemplate: pod: spec.hostNetwork: true"));
        CHECK(run.checks["egress"]["result"] == "fail");
        CHECK_THAT(evidence(run.checks["egress"]),
                   Catch::Contains("the Sandbox's spec.podTemplate: pod: spec.hostNetwork: true"));
    }
    SECTION("the pod verify's restart made runs on the host network as root") {
        json next = hardenedPod("pod-uid-2");
        hostPatch(next["spec"]);
        TestHost host;
        const Run run = runVerify(host, sandbox(), hardenedPod("pod-uid-1"), next);
        INFO(run.text);
        CHECK(run.exitCode == 3);
        CHECK(run.checks["host-isolation"]["result"] == "fail");
        CHECK_THAT(
            evidence(run.checks["host-isolation"]),
            Catch::Contains("replacement pod orders (uid pod-uid-…): pod: spec.hostNetwork"));
        CHECK(run.checks["egress"]["result"] == "fail");
        CHECK_THAT(
            evidence(run.checks["egress"]),
            Catch::Contains("replacement pod orders (uid pod-uid-…): pod: spec.hostNetwork"));
    }
    SECTION("a template image outside the allowed registries") {
        json box = sandbox();
        box["spec"]["podTemplate"]["spec"]["containers"][0]["image"] =
            "docker.io/curlimages/curl:8";
        json pod = hardenedPod("pod-uid-1");
        pod["spec"]["containers"][0]["image"] =
            "docker.io/library/python@sha256:"
            "ed3a19653d992ed29b9cf8f5819dd797715ac4fbe2aaed8f22a98e3aceb2417e";
        TestHost host;
        host.server.onJson(
            "GET", "/api/v1/namespaces/team1", 200,
            {{"metadata",
              {{"name", "team1"},
               {"annotations", {{"rossoctl.dev/allowed-registries", "docker.io/library"}}}}}});
        const Run run = runVerify(host, box, pod, pod, {"--no-restart"});
        INFO(run.text);
        CHECK(run.checks["image-provenance"]["result"] == "fail");
        CHECK_THAT(evidence(run.checks["image-provenance"]),
                   Catch::Contains("the Sandbox's spec.podTemplate: container agent"));
    }
}

TEST_CASE("review 35 H5: a decoy pod owned by the Sandbox is never judged instead of its own",
          "[verify][false-pass]") {
    // The decoy: newer, hardened, owned by the Sandbox and carrying its selector's label.
    json decoy = hardenedPod("pod-uid-decoy");
    decoy["metadata"]["name"] = "orders-decoy-1";
    decoy["metadata"]["creationTimestamp"] = "2023-11-14T23:00:00Z";
    json weak = hardenedPod("pod-uid-1");
    weak["spec"]["automountServiceAccountToken"] = true;
    TestHost host;
    host.server.onJson("GET", kPods, 200, list({weak, decoy}));  // before serveHardened's list
    serveHardened(host, "curl", sandbox(), weak, weak);
    host.server.onExec("team1", "orders-decoy-1", hardenedPodAnswers("curl"));
    const int exitCode = runVerifyJson(host, {"--no-restart"});
    const json checks = verdicts(testing::printedJson(host.out.str()));
    INFO(host.out.str() + host.err.str());
    CHECK(exitCode == 3);
    CHECK(testing::printedJson(host.out.str())["pod"] == "orders");
    CHECK(checks["service-account-token"]["result"] == "fail");
    for (const char* id : {"egress", "limits", "nothing-survives", "host-isolation"}) {
        INFO(id);
        CHECK(checks[id]["result"] != "pass");
        CHECK_THAT(evidence(checks[id]),
                   Catch::Contains("pod orders-decoy-1 is also owned by or selected for sandbox "
                                   "orders; verify judged pod orders"));
    }
    for (const auto& session : host.server.execs) CHECK(session.pod == "team1/orders");
}

// Review 47b finding 1: a pod anyone may create beside the replacement (the Sandbox's label and
// a plain ownerReference) and it was the one restart took and verify read the canaries in.
TEST_CASE("review47b: a pod beside the replacement leaves nothing-survives unproven",
          "[verify][false-pass][review47b]") {
    TestHost plain;
    const Run baseline =
        runVerify(plain, sandbox(), hardenedPod("pod-uid-1"), hardenedPod("pod-uid-2"));
    INFO(baseline.text);
    REQUIRE(baseline.checks["nothing-survives"]["result"] == "pass");

    json decoy = hardenedPod("decoy-uid");
    decoy["metadata"]["name"] = "decoy";
    decoy["metadata"]["ownerReferences"][0].erase("controller");
    TestHost host;
    host.server.onRequest = [&](const kube::HttpRequest& request) {
        if (request.method == "DELETE")  // created while verify ran its other checks
            host.server.onJson("GET",
                               kPods + "?labelSelector=agents.x-k8s.io%2Fsandbox-name-hash%3Dabc",
                               200, list({hardenedPod("pod-uid-2"), decoy}));
    };
    const Run run = runVerify(host, sandbox(), hardenedPod("pod-uid-1"), hardenedPod("pod-uid-2"));
    INFO(run.text);
    CHECK(run.exitCode == 3);
    CHECK(run.checks["nothing-survives"]["result"] == "unproven");
    CHECK_THAT(evidence(run.checks["nothing-survives"]),
               Catch::Contains("after the restart pod(s) decoy match the Sandbox beside orders"));
}

// Review 48 finding 1: a pod with the Sandbox as its controller, made by someone else while the
// old one terminated, was read for the canaries; the controller would adopt it, too.
TEST_CASE("review48: nothing-survives is not proven by a replacement anyone could make",
          "[verify][false-pass][review48]") {
    json decoy = hardenedPod("decoy-uid");
    decoy["metadata"]["name"] = "decoy2";
    TestHost named;
    const Run other = runVerify(named, sandbox(), hardenedPod("pod-uid-1"), decoy);
    INFO(other.text);
    CHECK(other.exitCode == 3);
    CHECK(other.checks["nothing-survives"]["result"] == "unproven");
    CHECK_THAT(evidence(other.checks["nothing-survives"]),
               Catch::Contains("pod decoy2 names it as its controller but is not the pod"));

    json unlike = hardenedPod("pod-uid-2");  // under the name, but not what the template makes
    unlike["spec"]["containers"][0]["image"] = "registry.test/elsewhere:1";
    TestHost shaped;
    const Run made = runVerify(shaped, sandbox(), hardenedPod("pod-uid-1"), unlike);
    INFO(made.text);
    CHECK(made.exitCode == 3);
    CHECK(made.checks["nothing-survives"]["result"] == "unproven");
    CHECK_THAT(evidence(made.checks["nothing-survives"]),
               Catch::Contains("replacement pod orders differs from the pod it replaced"));
}
