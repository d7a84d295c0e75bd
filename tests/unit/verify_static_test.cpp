// The static halves of sandbox verify: pure functions of the objects read from the API.
#include <catch2/catch.hpp>

#include "rossoctl/kube/timestamp.hpp"
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
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
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

// Noon the day before 2030-01-01: a shutdownTime then is 12 hours away.
DeadlineBound today() {
    return {*rossoctl::kube::parseTimestamp("2029-12-31T12:00:00Z"), std::chrono::hours(24),
            "the project's lifetime"};
}

// A node the test pods fit: the capacity test passes on it.
json bigNode() {
    return json::parse(R"({"metadata": {"name": "node-1"},
        "status": {"capacity": {"cpu": "64", "memory": "256Gi"}}})");
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

TEST_CASE("egress static: the effective egress against the project's allowance") {
    const json pod = hardenedPod();
    const json dns = json::parse(R"({"metadata": {"name": "allow-dns"}, "spec": {
      "podSelector": {}, "policyTypes": ["Egress"],
      "egress": [{"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                          "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
                  "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}]}})");
    SECTION("no policy: open, the metadata address named") {
        auto finding = egressStatic(pod, json::array());
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "egress is not isolated"));
        CHECK(mentions(finding, "opens the cloud metadata address 169.254.169.254"));
    }
    SECTION("ingress-only and non-selecting policies do not count") {
        json ingressOnly = defaultDeny();
        ingressOnly["spec"]["policyTypes"] = {"Ingress"};
        json other = defaultDeny();
        other["spec"]["podSelector"] = {{"matchLabels", {{"app", "billing"}}}};
        CHECK(egressStatic(pod, json::array({ingressOnly, other})).verdict == Verdict::Fail);
    }
    SECTION("default deny plus DNS passes, naming the policies") {
        auto finding = egressStatic(pod, json::array({defaultDeny(), dns}));
        CHECK(finding.verdict == Verdict::Pass);
        CHECK(mentions(finding, "networkpolicy/default-deny, networkpolicy/allow-dns"));
    }
    SECTION("a /32 the project did not record fails, naming policy, rule and destination") {
        json cidr = json::parse(R"({"metadata": {"name": "allow-pypi"}, "spec": {
          "podSelector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["agent"]}]},
          "policyTypes": ["Egress"],
          "egress": [{"to": [{"ipBlock": {"cidr": "151.101.0.223/32"}}], "ports": [{"port": 443}]}]}})");
        auto finding = egressStatic(pod, json::array({defaultDeny(), dns, cidr}));
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding,
                       "networkpolicy/allow-pypi rule 1 allows 151.101.0.223/32 on TCP "
                       "443: beyond the project, e.g. 151.101.0.223 TCP 443"));
        CHECK(mentions(finding, "opens public addresses"));
        EgressInputs recorded;
        recorded.allowance = rossoctl::model::projectAllowance(
            {{"metadata",
              {{"annotations",
                {{rossoctl::model::kAllowedEgressAnnotation,
                  rossoctl::model::allowedEgressAnnotation(true, false, {"151.101.0.223/32"}, {},
                                                           {})}}}}}});
        const auto held = egressStatic(pod, json::array({defaultDeny(), dns, cidr}), recorded);
        CHECK(held.verdict == Verdict::Pass);
        // What the project allows follows a colon (walk4: "allows DNS to kube-dns, vm:443").
        REQUIRE_FALSE(held.evidence.empty());
        CHECK(held.evidence.front().find(
                  "; every rule stays within what the project allows: DNS to kube-dns") !=
              std::string::npos);
    }
    SECTION("policyTypes absent: Egress when egress rules exist; the API server is named") {
        json implicit = json::parse(R"({"metadata": {"name": "implicit"}, "spec": {
          "podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}]}]}})");
        EgressInputs inputs;
        inputs.apiServerAddresses = {"10.96.0.1"};
        inputs.nodeAddresses = {"10.1.0.5"};
        auto finding = egressStatic(pod, json::array({implicit}), inputs);
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding,
                       "networkpolicy/implicit rule 1 allows 10.0.0.0/8 except "
                       "10.1.0.0/16 on TCP 1-65535"));
        CHECK(mentions(finding, "opens the API server (10.96.0.1)"));
        CHECK_FALSE(mentions(finding, "the node network"));  // excepted
    }
    SECTION("a named port is the number the selected pods give it (issue 35 point 9)") {
        json named = dns;
        named["metadata"]["name"] = "allow-dns-named";
        named["spec"]["egress"][0]["ports"] =
            json::parse(R"([{"protocol": "UDP", "port": "dns"}])");
        const auto peer =
            rossoctl::model::PodPeer{named["spec"]["egress"][0]["to"][0]["namespaceSelector"],
                                     named["spec"]["egress"][0]["to"][0]["podSelector"]};
        EgressInputs inputs;
        inputs.peerPods[rossoctl::model::podPeerKey(peer)] = std::vector<json>{json::parse(
            R"({"metadata": {"name": "coredns"}, "spec": {"containers": [{"name": "coredns",
                "ports": [{"name": "dns", "containerPort": 53, "protocol": "UDP"},
                          {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
                          {"name": "metrics", "containerPort": 9153, "protocol": "TCP"}]}]}})")};
        auto resolved = egressStatic(pod, json::array({defaultDeny(), named}), inputs);
        CHECK(resolved.verdict == Verdict::Pass);
        CHECK(mentions(resolved, "UDP named port \"dns\" resolved on the 1 pods"));
        // A name on a port beyond 53 opens it; pods that cannot be listed leave it unproven.
        inputs.peerPods.begin()
            ->second->front()["spec"]["containers"][0]["ports"][0]["containerPort"] = 5353;
        CHECK(egressStatic(pod, json::array({defaultDeny(), named}), inputs).verdict ==
              Verdict::Fail);
        inputs.peerPods.begin()->second = std::nullopt;
        auto hidden = egressStatic(pod, json::array({defaultDeny(), named}), inputs);
        CHECK(hidden.verdict == Verdict::Unproven);
        CHECK(mentions(hidden, "could not be listed"));
        CHECK(egressStatic(pod, json::array({defaultDeny(), named})).verdict == Verdict::Unproven);
    }
    SECTION("a Cilium rule that cannot be evaluated is unproven, never a pass") {
        json cnp = json::parse(R"([{"metadata": {"name": "c"}, "spec": {"endpointSelector": {},
          "egress": [{"toServices": [{"k8sService": {"serviceName": "x"}}]}]}}])");
        EgressInputs inputs;
        inputs.ciliumPolicies = cnp;
        auto finding = egressStatic(pod, json::array({defaultDeny(), dns}), inputs);
        CHECK(finding.verdict == Verdict::Unproven);
        CHECK(mentions(finding, "not evaluated"));
    }
}

TEST_CASE("token static: legacy service-account-token Secrets in volumes and env") {
    json pod = hardenedPod();
    const std::vector<std::string> tokens = {"legacy-token"};
    CHECK(tokenStatic(pod, std::nullopt, tokens).verdict == Verdict::Pass);
    SECTION("a secret volume") {
        pod["spec"]["volumes"].push_back(
            {{"name", "t"}, {"secret", {{"secretName", "legacy-token"}}}});
        auto finding = tokenStatic(pod, std::nullopt, tokens);
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "volume t exposes secret/legacy-token"));
    }
    SECTION("a projected secret source") {
        pod["spec"]["volumes"].push_back(
            {{"name", "p"},
             {"projected", {{"sources", {{{"secret", {{"name", "legacy-token"}}}}}}}}});
        CHECK(tokenStatic(pod, std::nullopt, tokens).verdict == Verdict::Fail);
    }
    SECTION("env secretKeyRef in an init container, envFrom in an ephemeral one") {
        pod["spec"]["initContainers"] = json::parse(R"([{"name": "init", "env": [{"name": "T",
            "valueFrom": {"secretKeyRef": {"name": "legacy-token", "key": "token"}}}]}])");
        auto finding = tokenStatic(pod, std::nullopt, tokens);
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "container init env T (secretKeyRef) exposes secret/legacy-token"));
        pod["spec"].erase("initContainers");
        pod["spec"]["ephemeralContainers"] = json::parse(
            R"([{"name": "debug", "envFrom": [{"secretRef": {"name": "legacy-token"}}]}])");
        CHECK(tokenStatic(pod, std::nullopt, tokens).verdict == Verdict::Fail);
    }
    SECTION("an ordinary secret passes; when token Secrets cannot be listed it is unproven") {
        pod["spec"]["volumes"].push_back({{"name", "s"}, {"secret", {{"secretName", "api-key"}}}});
        CHECK(tokenStatic(pod, std::nullopt, tokens).verdict == Verdict::Pass);
        CHECK(tokenStatic(pod, std::nullopt, std::nullopt).verdict == Verdict::Unproven);
    }
}

TEST_CASE("limits static: every container, a deadline, a quota") {
    json pod = hardenedPod();
    const json sandbox = json::object();
    const json quota = json::parse(
        R"([{"metadata": {"name": "sandbox-quota"}, "spec": {"hard": {"limits.cpu": "4", "limits.memory": "8Gi", "pods": "20"}}}])");
    CHECK(limitsStatic(pod, sandbox, quota, today(), bigNode()).verdict == Verdict::Pass);
    CHECK(mentions(limitsStatic(pod, sandbox, quota, today(), bigNode()),
                   "resourcequota/sandbox-quota: limits.cpu=4, limits.memory=8Gi, pods=20"));

    SECTION("a zero limit is no limit, in any container (issue 35 points 2 and 3)") {
        pod["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "0";
        auto zeroCpu = limitsStatic(pod, sandbox, quota, today(), bigNode());
        CHECK(zeroCpu.verdict == Verdict::Fail);
        CHECK(mentions(zeroCpu, "container agent has cpu limit 0 is no limit"));
        pod = hardenedPod();
        pod["spec"]["containers"].push_back(
            {{"name", "sidecar"}, {"resources", {{"limits", {{"cpu", "0"}, {"memory", "0"}}}}}});
        auto sidecar = limitsStatic(pod, sandbox, quota, today(), bigNode());
        CHECK(sidecar.verdict == Verdict::Fail);
        CHECK(mentions(sidecar, "container sidecar has memory limit 0 is no limit"));
        pod["spec"]["containers"][1]["resources"]["limits"] = {{"cpu", "0m"}, {"memory", "0Mi"}};
        CHECK(limitsStatic(pod, sandbox, quota, today(), bigNode()).verdict == Verdict::Fail);
        pod["spec"]["containers"][1]["resources"]["limits"] = {{"cpu", "lots"}, {"memory", "1Gi"}};
        CHECK(mentions(limitsStatic(pod, sandbox, quota, today(), bigNode()), "is not a quantity"));
    }
    SECTION("ephemeral containers are named; the live half decides (unproven unless ended)") {
        // Review 35 H3: "bounded by the other containers' limits" was false without a pod cgroup.
        pod["spec"]["ephemeralContainers"] = json::array({{{"name", "debug"}}});
        auto bounded = limitsStatic(pod, sandbox, quota, today(), bigNode());
        CHECK(mentions(bounded, "ephemeral container debug: no limits of its own"));
        CHECK(mentions(bounded, "unproven live unless it has ended or is verify's own probe"));
        CHECK_FALSE(mentions(bounded, "bounded by the other containers' limits"));
    }
    SECTION("a quota counts only when it caps limits.cpu and limits.memory for this pod") {
        // Issue 35 point 12: any ResourceQuota with any key counted.
        const json pods = json::parse(
            R"([{"metadata": {"name": "q"}, "spec": {"hard": {"pods": "5", "limits.memory": "4Gi"}}}])");
        auto uncapped = limitsStatic(pod, sandbox, pods, today(), bigNode());
        CHECK(uncapped.verdict == Verdict::Fail);
        CHECK(mentions(uncapped, "caps limits.cpu in the namespace"));
        json scoped = quota;
        scoped[0]["spec"]["scopes"] = {"NotTerminating"};  // the pod has a deadline
        auto notCovering = limitsStatic(pod, sandbox, scoped, today(), bigNode());
        CHECK(notCovering.verdict == Verdict::Fail);
        CHECK(mentions(notCovering, "does not cover this pod: scope NotTerminating"));
        scoped[0]["spec"]["scopes"] = {"Terminating", "NotBestEffort"};
        CHECK(limitsStatic(pod, sandbox, scoped, today(), bigNode()).verdict == Verdict::Pass);
        json zero = quota;
        zero[0]["spec"]["hard"]["limits.cpu"] = "0";
        CHECK(limitsStatic(pod, sandbox, zero, today(), bigNode()).verdict == Verdict::Fail);
    }

    SECTION("a container without a memory limit") {
        pod["spec"]["containers"].push_back(
            {{"name", "sidecar"}, {"resources", {{"limits", {{"cpu", "100m"}}}}}});
        auto finding = limitsStatic(pod, sandbox, quota, today(), bigNode());
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "container sidecar has no memory limit"));
    }
    SECTION("an init container counts too") {
        pod["spec"]["initContainers"] = json::array({{{"name", "setup"}}});
        CHECK(mentions(limitsStatic(pod, sandbox, quota, today(), bigNode()),
                       "container setup has no cpu or memory limit"));
    }
    SECTION("no deadline; the Sandbox's shutdownTime is enough") {
        pod["spec"].erase("activeDeadlineSeconds");
        auto finding = limitsStatic(pod, sandbox, quota, today(), bigNode());
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "no deadline"));
        const json withShutdown = {{"spec", {{"shutdownTime", "2030-01-01T00:00:00Z"}}}};
        CHECK(limitsStatic(pod, withShutdown, quota, today(), bigNode()).verdict == Verdict::Pass);
        // Issue 35 point 12: a deadline years away is none.
        const json farAway = {{"spec", {{"shutdownTime", "2033-01-01T00:00:00Z"}}}};
        auto years = limitsStatic(pod, farAway, quota, today(), bigNode());
        CHECK(years.verdict == Verdict::Fail);
        CHECK(mentions(years, "beyond the project's lifetime (24.0h): not a deadline that counts"));
        pod["spec"]["activeDeadlineSeconds"] = 94608000;  // three years
        CHECK(limitsStatic(pod, sandbox, quota, today(), bigNode()).verdict == Verdict::Fail);
    }
    SECTION("no quota") {
        auto finding = limitsStatic(pod, sandbox, json::array(), today(), bigNode());
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "no ResourceQuota"));
    }
}

TEST_CASE("nothing survives static: every volume that outlives the pod fails") {
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
    for (const char* type : {"nfs", "iscsi", "cephfs", "rbd", "glusterfs", "awsElasticBlockStore",
                             "gcePersistentDisk", "azureDisk", "azureFile"}) {
        INFO(type);
        pod["spec"]["volumes"] = json::array({{{"name", "v"}, {type, json::object()}}});
        auto network = nothingSurvivesStatic(pod);
        CHECK(network.verdict == Verdict::Fail);
        CHECK(mentions(network, std::string("volume v is ") + type));
    }
    pod["spec"]["volumes"] = json::parse(R"([{"name": "c", "csi": {"driver": "x.example"}}])");
    CHECK(nothingSurvivesStatic(pod).verdict == Verdict::Unproven);
    pod["spec"]["volumes"] = json::parse(R"([{"name": "n", "newFancyVolume": {}}])");
    CHECK(nothingSurvivesStatic(pod).verdict == Verdict::Unproven);
}

TEST_CASE("nothing survives static: a generic ephemeral volume is judged by its StorageClass") {
    // Issue 35 point 12: it was assumed to die with the pod; a Retain class keeps its volume.
    json pod = hardenedPod();
    pod["spec"]["volumes"] =
        json::parse(R"([{"name": "scratch", "ephemeral": {"volumeClaimTemplate":
        {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}])");
    const json classes = json::parse(R"([
        {"metadata": {"name": "keep", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
         "reclaimPolicy": "Retain"},
        {"metadata": {"name": "fast"}, "reclaimPolicy": "Delete"}])");
    auto kept = nothingSurvivesStatic(pod, json(), classes);
    CHECK(kept.verdict == Verdict::Fail);
    CHECK(mentions(kept, "StorageClass keep has reclaimPolicy Retain"));
    pod["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"]["spec"]["storageClassName"] =
        "fast";
    auto deleted = nothingSurvivesStatic(pod, json(), classes);
    CHECK(deleted.verdict == Verdict::Pass);
    CHECK(mentions(deleted, "scratch (ephemeral, its StorageClass deletes it)"));
    CHECK(nothingSurvivesStatic(pod).verdict == Verdict::Unproven);  // classes not read
    pod["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"]["spec"]["storageClassName"] =
        "gone";
    CHECK(nothingSurvivesStatic(pod, json(), classes).verdict == Verdict::Unproven);
}

TEST_CASE("attack 53: with several default StorageClasses the claim gets the newest") {
    json pod = hardenedPod();
    pod["spec"]["volumes"] =
        json::parse(R"([{"name": "scratch", "ephemeral": {"volumeClaimTemplate":
        {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}])");
    // Admission gives the claim "a-keep", the newer default; "z-delete" only sorts last.
    json classes = json::parse(R"([
        {"metadata": {"name": "a-keep", "creationTimestamp": "2026-12-06T07:00:00Z",
                      "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
         "reclaimPolicy": "Retain"},
        {"metadata": {"name": "z-delete", "creationTimestamp": "2026-01-01T00:00:00Z",
                      "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
         "reclaimPolicy": "Delete"}])");
    auto newest = nothingSurvivesStatic(pod, json(), classes);
    CHECK(newest.verdict == Verdict::Fail);
    CHECK(mentions(newest, "StorageClass a-keep has reclaimPolicy Retain"));
    SECTION("created in the same second: the first by name") {
        classes[1]["metadata"]["creationTimestamp"] = "2026-12-06T07:00:00Z";
        CHECK(nothingSurvivesStatic(pod, json(), classes).verdict == Verdict::Fail);
        classes[0]["metadata"]["name"] = "zz-keep";
        CHECK(nothingSurvivesStatic(pod, json(), classes).verdict == Verdict::Pass);
    }
    SECTION("the beta annotation marks a default too") {
        classes[0]["metadata"]["annotations"] =
            json::parse(R"({"storageclass.beta.kubernetes.io/is-default-class": "true"})");
        CHECK(nothingSurvivesStatic(pod, json(), classes).verdict == Verdict::Fail);
    }
}

TEST_CASE("review 35 H4: storageClassName \"\" and volumeName are a PV's own reclaimPolicy") {
    json pod = hardenedPod();
    pod["spec"]["volumes"] =
        json::parse(R"([{"name": "scratch", "ephemeral": {"volumeClaimTemplate":
        {"spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                  "resources": {"requests": {"storage": "1Gi"}}}}}}])");
    // The default class deletes: "" must not be read as it.
    const json classes = json::parse(R"([
        {"metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
         "reclaimPolicy": "Delete"}])");
    auto none = nothingSurvivesStatic(pod, json(), classes);
    CHECK(none.verdict == Verdict::Unproven);
    CHECK(mentions(none, "storageClassName \"\" is no class, not the default"));
    CHECK_FALSE(mentions(none, "its StorageClass deletes it"));
    auto& spec = pod["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"]["spec"];
    spec["storageClassName"] = "fast";
    spec["volumeName"] = "pv-kept";
    auto bound = nothingSurvivesStatic(pod, json(), classes);
    CHECK(bound.verdict == Verdict::Unproven);
    CHECK(mentions(bound, "names PersistentVolume pv-kept"));
    spec.erase("volumeName");
    spec.erase("storageClassName");
    CHECK(nothingSurvivesStatic(pod, json(), classes).verdict == Verdict::Pass);  // the default
}

TEST_CASE("nothing survives static: the Sandbox's volumeClaimTemplates and shutdownPolicy") {
    const json pod = hardenedPod();
    json sandbox = json::parse(R"({"spec": {"shutdownPolicy": "Retain"}})");
    CHECK(nothingSurvivesStatic(pod, sandbox).verdict == Verdict::Pass);
    sandbox["spec"]["volumeClaimTemplates"] = json::parse(R"([{"metadata": {"name": "work"}}])");
    auto finding = nothingSurvivesStatic(pod, sandbox);
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "volumeClaimTemplates has work"));
    CHECK(mentions(finding, "shutdownPolicy Retain"));
    sandbox["spec"]["shutdownPolicy"] = "Delete";
    CHECK(nothingSurvivesStatic(pod, sandbox).verdict == Verdict::Fail);
}

TEST_CASE("nothing survives static: a seccomp profile that lets the keyring through") {
    // Issue 35 point 8: with seccomp Unconfined a key from add_key("user", ...) was readable in
    // the replacement pod.
    json pod = hardenedPod();
    pod["spec"]["containers"][0]["securityContext"]["seccompProfile"]["type"] = "Unconfined";
    auto unconfined = nothingSurvivesStatic(pod);
    CHECK(unconfined.verdict == Verdict::Fail);
    CHECK(mentions(unconfined, "container agent runs with seccomp Unconfined"));
    pod = hardenedPod();
    pod["spec"].erase("securityContext");
    CHECK(nothingSurvivesStatic(pod).verdict == Verdict::Unproven);
    pod["spec"]["containers"][0]["securityContext"] = {{"privileged", true}};
    CHECK(nothingSurvivesStatic(pod).verdict == Verdict::Fail);
}

TEST_CASE("review 35 M1: hostIPC fails nothing survives (the node's /dev/shm)") {
    json pod = hardenedPod();
    pod["spec"]["hostIPC"] = true;
    const Finding finding = nothingSurvivesStatic(pod);
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "spec.hostIPC: true"));
}

TEST_CASE("attack 54 L1: a limit beyond what the node has bounds nothing") {
    json pod = hardenedPod();  // cpu 500m, memory 512Mi
    const json quota = json::parse(
        R"([{"metadata": {"name": "q"}, "spec": {"hard": {"limits.cpu": "2000", "limits.memory": "10Pi"}}}])");
    const json node = json::parse(R"({"metadata": {"name": "local-node"},
        "status": {"capacity": {"cpu": "32", "memory": "24590812Ki", "pods": "110"}}})");
    CHECK(limitsStatic(pod, json::object(), quota, today(), node).verdict == Verdict::Pass);
    pod["spec"]["containers"][0]["resources"]["limits"] = {{"cpu", "1000"}, {"memory", "1Pi"}};
    const Finding huge = limitsStatic(pod, json::object(), quota, today(), node);
    CHECK(huge.verdict == Verdict::Fail);
    CHECK(mentions(huge,
                   "container agent has cpu limit 1000 is more than node local-node has "
                   "(32): it bounds nothing there"));
    CHECK(mentions(huge, "memory limit 1Pi is more than node local-node has (24590812Ki)"));
    // The node not read: whether the limits fit it is not known (attack 56 L2).
    const Finding unread =
        limitsStatic(pod, json::object(), quota, today(), nullptr, "node local-node was not read");
    CHECK(unread.verdict == Verdict::Unproven);
    CHECK(mentions(unread, "node local-node was not read: whether the limits fit it is not known"));
}

TEST_CASE("attack 55 L1b: containers within the node one by one but beyond it together") {
    json pod = hardenedPod();
    const json quota = json::parse(
        R"([{"metadata": {"name": "q"}, "spec": {"hard": {"limits.cpu": "2000", "limits.memory": "10Pi"}}}])");
    const json node = json::parse(R"({"metadata": {"name": "local-node"},
        "status": {"capacity": {"cpu": "32", "memory": "24590812Ki", "pods": "110"}}})");
    json container = pod["spec"]["containers"][0];
    container["resources"]["limits"] = {{"cpu", "30"}, {"memory", "20Gi"}};
    pod["spec"]["containers"] = json::array({container, container});
    pod["spec"]["containers"][1]["name"] = "second";
    // A native sidecar runs beside them; a plain init container does not.
    json sidecar = container;
    sidecar["name"] = "sidecar";
    sidecar["restartPolicy"] = "Always";
    pod["spec"]["initContainers"] = json::array({sidecar});
    const Finding together = limitsStatic(pod, json::object(), quota, today(), node);
    CHECK(together.verdict == Verdict::Fail);
    CHECK(mentions(together,
                   "the pod's 3 containers together limit cpu 90, more than node "
                   "local-node has (32): together they bound nothing there"));
    pod["spec"]["initContainers"][0].erase("restartPolicy");
    pod["spec"]["containers"][0]["resources"]["limits"] = {{"cpu", "1"}, {"memory", "1Gi"}};
    pod["spec"]["containers"][1]["resources"]["limits"] = {{"cpu", "1"}, {"memory", "1Gi"}};
    CHECK(limitsStatic(pod, json::object(), quota, today(), node).verdict == Verdict::Pass);
}
