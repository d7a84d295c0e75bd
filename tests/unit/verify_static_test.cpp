// The static halves of sandbox verify: pure functions of the objects read from the API.
#include <catch2/catch.hpp>

#include "rossoctl/verify/checks.hpp"

using nlohmann::json;
using namespace rossoctl::verify;

namespace {

json hardenedPod() {
    return json::parse(R"({
      "metadata": {"name": "orders", "labels": {"app.kubernetes.io/name": "orders", "tier": "agent"}},
      "spec": {
        "automountServiceAccountToken": false,
        "activeDeadlineSeconds": 86400,
        "containers": [{"name": "agent", "workingDir": "/workspace",
                        "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}},
                        "volumeMounts": [{"name": "workspace", "mountPath": "/workspace"}]}],
        "volumes": [{"name": "workspace", "emptyDir": {}}]
      }
    })");
}

bool mentions(const Finding& finding, const std::string& text) {
    for (const auto& line : finding.evidence)
        if (line.find(text) != std::string::npos) return true;
    return false;
}

json defaultDeny() {
    return json::parse(R"({"metadata": {"name": "default-deny"},
      "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}})");
}

}  // namespace

TEST_CASE("combine: both halves must pass; a failure wins over unproven") {
    CHECK(combine(Verdict::Pass, Verdict::Pass) == Verdict::Pass);
    CHECK(combine(Verdict::Pass, Verdict::Unproven) == Verdict::Unproven);
    CHECK(combine(Verdict::Fail, Verdict::Unproven) == Verdict::Fail);
    CHECK(combine(Verdict::Pass, Verdict::Fail) == Verdict::Fail);
}

TEST_CASE("token static: pod setting, service account fallback, projected volumes") {
    json pod = hardenedPod();
    CHECK(tokenStatic(pod, std::nullopt).verdict == Verdict::Pass);

    SECTION("pod unset: the service account decides") {
        pod["spec"].erase("automountServiceAccountToken");
        CHECK(tokenStatic(pod, json{{"automountServiceAccountToken", false}}).verdict ==
              Verdict::Pass);
        auto unset = tokenStatic(pod, json::object());
        CHECK(unset.verdict == Verdict::Fail);
        CHECK(mentions(unset, "automounted by default"));
        CHECK(tokenStatic(pod, std::nullopt).verdict == Verdict::Fail);
    }
    SECTION("pod true overrides a service account false") {
        pod["spec"]["automountServiceAccountToken"] = true;
        CHECK(tokenStatic(pod, json{{"automountServiceAccountToken", false}}).verdict ==
              Verdict::Fail);
    }
    SECTION("a projected serviceAccountToken volume fails even with automount off") {
        pod["spec"]["volumes"].push_back(json::parse(
            R"({"name": "kube-api-access-x", "projected": {"sources": [
                 {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}]}})"));
        auto finding = tokenStatic(pod, std::nullopt);
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "kube-api-access-x projects a serviceAccountToken"));
    }
}

TEST_CASE("labelSelectorMatches: matchLabels and every matchExpressions operator") {
    const json labels = {{"app", "orders"}, {"tier", "agent"}};
    CHECK(labelSelectorMatches(json::object(), labels));
    CHECK_FALSE(labelSelectorMatches(json(), labels));
    CHECK(labelSelectorMatches({{"matchLabels", {{"app", "orders"}}}}, labels));
    CHECK_FALSE(labelSelectorMatches({{"matchLabels", {{"app", "billing"}}}}, labels));
    auto expression = [](const std::string& key, const std::string& op, json values) {
        json e = {{"key", key}, {"operator", op}};
        if (!values.is_null()) e["values"] = values;
        return json{{"matchExpressions", json::array({e})}};
    };
    CHECK(labelSelectorMatches(expression("tier", "In", {"agent", "web"}), labels));
    CHECK_FALSE(labelSelectorMatches(expression("tier", "In", {"web"}), labels));
    CHECK(labelSelectorMatches(expression("tier", "NotIn", {"web"}), labels));
    CHECK_FALSE(labelSelectorMatches(expression("tier", "NotIn", {"agent"}), labels));
    CHECK(labelSelectorMatches(expression("app", "Exists", nullptr), labels));
    CHECK_FALSE(labelSelectorMatches(expression("missing", "Exists", nullptr), labels));
    CHECK(labelSelectorMatches(expression("missing", "DoesNotExist", nullptr), labels));
    CHECK(labelSelectorMatches(expression("missing", "NotIn", {"x"}), labels));
    CHECK_FALSE(labelSelectorMatches(expression("app", "Gt", {"1"}), labels));
}

TEST_CASE("egress static: isolating policies, allowed destinations, allow-all") {
    const json pod = hardenedPod();
    SECTION("no policy") {
        auto finding = egressStatic(pod, json::array());
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "egress is not isolated"));
    }
    SECTION("ingress-only and non-selecting policies do not count") {
        json ingressOnly = defaultDeny();
        ingressOnly["spec"]["policyTypes"] = {"Ingress"};
        json other = defaultDeny();
        other["spec"]["podSelector"] = {{"matchLabels", {{"app", "billing"}}}};
        CHECK(egressStatic(pod, json::array({ingressOnly, other})).verdict == Verdict::Fail);
    }
    SECTION("default deny plus DNS lists the destination") {
        json dns = json::parse(R"({"metadata": {"name": "allow-dns"}, "spec": {
          "podSelector": {}, "policyTypes": ["Egress"],
          "egress": [{"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                              "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
                      "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}]}})");
        json cidr = json::parse(R"({"metadata": {"name": "allow-pypi"}, "spec": {
          "podSelector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["agent"]}]},
          "policyTypes": ["Egress"],
          "egress": [{"to": [{"ipBlock": {"cidr": "151.101.0.223/32"}}], "ports": [{"port": 443}]}]}})");
        auto finding = egressStatic(pod, json::array({defaultDeny(), dns, cidr}));
        CHECK(finding.verdict == Verdict::Pass);
        CHECK(
            mentions(finding, "networkpolicy/default-deny selects the pod and denies all egress"));
        CHECK(mentions(finding,
                       "pods k8s-app=kube-dns in namespaces "
                       "kubernetes.io/metadata.name=kube-system on UDP/53, TCP/53"));
        CHECK(mentions(finding, "151.101.0.223/32 on TCP/443"));
    }
    SECTION("a rule allowing every destination and port fails") {
        json open = json::parse(R"({"metadata": {"name": "allow-all"}, "spec": {
          "podSelector": {}, "policyTypes": ["Egress"], "egress": [{}]}})");
        auto finding = egressStatic(pod, json::array({defaultDeny(), open}));
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "networkpolicy/allow-all allows all egress"));
        json world = json::parse(R"({"metadata": {"name": "world"}, "spec": {
          "podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}]}})");
        CHECK(egressStatic(pod, json::array({world})).verdict == Verdict::Fail);
    }
    SECTION("policyTypes absent: Egress when egress rules exist") {
        json implicit = json::parse(R"({"metadata": {"name": "implicit"}, "spec": {
          "podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}]}]}})");
        auto finding = egressStatic(pod, json::array({implicit}));
        CHECK(finding.verdict == Verdict::Pass);
        CHECK(mentions(finding, "10.0.0.0/8 except 10.1.0.0/16 on any port"));
    }
}

TEST_CASE("limits static: every container, a deadline, a quota") {
    json pod = hardenedPod();
    const json sandbox = json::object();
    const json quota = json::parse(
        R"([{"metadata": {"name": "sandbox-quota"}, "spec": {"hard": {"limits.memory": "8Gi", "pods": "20"}}}])");
    CHECK(limitsStatic(pod, sandbox, quota).verdict == Verdict::Pass);
    CHECK(mentions(limitsStatic(pod, sandbox, quota),
                   "resourcequota/sandbox-quota: limits.memory=8Gi, pods=20"));

    SECTION("a container without a memory limit") {
        pod["spec"]["containers"].push_back(
            {{"name", "sidecar"}, {"resources", {{"limits", {{"cpu", "100m"}}}}}});
        auto finding = limitsStatic(pod, sandbox, quota);
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "container sidecar has no memory limit"));
    }
    SECTION("an init container counts too") {
        pod["spec"]["initContainers"] = json::array({{{"name", "setup"}}});
        CHECK(mentions(limitsStatic(pod, sandbox, quota),
                       "container setup has no cpu or memory limit"));
    }
    SECTION("no deadline; the Sandbox's shutdownTime is enough") {
        pod["spec"].erase("activeDeadlineSeconds");
        auto finding = limitsStatic(pod, sandbox, quota);
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "no deadline"));
        const json withShutdown = {{"spec", {{"shutdownTime", "2030-01-01T00:00:00Z"}}}};
        CHECK(limitsStatic(pod, withShutdown, quota).verdict == Verdict::Pass);
    }
    SECTION("no quota") {
        auto finding = limitsStatic(pod, sandbox, json::array());
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "no ResourceQuota"));
    }
}

TEST_CASE("nothing survives static: PVC and hostPath fail") {
    json pod = hardenedPod();
    CHECK(nothingSurvivesStatic(pod).verdict == Verdict::Pass);
    CHECK(mentions(nothingSurvivesStatic(pod), "workspace (emptyDir)"));
    pod["spec"]["volumes"] = json::parse(
        R"([{"name": "workspace", "persistentVolumeClaim": {"claimName": "workspace-orders"}},
            {"name": "host", "hostPath": {"path": "/var/data"}}])");
    auto finding = nothingSurvivesStatic(pod);
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "persistentVolumeClaim workspace-orders"));
    CHECK(mentions(finding, "hostPath /var/data"));
}
