// Attack 63 T1, T2, E1: a project user changed the Sandbox's template, a Secret the pod reads
// and the pod's labels while verify ran, and verify certified the state it read at the start.
// What it judged is read again at the end; a change leaves what it decides unproven.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "rossoctl/verify/checks.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::testing;

namespace {

json verifiedWithChange(const std::string& path, const json& before, const json& atEnd,
                        const json& pod = verify_fixtures::hardenedPod("pod-uid-1"),
                        const json& sandbox = verify_fixtures::sandbox()) {
    return verify_fixtures::verdictsChangedAtEnd(path, before, atEnd, pod, sandbox);
}

}  // namespace

TEST_CASE("attack 63 T1: the Sandbox's template changed while verify ran leaves it unproven",
          "[verify][false-pass]") {
    const json before = verify_fixtures::sandbox();
    json after = before;
    after["metadata"]["resourceVersion"] = "77";
    after["spec"]["podTemplate"]["spec"]["automountServiceAccountToken"] = true;
    const json same = verifiedWithChange(verify_fixtures::kSandboxes + "/orders", before, before);
    CHECK(same["service-account-token"]["static"]["result"] == "pass");
    const json checks = verifiedWithChange(verify_fixtures::kSandboxes + "/orders", before, after);
    for (const char* id : {"service-account-token", "limits", "host-isolation"}) {
        INFO(id);
        CHECK(checks[id]["static"]["result"] == "unproven");
        CHECK_THAT(checks[id]["static"]["evidence"].dump(),
                   Catch::Contains("sandbox orders's spec changed while verify ran") &&
                       Catch::Contains("the pods it makes now were not judged"));
    }
}

TEST_CASE("attack 63 T2: a Secret the pod reads, written while verify ran, leaves it unproven",
          "[verify][false-pass]") {
    json pod = verify_fixtures::hardenedPod("pod-uid-1");
    pod["spec"]["volumes"].push_back({{"name", "cfg"}, {"secret", {{"secretName", "cfg"}}}});
    const std::string path = "/api/v1/namespaces/team1/secrets/cfg";
    const json before = json::parse(R"({"metadata": {"name": "cfg", "resourceVersion": "5",
        "creationTimestamp": "2020-01-01T00:00:00Z",
        "managedFields": [{"manager": "kubectl", "operation": "Update",
                           "time": "2020-01-01T00:00:00Z"}]},
        "data": {"note": "aGVsbG8="}})");
    json after = before;
    after["metadata"]["resourceVersion"] = "6";
    const json same = verifiedWithChange(path, before, before, pod)["service-account-token"];
    INFO(same.dump(2));
    CHECK(same["static"]["result"] == "pass");
    const json token =
        verifiedWithChange(path, before, after, pod)["service-account-token"]["static"];
    CHECK(token["result"] == "unproven");
    CHECK_THAT(token["evidence"].dump(),
               Catch::Contains("Secret cfg written while verify ran: what the pod reads there "
                               "now was not judged"));
}

TEST_CASE("attack 63 E1: the pod's labels changed while verify ran leave egress unproven",
          "[verify][false-pass]") {
    // A dormant policy of the project opens egress for role=open; a project user labelled the
    // certified pod so a second before verify printed pass.
    const json before = verify_fixtures::hardenedPod("pod-uid-1");
    json after = before;
    after["metadata"]["labels"]["role"] = "open";
    const json egress =
        verifiedWithChange(verify_fixtures::kPods + "/orders", before, after)["egress"]["static"];
    CHECK(egress["result"] == "unproven");
    CHECK_THAT(egress["evidence"].dump(),
               Catch::Contains("pod orders's labels changed while verify ran: the policies that "
                               "select it now were not judged"));
}

TEST_CASE("attack 63 P1, E1: egress a policy gives a pod labelled otherwise is not proven closed",
          "[verify][false-pass]") {
    // A warm pool's spare passed; the claim that took it stripped its warm-pool label, and a
    // policy waiting for that opened all egress: the certified pod's first POST got out.
    using namespace rossoctl::verify;
    const json spare = json::parse(R"({"metadata": {"name": "wp-x", "namespace": "team1",
        "labels": {"agents.x-k8s.io/sandbox-template-ref-hash": "abc",
                   "agents.x-k8s.io/warm-pool-sandbox": "wp"}}, "spec": {}})");
    json policies = verify_fixtures::policies();
    CHECK(egressStatic(spare, policies).verdict == Verdict::Pass);
    policies.push_back(json::parse(R"({"metadata": {"name": "claimed-open"}, "spec": {
        "podSelector": {"matchExpressions": [
          {"key": "agents.x-k8s.io/sandbox-template-ref-hash", "operator": "Exists"},
          {"key": "agents.x-k8s.io/warm-pool-sandbox", "operator": "DoesNotExist"}]},
        "policyTypes": ["Egress"], "egress": [{}]}})"));
    const Finding claimed = egressStatic(spare, policies);
    CHECK(claimed.verdict == Verdict::Unproven);
    CHECK_THAT(fmt::format("{}", fmt::join(claimed.evidence, "\n")),
               Catch::Contains("a pod of the namespace labelled "
                               R"({"agents.x-k8s.io/sandbox-template-ref-hash":"relay"})") &&
                   Catch::Contains("networkpolicy/claimed-open") &&
                   Catch::Contains("so this pod may be put under it; not proven"));
    // A default-deny that holds only labelled pods leaves a pod that loses the label open.
    json narrow = verify_fixtures::policies();
    narrow[0]["spec"]["podSelector"] = {
        {"matchLabels", {{"agents.x-k8s.io/warm-pool-sandbox", "wp"}}}};
    narrow[1]["spec"]["podSelector"] = narrow[0]["spec"]["podSelector"];
    const Finding unlabelled = egressStatic(spare, narrow);
    CHECK(unlabelled.verdict == Verdict::Unproven);
    CHECK_THAT(fmt::format("{}", fmt::join(unlabelled.evidence, "\n")),
               Catch::Contains("no policy with Egress in its types selects every pod of the "
                               "namespace (podSelector {}): a pod labelled otherwise may be "
                               "selected by none"));
    // Attack 64 W1: isolation split over selectors that together hold every pod a sample
    // builds, but not a claimed spare (the template's label, the warm pool's gone).
    json split = verify_fixtures::policies();
    const json notTemplated = json::parse(R"({"matchExpressions": [
        {"key": "agents.x-k8s.io/sandbox-template-ref-hash", "operator": "DoesNotExist"}]})");
    split[0]["spec"]["podSelector"] = notTemplated;
    split[1]["spec"]["podSelector"] = notTemplated;
    json spareDeny = split[0];
    spareDeny["metadata"]["name"] = "spare-deny";
    spareDeny["spec"]["podSelector"] = json::parse(R"({"matchExpressions": [
        {"key": "agents.x-k8s.io/warm-pool-sandbox", "operator": "Exists"}]})");
    spareDeny["spec"]["egress"] = split[1]["spec"]["egress"];
    split.push_back(spareDeny);
    const Finding claimedSpare = egressStatic(spare, split);
    CHECK(claimedSpare.verdict == Verdict::Unproven);
    CHECK_THAT(fmt::format("{}", fmt::join(claimedSpare.evidence, "\n")),
               Catch::Contains("a pod labelled otherwise may be selected by none"));
}

TEST_CASE(
    "attack 64 T3: an annotation the pod reads, written while verify ran, leaves the token "
    "unproven",
    "[verify][false-pass]") {
    // The downward API shows the pod its annotations: a token put there a second before verify
    // printed pass was read by the certified pod after it.
    json before = verify_fixtures::hardenedPod("pod-uid-1");
    before["spec"]["volumes"].push_back(
        {{"name", "podinfo"},
         {"downwardAPI",
          {{"items",
            {{{"path", "annotations"}, {"fieldRef", {{"fieldPath", "metadata.annotations"}}}}}}}}});
    json after = before;
    after["metadata"]["annotations"]["note"] = "written while verify ran";
    const std::string path = verify_fixtures::kPods + "/orders";
    CHECK(verifiedWithChange(path, before, before,
                             before)["service-account-token"]["static"]["result"] == "pass");
    // A container added to the spec (verify's own probe) is no change of what the pod reads of
    // itself (CI, 2026-12-07: every sandbox with a trusted probe was unproven).
    json probed = before;
    probed["spec"]["ephemeralContainers"] =
        json::array({{{"name", "rossoctl-probe-1"}, {"env", {{{"name", "K"}, {"value", "v"}}}}}});
    CHECK_THAT(verifiedWithChange(path, before, probed, before)["service-account-token"].dump(),
               !Catch::Contains("reads of itself"));
    const json token =
        verifiedWithChange(path, before, after, before)["service-account-token"]["static"];
    CHECK(token["result"] == "unproven");
    CHECK_THAT(token["evidence"].dump(),
               Catch::Contains("what pod orders reads of itself through the downward API (its "
                               "labels, its annotations) changed while verify ran"));
}

TEST_CASE(
    "review 64 H1, H2: a pod the Sandbox records or owns at the end, not judged, is "
    "unproven",
    "[verify][false-pass]") {
    // A project user's pod, owned by the Sandbox: the record pointed at it, or beside it.
    json recording = verify_fixtures::sandbox();
    recording["metadata"]["annotations"]["agents.x-k8s.io/pod-name"] = "evil";
    const json recorded = verifiedWithChange(verify_fixtures::kSandboxes + "/orders",
                                             verify_fixtures::sandbox(), recording);
    for (const char* id : {"service-account-token", "egress", "limits"}) {
        INFO(id);
        CHECK(recorded[id]["result"] == "unproven");
        CHECK_THAT(recorded[id]["live"]["evidence"].dump(),
                   Catch::Contains("sandbox orders records pod evil at the end, not pod orders "
                                   "that verify judged"));
    }
    json beside = verify_fixtures::hardenedPod("pod-uid-7");
    beside["metadata"]["name"] = "orders-evil";
    const json pod = verify_fixtures::hardenedPod("pod-uid-1");
    const json owned = verifiedWithChange(verify_fixtures::kPods, verify_fixtures::list({pod}),
                                          verify_fixtures::list({pod, beside}));
    CHECK(owned["service-account-token"]["result"] == "unproven");
    CHECK_THAT(owned["service-account-token"]["live"]["evidence"].dump(),
               Catch::Contains("pod orders-evil also owned by or selected for sandbox orders at "
                               "the end"));
}

TEST_CASE("review 64 H5: a Cilium policy's selector is a label set the pod may be given",
          "[verify][false-pass]") {
    using namespace rossoctl::verify;
    const json pod = json::parse(
        R"({"metadata": {"name": "orders", "namespace": "team1", "labels": {"app": "x"}},
            "spec": {}})");
    EgressInputs inputs;
    CHECK(egressStatic(pod, verify_fixtures::policies(), inputs).verdict == Verdict::Pass);
    inputs.ciliumPolicies = json::parse(R"([{"metadata": {"name": "builders"},
        "spec": {"endpointSelector": {"matchLabels": {"role": "builder"}},
                 "egress": [{"toEntities": ["world"]}]}}])");
    const Finding builder = egressStatic(pod, verify_fixtures::policies(), inputs);
    CHECK(builder.verdict == Verdict::Unproven);
    CHECK_THAT(verify_fixtures::evidenceText(builder),
               Catch::Contains(R"(a pod of the namespace labelled {"role":"builder"})"));
}

TEST_CASE(
    "attack 66 T4: the template's ServiceAccount written while verify ran leaves the token "
    "unproven",
    "[verify][false-pass]") {
    // The template leaves automount to its own account, which said false when verify read it.
    json sandbox = verify_fixtures::sandbox();
    json& templateSpec = sandbox["spec"]["podTemplate"]["spec"];
    templateSpec.erase("automountServiceAccountToken");
    templateSpec["serviceAccountName"] = "third";
    const std::string path = "/api/v1/namespaces/team1/serviceaccounts/third";
    const json before = json::parse(R"({"metadata": {"name": "third", "resourceVersion": "5"},
        "automountServiceAccountToken": false})");
    json after = before;
    after["metadata"]["resourceVersion"] = "6";
    after["automountServiceAccountToken"] = true;
    const auto pod = verify_fixtures::hardenedPod("pod-uid-1");
    const json same = verifiedWithChange(path, before, before, pod, sandbox);
    INFO(same["service-account-token"].dump(2));
    CHECK(same["service-account-token"]["static"]["result"] == "pass");
    const json token =
        verifiedWithChange(path, before, after, pod, sandbox)["service-account-token"]["static"];
    CHECK(token["result"] == "unproven");
    CHECK_THAT(token["evidence"].dump(),
               Catch::Contains("ServiceAccount third written while verify ran"));
}

TEST_CASE("review 66 L4: a Sandbox deleted and made again while verify ran leaves it unproven",
          "[verify][false-pass]") {
    const json before = verify_fixtures::sandbox();
    json remade = before;  // the same spec, another object
    remade["metadata"]["resourceVersion"] = "78";
    remade["metadata"]["uid"] = "uid-orders-2";
    const json checks = verifiedWithChange(verify_fixtures::kSandboxes + "/orders", before, remade);
    for (const char* id : {"service-account-token", "egress", "limits"}) {
        INFO(id);
        CHECK(checks[id]["static"]["result"] == "unproven");
        CHECK_THAT(checks[id]["static"]["evidence"].dump(),
                   Catch::Contains("sandbox orders was deleted while verify ran"));
    }
}
