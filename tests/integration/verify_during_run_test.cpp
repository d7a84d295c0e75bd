// What a project user changes while verify runs (attack 62 N2, attack 63 T1, T2, review 61 #7):
// a verdict printed as pass must hold for what is there at its end, so verify reads what it
// judged again before it prints.
#include <catch2/catch.hpp>
#include <future>
#include <string>

#include "harness.hpp"
#include "verify_report.hpp"

using nlohmann::json;

namespace {

// `verify agent` with the trusted probe, once it has read the pod and its policies: its probe
// has joined the pod then.
std::future<harness::VerifyRun> verifyUnderWay(const std::string& ns) {
    auto running =
        std::async(std::launch::async, [ns] { return harness::verifyTrusted(ns, "agent"); });
    REQUIRE(harness::eventually(
        [&] {
            const auto pod =
                harness::admin().getIfExists(rossoctl::kube::resources::pods(), ns, "agent");
            return pod && (*pod)["spec"].contains("ephemeralContainers");
        },
        120));
    return running;
}

}  // namespace

TEST_CASE(
    "sandbox verify: a policy, a template, a Secret or a debug container changed while it "
    "runs is in the verdict",
    "[verify]") {
    harness::TestNamespace project("verify63-during", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    // A Secret the agent reads (attack 63 T2: written while verify ran, the certified pod read a
    // token from it five seconds after "pass").
    harness::admin().create(rossoctl::kube::resources::secrets(), ns,
                            {{"apiVersion", "v1"},
                             {"kind", "Secret"},
                             {"metadata", {{"name", "cfg"}}},
                             {"stringData", {{"note", "hello"}}}});
    json box = harness::smallSandbox(ns, "agent", "busybox:1.36");
    json& spec = box["spec"]["podTemplate"]["spec"];
    spec["containers"][0]["command"] = {"sleep", "3600"};
    spec["volumes"].push_back({{"name", "cfg"}, {"secret", {{"secretName", "cfg"}}}});
    // Attack 64 T3: the pod reads its own annotations.
    spec["volumes"].push_back(
        {{"name", "podinfo"},
         {"downwardAPI",
          {{"items",
            {{{"path", "annotations"}, {"fieldRef", {{"fieldPath", "metadata.annotations"}}}}}}}}});
    spec["containers"][0]["volumeMounts"].push_back(
        {{"name", "cfg"}, {"mountPath", "/etc/cfg"}, {"readOnly", true}});
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "agent"); }, 180));
    // Attack 63 P1, E1: a policy that waits for a label this pod lacks (a warm pool's claim
    // strips labels; a project user adds them) is the pod's egress once it has it.
    harness::admin().create(rossoctl::kube::resources::networkPolicies(), ns,
                            {{"apiVersion", "networking.k8s.io/v1"},
                             {"kind", "NetworkPolicy"},
                             {"metadata", {{"name", "dormant-open"}}},
                             {"spec",
                              {{"podSelector", {{"matchLabels", {{"role", "open"}}}}},
                               {"policyTypes", {"Egress"}},
                               {"egress", {json::object()}}}}});
    auto running = verifyUnderWay(ns);
    // A tenant's allow policy (attack 62 N2: it let the agent reach a relay) and a debug
    // container, which runs with no limits of its own.
    harness::admin().create(
        rossoctl::kube::resources::networkPolicies(), ns,
        {{"apiVersion", "networking.k8s.io/v1"},
         {"kind", "NetworkPolicy"},
         {"metadata", {{"name", "late-allow"}}},
         {"spec",
          {{"podSelector", json::object()},
           {"policyTypes", {"Egress"}},
           {"egress", {{{"ports", {{{"protocol", "TCP"}, {"port", 8080}}}}}}}}}});
    const json debug = {{"name", "late-debug"},
                        {"image", "busybox:1.36"},
                        {"command", {"sleep", "600"}},
                        {"securityContext",
                         {{"runAsNonRoot", true},
                          {"runAsUser", 65532},
                          {"allowPrivilegeEscalation", false},
                          {"capabilities", {{"drop", {"ALL"}}}},
                          {"seccompProfile", {{"type", "RuntimeDefault"}}}}}};
    harness::admin().request(
        "PATCH", "/api/v1/namespaces/" + ns + "/pods/agent/ephemeralcontainers",
        json::array({{{"op", "add"}, {"path", "/spec/ephemeralContainers/-"}, {"value", debug}}})
            .dump(),
        "application/json-patch+json", false);
    // Attack 63 T1: the template asks for the token (the running pod keeps its shape), and the
    // Secret is written.
    harness::admin().patch(harness::sandboxRef(), ns, "agent", rossoctl::kube::PatchType::Merge,
                           R"({"spec": {"podTemplate": {"spec":
                                {"automountServiceAccountToken": true}}}})");
    harness::admin().patch(rossoctl::kube::resources::secrets(), ns, "cfg",
                           rossoctl::kube::PatchType::Merge,
                           R"({"stringData": {"note": "written while verify ran"}})");
    harness::admin().patch(
        rossoctl::kube::resources::pods(), ns, "agent", rossoctl::kube::PatchType::Merge,
        R"({"metadata": {"annotations": {"note": "written while verify ran"}}})");
    const auto [result, report] = running.get();
    INFO(result.out << result.err);
    CHECK(result.exitCode != 0);
    const json& egress = harness::checkNamed(report, "egress");
    CHECK(egress["static"]["result"] != "pass");
    CHECK_THAT(harness::evidenceOf(egress),
               Catch::Contains("NetworkPolicies of namespace " + ns +
                               " changed while verify ran: late-allow (added)") &&
                   Catch::Contains(R"(a pod of the namespace labelled {"role":"open"} has egress )"
                                   "beyond the project (networkpolicy/dormant-open"));
    for (const auto& check : report["checks"]) {
        INFO(check["id"]);
        CHECK(check["static"]["result"] != "pass");
        CHECK_THAT(harness::evidenceOf(check),
                   Catch::Contains("sandbox agent's spec changed while verify ran"));
    }
    CHECK_THAT(harness::evidenceOf(harness::checkNamed(report, "service-account-token")),
               Catch::Contains("Secret cfg written while verify ran") &&
                   Catch::Contains("what pod agent reads of itself through the downward API"));
    const json& limits = harness::checkNamed(report, "limits");
    CHECK(limits["live"]["result"] == "unproven");
    CHECK_THAT(harness::evidenceOf(limits),
               Catch::Contains("ephemeral container late-debug added to pod agent while verify "
                               "ran: the API gives it no limits of its own"));
}

TEST_CASE(
    "sandbox verify: a change made and undone while it runs is in the verdict (review 64 "
    "H3, M1)",
    "[verify]") {
    harness::TestNamespace project("verify64-undone", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    json box = harness::smallSandbox(ns, "agent", "busybox:1.36");
    json& spec = box["spec"]["podTemplate"]["spec"];
    spec["containers"][0]["command"] = {"sleep", "3600"};
    // A Secret the agent would read, missing: one made and deleted again reaches the pod.
    spec["volumes"].push_back(
        {{"name", "late"}, {"secret", {{"secretName", "late-cfg"}, {"optional", true}}}});
    spec["containers"][0]["volumeMounts"].push_back(
        {{"name", "late"}, {"mountPath", "/etc/late"}, {"readOnly", true}});
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "agent"); }, 180));
    auto running = verifyUnderWay(ns);
    // Each written and undone: the reads at the end equal those at the start.
    const json open = {{"apiVersion", "networking.k8s.io/v1"},
                       {"kind", "NetworkPolicy"},
                       {"metadata", {{"name", "brief-open"}}},
                       {"spec",
                        {{"podSelector", json::object()},
                         {"policyTypes", {"Egress"}},
                         {"egress", {json::object()}}}}};
    harness::admin().create(rossoctl::kube::resources::networkPolicies(), ns, open);
    harness::admin().create(rossoctl::kube::resources::secrets(), ns,
                            {{"apiVersion", "v1"},
                             {"kind", "Secret"},
                             {"metadata", {{"name", "late-cfg"}}},
                             {"stringData", {{"note", "here for a moment"}}}});
    const auto pods = rossoctl::kube::resources::pods();
    harness::admin().patch(pods, ns, "agent", rossoctl::kube::PatchType::Merge,
                           R"({"metadata": {"labels": {"role": "open"}}})");
    harness::admin().patch(pods, ns, "agent", rossoctl::kube::PatchType::Merge,
                           R"({"metadata": {"labels": {"role": null}}})");
    harness::admin().remove(rossoctl::kube::resources::secrets(), ns, "late-cfg");
    harness::admin().remove(rossoctl::kube::resources::networkPolicies(), ns, "brief-open");
    // An image a project user may set on a running pod: the container restarts as another.
    harness::admin().patch(pods, ns, "agent", rossoctl::kube::PatchType::Json,
                           R"([{"op": "replace", "path": "/spec/containers/0/image",
                                "value": "curlimages/curl:8"}])");
    const auto [result, report] = running.get();
    INFO(result.out << result.err);
    CHECK(result.exitCode == 3);
    const json& egress = harness::checkNamed(report, "egress");
    CHECK(egress["static"]["result"] == "unproven");
    CHECK_THAT(harness::evidenceOf(egress),
               Catch::Contains("brief-open (written, then undone)") &&
                   Catch::Contains("pod agent's labels changed while verify ran"));
    const json& token = harness::checkNamed(report, "service-account-token");
    CHECK(token["static"]["result"] == "unproven");
    CHECK_THAT(harness::evidenceOf(token), Catch::Contains("Secret late-cfg (made, then deleted)"));
    const json& limits = harness::checkNamed(report, "limits");
    CHECK(limits["live"]["result"] == "unproven");
    CHECK_THAT(harness::evidenceOf(limits),
               Catch::Contains("pod agent's spec changed while verify ran"));
}

// [outage]: the neighbour can hold NET_RAW, which leaves every sandbox verified meanwhile
// unproven. Attack 66 N1: made once verify had listed the cluster's pods (the tenant waited
// for its restart) and deleted before its end, it kept the agent's memory and relayed it out.
TEST_CASE("sandbox verify: a NET_RAW pod made and gone while it runs is in the verdict",
          "[verify][outage]") {
    harness::TestNamespace baseline("verify66-raw", false);
    auto created = harness::rossoctl(
        {"project", "create", baseline.name(), "--no-check", "--pod-security", "baseline"});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    harness::TestNamespace project("verify66-during", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    json box = harness::smallSandbox(ns, "agent", "busybox:1.36");
    box["spec"]["podTemplate"]["spec"]["containers"][0]["command"] = {"sleep", "3600"};
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "agent"); }, 180));
    auto running = verifyUnderWay(ns);
    // Root with the runtime's default capabilities, as baseline admits.
    const json store = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", "store"}}},
        {"spec",
         {{"terminationGracePeriodSeconds", 0},
          {"containers",
           {{{"name", "store"},
             {"image", "busybox:1.36"},
             {"command", {"sleep", "600"}},
             {"resources", {{"limits", {{"cpu", "50m"}, {"memory", "32Mi"}}}}}}}}}}};
    const auto pods = rossoctl::kube::resources::pods();
    harness::admin().create(pods, baseline.name(), store);
    harness::admin().remove(pods, baseline.name(), "store");
    const auto [result, report] = running.get();
    INFO(result.out << result.err);
    CHECK(result.exitCode == 3);
    for (const char* id : {"egress", "service-account-token", "nothing-survives"}) {
        INFO(id);
        const json& check = harness::checkNamed(report, id);
        CHECK(check["static"]["result"] == "unproven");
        CHECK_THAT(harness::evidenceOf(check),
                   Catch::Contains("pods made or changed while verify ran reach a node's files or "
                                   "its pod network") &&
                       Catch::Contains("pod " + baseline.name() + "/store"));
    }
}
