// Attack 56 N1: a tenant with `edit` opened its sandbox's ingress to every pod of the cluster,
// which then carried the agent's data out; egress passed, since ingress was never read.
#include <catch2/catch.hpp>

#include "rossoctl/verify/checks.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl::verify;
using nlohmann::json;
using rossoctl::testing::verify_fixtures::policies;

namespace {

json pod() {
    return json::parse(R"({"metadata": {"name": "listen-1", "namespace": "atk56-x",
                          "labels": {"app": "listen-1"}}, "spec": {}})");
}

json withPolicy(const json& spec) {
    json all = policies();
    all.push_back({{"metadata", {{"name", "atk-ingress-open"}}}, {"spec", spec}});
    return all;
}

}  // namespace

TEST_CASE("attack 56 N1: an ingress rule from outside the namespace fails egress", "[verify]") {
    EgressInputs inputs;
    inputs.namespacePods = json{{"items", json::array()}};
    SECTION("the project's own policies let nothing in") {
        CHECK(ingressOpenings(pod(), policies(), inputs).open.empty());
        CHECK(egressStatic(pod(), policies(), inputs).verdict == Verdict::Pass);
    }
    SECTION("ingress: [{}] lets any source in") {
        const json policies = withPolicy(json::parse(
            R"({"podSelector": {"matchLabels": {"app": "listen-1"}}, "policyTypes": ["Ingress"],
                "ingress": [{}]})"));
        const Finding egress = egressStatic(pod(), policies, inputs);
        CHECK(egress.verdict == Verdict::Fail);
        bool named = false;
        for (const auto& line : egress.evidence)
            named = named || line.find(
                                 "networkpolicy/atk-ingress-open ingress rule 1 lets any "
                                 "source (no from) connect in") != std::string::npos;
        CHECK(named);
    }
    SECTION("other namespaces and address blocks are outside the project") {
        const json policies = withPolicy(json::parse(
            R"({"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": {}},
                {"ipBlock": {"cidr": "0.0.0.0/0"}}]}]})"));
        CHECK(ingressOpenings(pod(), policies, inputs).open.size() == 2);
    }
    SECTION("a policy selecting other pods, or of egress alone, opens nothing") {
        CHECK(ingressOpenings(pod(),
                              withPolicy(json::parse(
                                  R"({"podSelector": {"matchLabels": {"app": "other"}},
                                             "ingress": [{}]})")),
                              inputs)
                  .open.empty());
        CHECK(ingressOpenings(pod(),
                              withPolicy(json::parse(
                                  R"({"podSelector": {}, "policyTypes": ["Egress"],
                                             "ingress": [{}]})")),
                              inputs)
                  .open.empty());
    }
}

TEST_CASE("attack 57 N1b: a pod of the namespace let in is a relay when its egress is open",
          "[verify][false-pass]") {
    // Ingress from app=web pods of the namespace; the tenant's relay (app=web) has a policy of
    // its own that opens its egress to everything.
    json all = withPolicy(json::parse(
        R"({"podSelector": {}, "ingress": [{"from": [
            {"podSelector": {"matchLabels": {"app": "web"}}}]}]})"));
    const auto webPod = [](const std::string& name) {
        return json{{"metadata", {{"name", name}, {"labels", {{"app", "web"}}}}},
                    {"spec", json::object()}};
    };
    EgressInputs inputs;
    SECTION("the namespace's pods not read: unproven, never pass") {
        const auto openings = ingressOpenings(pod(), all, inputs);
        CHECK(openings.open.empty());
        REQUIRE(openings.doubts.size() == 1);
        CHECK_THAT(openings.doubts[0], Catch::Contains("were not read"));
        CHECK(egressStatic(pod(), all, inputs).verdict == Verdict::Unproven);
    }
    SECTION("the pods let in keep to the project's egress: nothing opens") {
        inputs.namespacePods = json{{"items", {webPod("web-1")}}};
        CHECK(ingressOpenings(pod(), all, inputs).open.empty());
        CHECK(egressStatic(pod(), all, inputs).verdict == Verdict::Pass);
    }
    SECTION("a pod let in whose own policy opens its egress: fail, naming it") {
        inputs.namespacePods = json{{"items", {webPod("web-1"), webPod("relay")}}};
        all.push_back(json::parse(R"({"metadata": {"name": "relay-out"},
            "spec": {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Egress"],
                     "egress": [{}]}})"));
        const auto openings = ingressOpenings(pod(), all, inputs);
        REQUIRE(openings.open.size() == 2);
        CHECK_THAT(openings.open[1], Catch::Contains("lets pod relay, whose own egress is open") &&
                                         Catch::Contains("networkpolicy/relay-out"));
        CHECK(egressStatic(pod(), all, inputs).verdict == Verdict::Fail);
    }
}

TEST_CASE("attack 58 N3: a rule no pod matches today still lets in the pod labelled tomorrow",
          "[verify][false-pass]") {
    // Ingress from helper=yes pods, none of which exists while verify reads; a policy opens the
    // egress of role=relay pods. A pod labelled both after verify relays the agent's data out.
    json all = withPolicy(json::parse(
        R"({"podSelector": {}, "ingress": [{"from": [
            {"podSelector": {"matchExpressions":
                [{"key": "helper", "operator": "In", "values": ["yes"]}]}}]}]})"));
    EgressInputs inputs;
    inputs.namespacePods = json{{"items", json::array()}};
    SECTION("no policy of the namespace opens a pod's egress: nothing to relay through") {
        CHECK(ingressOpenings(pod(), all, inputs).doubts.empty());
        CHECK(egressStatic(pod(), all, inputs).verdict == Verdict::Pass);
    }
    SECTION("a policy opens the egress of pods a tenant may label: unproven, never pass") {
        all.push_back(json::parse(R"({"metadata": {"name": "relay-out"},
            "spec": {"podSelector": {"matchLabels": {"role": "relay"}}, "policyTypes": ["Egress"],
                     "egress": [{}]}})"));
        const auto openings = ingressOpenings(pod(), all, inputs);
        CHECK(openings.open.empty());
        REQUIRE(openings.doubts.size() == 1);
        CHECK_THAT(openings.doubts[0],
                   Catch::Contains("none is a relay now") &&
                       Catch::Contains(R"(a pod labelled {"helper":"yes","role":"relay"})") &&
                       Catch::Contains("networkpolicy/relay-out"));
        CHECK(egressStatic(pod(), all, inputs).verdict == Verdict::Unproven);
    }
}

TEST_CASE("review 58 N3a, N3b: selectors with NotIn or Exists, and isolation with holes",
          "[verify][false-pass]") {
    EgressInputs inputs;
    inputs.namespacePods = json{{"items", json::array()}};
    json all = withPolicy(json::parse(
        R"({"podSelector": {}, "ingress": [{"from": [{"podSelector": {"matchExpressions": [
            {"key": "role", "operator": "NotIn", "values": ["a"]},
            {"key": "role", "operator": "Exists"}]}}]}]})"));
    SECTION("a relay policy for role Exists but NotIn [x]: a pod role=relay is both") {
        all.push_back(json::parse(R"({"metadata": {"name": "relay-out"},
            "spec": {"podSelector": {"matchExpressions": [
                {"key": "role", "operator": "Exists"},
                {"key": "role", "operator": "NotIn", "values": ["x"]}]},
                     "policyTypes": ["Egress"], "egress": [{}]}})"));
        const auto openings = ingressOpenings(pod(), all, inputs);
        REQUIRE(openings.doubts.size() == 1);
        CHECK_THAT(openings.doubts[0], Catch::Contains("networkpolicy/relay-out"));
    }
    SECTION("a relay policy for role In [decoy, relay] NotIn [decoy]") {
        all.push_back(json::parse(R"({"metadata": {"name": "relay-out"},
            "spec": {"podSelector": {"matchExpressions": [
                {"key": "role", "operator": "In", "values": ["decoy", "relay"]},
                {"key": "role", "operator": "NotIn", "values": ["decoy"]}]},
                     "policyTypes": ["Egress"], "egress": [{}]}})"));
        REQUIRE(ingressOpenings(pod(), all, inputs).doubts.size() == 1);
    }
    SECTION("default-deny narrowed to pods without a label: unproven") {
        for (auto& policy : all)
            if (policy["spec"]["podSelector"].empty())
                policy["spec"]["podSelector"] = json::parse(
                    R"({"matchExpressions": [{"key": "free", "operator": "DoesNotExist"}]})");
        all.push_back(json::parse(R"({"metadata": {"name": "narrowed"},
            "spec": {"podSelector": {"matchExpressions": [
                {"key": "free", "operator": "DoesNotExist"}]},
                     "policyTypes": ["Egress"], "egress": []}})"));
        const auto openings = ingressOpenings(pod(), all, inputs);
        bool said = false;
        for (const auto& doubt : openings.doubts)
            said = said ||
                   doubt.find("no policy isolates the egress of every pod") != std::string::npos;
        CHECK(said);
    }
}

TEST_CASE("review 58 C1: a Cilium ingress rule for the pod leaves egress unproven", "[verify]") {
    EgressInputs inputs;
    inputs.namespacePods = json{{"items", json::array()}};
    inputs.ciliumPolicies = json::array();
    SECTION("one that selects the pod by a prefixed label") {
        inputs.ciliumPolicies.push_back(json::parse(R"({"metadata": {"name": "in-from-world"},
            "spec": {"endpointSelector": {"matchLabels": {"k8s:app": "listen-1"}},
                     "ingress": [{"fromEntities": ["world"]}]}})"));
        const auto openings = ingressOpenings(pod(), policies(), inputs);
        REQUIRE(openings.doubts.size() == 1);
        CHECK_THAT(openings.doubts[0],
                   Catch::Contains("ciliumnetworkpolicy/in-from-world has 1 ingress rule for "
                                   "the pod; verify does not evaluate Cilium's ingress peers"));
        CHECK(openings.open.empty());
    }
    SECTION("selectors Cilium reads that plain labels do not answer (review 59 #4)") {
        for (
            const char* selector :
            {R"({"matchExpressions": [{"key": "k8s:app", "operator": "In", "values": ["listen-1"]}]})",
             R"({"matchLabels": {"any:app": "listen-1"}})",
             R"({"matchLabels": {"io.cilium.k8s.policy.serviceaccount": "default"}})",
             R"({"matchLabels": {"k8s:io.kubernetes.pod.namespace": "atk56-x"}})"}) {
            INFO(selector);
            inputs.ciliumPolicies = json::array(
                {json{{"metadata", {{"name", "in"}}},
                      {"spec",
                       {{"endpointSelector", json::parse(selector)},
                        {"ingress", json::array({{{"fromEntities", json::array({"world"})}}})}}}}});
            CHECK(ingressOpenings(pod(), policies(), inputs).doubts.size() == 1);
        }
    }
    SECTION("one in `specs` without an endpointSelector") {
        inputs.ciliumPolicies.push_back(json::parse(R"({"metadata": {"name": "no-selector"},
            "specs": [{"ingress": [{}, {}]}]})"));
        const auto openings = ingressOpenings(pod(), policies(), inputs);
        REQUIRE(openings.doubts.size() == 1);
        CHECK_THAT(openings.doubts[0], Catch::Contains("has 2 ingress rules for the pod (it has "
                                                       "no endpointSelector"));
    }
    SECTION("egress-only, another pod's, or a host policy: nothing said") {
        inputs.ciliumPolicies = json::parse(R"([
            {"metadata": {"name": "egress-only"},
             "spec": {"endpointSelector": {}, "egress": [{"toEntities": ["cluster"]}]}},
            {"metadata": {"name": "others"},
             "spec": {"endpointSelector": {"matchLabels": {"app": "other"}},
                      "ingress": [{"fromEntities": ["world"]}]}},
            {"metadata": {"name": "host"},
             "spec": {"nodeSelector": {}, "ingress": [{"fromEntities": ["world"]}]}}])");
        CHECK(ingressOpenings(pod(), policies(), inputs).doubts.empty());
    }
}

TEST_CASE("attack 59 A1: a pod no Ingress policy selects is open to every pod of the cluster",
          "[verify]") {
    EgressInputs inputs;
    inputs.namespacePods = json{{"items", json::array()}};
    json egressOnly = policies();
    egressOnly[0]["spec"]["policyTypes"] = json::array({"Egress"});
    const auto openings = ingressOpenings(pod(), egressOnly, inputs);
    REQUIRE(openings.open.size() == 1);
    CHECK_THAT(openings.open[0],
               Catch::Contains("no NetworkPolicy selecting pod listen-1 has Ingress in "
                               "policyTypes (2 policies in the namespace): any pod of the "
                               "cluster may connect in"));
    // Isolated by a policy for its label only: not said.
    json own = egressOnly;
    own.push_back(json::parse(R"({"metadata": {"name": "in"}, "spec": {"podSelector":
        {"matchLabels": {"app": "listen-1"}}, "policyTypes": ["Ingress"]}})"));
    CHECK(ingressOpenings(pod(), own, inputs).open.empty());
    // A Cilium policy's deny rules isolate nothing; its allow rules leave it a doubt.
    inputs.ciliumPolicies = json::parse(R"([{"metadata": {"name": "c"},
        "spec": {"endpointSelector": {}, "ingressDeny": [{"fromEntities": ["world"]}]}}])");
    CHECK(ingressOpenings(pod(), egressOnly, inputs).open.size() == 1);
    inputs.ciliumPolicies[0]["spec"]["ingress"] =
        json::array({{{"fromEndpoints", {json::object()}}}});
    const auto cilium = ingressOpenings(pod(), egressOnly, inputs);
    CHECK(cilium.open.empty());
    CHECK(cilium.doubts.size() == 1);
}
