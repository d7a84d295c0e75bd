// project create --runtime-class: the namespace records the RuntimeClass, and a
// ValidatingAdmissionPolicy bound to the project's namespace refuses pods without it.
#include <catch2/catch.hpp>

#include "rossoctl/errors.hpp"
#include "rossoctl/model/project.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

namespace {

class NoResolver : public model::HostResolver {
  public:
    std::vector<std::string> resolve(const std::string& host) override {
        throw Error("no lookups here: " + host);
    }
};

model::ProjectPlan plan(const std::string& runtimeClass) {
    model::ProjectOptions options;
    options.name = "team1";
    options.runtimeClass = runtimeClass;
    model::validateProjectOptions(options);
    NoResolver resolver;
    return model::planProject(options, model::EgressMechanism::NetworkPolicy, resolver);
}

}  // namespace

TEST_CASE("project create --runtime-class records it and enforces it before any pod",
          "[project][isolation]") {
    const auto planned = plan("gvisor");
    std::vector<std::string> names;
    for (const auto& object : planned.objects) names.push_back(object.displayName());
    REQUIRE(names.size() >= 3);
    CHECK(names[0] == "namespace/team1");
    CHECK(names[1] == "validatingadmissionpolicy/rossoctl-runtime-class-team1");
    CHECK(names[2] == "validatingadmissionpolicybinding/rossoctl-runtime-class-team1");
    const json& ns = planned.objects[0].object;
    CHECK(ns["metadata"]["annotations"]["rossoctl.dev/runtime-class"] == "gvisor");
    const json& policy = planned.objects[1].object;
    CHECK(planned.objects[1].ref.namespaced == false);
    CHECK(policy["apiVersion"] == "admissionregistration.k8s.io/v1");
    CHECK(policy["spec"]["failurePolicy"] == "Fail");
    CHECK(policy["spec"]["matchConstraints"]["resourceRules"][0]["resources"] ==
          json::array({"pods"}));
    CHECK(policy["spec"]["validations"][0]["expression"] ==
          "has(object.spec.runtimeClassName) && object.spec.runtimeClassName == 'gvisor'");
    const json& binding = planned.objects[2].object;
    CHECK(binding["spec"]["policyName"] == "rossoctl-runtime-class-team1");
    CHECK(binding["spec"]["validationActions"] == json::array({"Deny"}));
    CHECK(binding["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]
                 ["kubernetes.io/metadata.name"] == "team1");
    for (const auto& object : planned.objects)
        CHECK(object.object["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "rossoctl");
}

TEST_CASE("without --runtime-class nothing is required, and a re-run prunes the policy",
          "[project][isolation]") {
    const auto planned = plan("");
    for (const auto& object : planned.objects)
        CHECK(object.object.value("kind", "").find("ValidatingAdmissionPolicy") ==
              std::string::npos);
    CHECK_FALSE(planned.objects[0].object["metadata"]["annotations"].contains(
        "rossoctl.dev/runtime-class"));
    std::vector<std::string> optional;
    for (const auto& object : model::optionalProjectObjects("team1"))
        optional.push_back(object.displayName());
    // Binding first: a policy without its binding does nothing, a binding without its policy
    // refuses every pod.
    CHECK(optional[0] == "validatingadmissionpolicybinding/rossoctl-runtime-class-team1");
    CHECK(optional[1] == "validatingadmissionpolicy/rossoctl-runtime-class-team1");
}

TEST_CASE(
    "project create --runtime-class: a bad name is a usage error; dry-run prints the "
    "policy",
    "[project][command][isolation]") {
    testing::checkUsageErrors({{"project", "create", "team1", "--runtime-class", "G Visor"}});
    TestHost host;
    REQUIRE(host.run({"project", "create", "team1", "--runtime-class", "gvisor", "--dry-run=client",
                      "-o", "json"}) == 0);
    CHECK(host.server.writes().empty());
    const json printed = testing::printedJson(host.out.str());
    CHECK(printed["items"][1]["kind"] == "ValidatingAdmissionPolicy");
    CHECK(printed["items"][2]["kind"] == "ValidatingAdmissionPolicyBinding");
}
