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
    SECTION("the project's own policies let nothing in") {
        CHECK(ingressOpenings(pod(), policies()).empty());
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
        CHECK(ingressOpenings(pod(), policies).size() == 2);
    }
    SECTION("pods of its own namespace, or a policy selecting other pods, open nothing") {
        CHECK(ingressOpenings(pod(), withPolicy(json::parse(
                                         R"({"podSelector": {}, "ingress": [{"from": [
                                             {"podSelector": {"matchLabels": {"app": "web"}}}]}]})")))
                  .empty());
        CHECK(ingressOpenings(pod(), withPolicy(json::parse(
                                         R"({"podSelector": {"matchLabels": {"app": "other"}},
                                             "ingress": [{}]})")))
                  .empty());
        CHECK(ingressOpenings(pod(), withPolicy(json::parse(
                                         R"({"podSelector": {}, "policyTypes": ["Egress"],
                                             "ingress": [{}]})")))
                  .empty());
    }
}
