// project create proves its default-deny live: where NetworkPolicy is not enforced (the local
// cluster's switch: the node without its policy engine) it says so and exits 3; --no-check skips
// the proof.
#include <catch2/catch.hpp>
#include <chrono>

#include "fault_support.hpp"
#include "harness.hpp"
#include "rossoctl/kube/resource.hpp"

using nlohmann::json;
namespace resources = rossoctl::kube::resources;

namespace {

bool checkObjectsGone(const std::string& ns) {
    const std::string selector = "rossoctl.dev/enforcement-check";
    rossoctl::kube::ListOptions options;
    options.labelSelector = selector;
    return harness::admin().list(resources::networkPolicies(), ns, options)["items"].empty() &&
           harness::admin().list(resources::pods(), ns, options)["items"].empty();
}

}  // namespace

TEST_CASE("project create proves default-deny is enforced", "[project-check]") {
    harness::TestNamespace project("check");
    // TestNamespace made it: label it a project so create converges instead of refusing it.
    harness::admin().patch(
        resources::namespaces(), "", project.name(), rossoctl::kube::PatchType::Merge,
        json{{"metadata", {{"labels", {{"rossoctl.dev/sandbox-project", "true"}}}}}}.dump());

    SECTION("an enforcing cluster passes the check, quickly") {
        const auto started = std::chrono::steady_clock::now();
        auto result = harness::rossoctl({"project", "create", project.name()});
        const auto took = std::chrono::steady_clock::now() - started;
        INFO(result.out << result.err);
        CHECK(result.exitCode == 0);
        CHECK_THAT(result.err, Catch::Contains("default-deny holds") && Catch::Contains("denied:"));
        WARN("project create with the check: "
             << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
        CHECK(harness::eventually([&] { return checkObjectsGone(project.name()); }, 30));
    }
}

TEST_CASE("project create fails loudly where policies are not enforced; --no-check skips it",
          "[project-check][outage]") {
    harness::TestNamespace project("check-off");
    harness::admin().patch(
        resources::namespaces(), "", project.name(), rossoctl::kube::PatchType::Merge,
        json{{"metadata", {{"labels", {{"rossoctl.dev/sandbox-project", "true"}}}}}}.dump());
    harness::PoliciesUnenforced unenforced;
    auto result = harness::rossoctl({"project", "create", project.name()});
    INFO(result.out << result.err);
    CHECK(result.exitCode == 3);
    CHECK_THAT(result.err,
               Catch::Contains("NetworkPolicy is NOT ENFORCED") && Catch::Contains("--no-check"));
    CHECK(
        harness::admin().getIfExists(resources::networkPolicies(), project.name(), "default-deny"));
    CHECK(harness::eventually([&] { return checkObjectsGone(project.name()); }, 30));

    auto skipped = harness::rossoctl({"project", "create", project.name(), "--no-check"});
    INFO(skipped.out << skipped.err);
    CHECK(skipped.exitCode == 0);
    CHECK(skipped.err.find("Enforcement") == std::string::npos);
    CHECK(skipped.err.find("NOT ENFORCED") == std::string::npos);
}
