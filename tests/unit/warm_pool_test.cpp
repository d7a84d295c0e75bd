// The SandboxTemplate, SandboxWarmPool and SandboxClaim of `sandbox run --pool` on clusters
// with the agent-sandbox extensions, and the OWNER a sandbox list shows.
#include "rossoctl/app/run/warm_pool.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "rossoctl/app/agents.hpp"
#include "rossoctl/kube/timestamp.hpp"

using namespace rossoctl::app::run;
using nlohmann::json;

TEST_CASE("one warm pool per shape, named the same for template and pool", "[run][warm-pool]") {
    RunPodShape other;
    other.memory = "1Gi";
    CHECK(warmPoolName(RunPodShape{}) == warmPoolName(RunPodShape{}));
    CHECK(warmPoolName(RunPodShape{}) != warmPoolName(other));
    CHECK(warmPoolName(RunPodShape{}).size() <= 63);
    const json pool = sandboxWarmPoolManifest(other, 3);
    CHECK(pool["apiVersion"] == "extensions.agents.x-k8s.io/v1beta1");
    CHECK(pool["kind"] == "SandboxWarmPool");
    CHECK(pool["metadata"]["name"] == warmPoolName(other));
    CHECK(pool["spec"]["replicas"] == 3);
    CHECK(pool["spec"]["sandboxTemplateRef"]["name"] == warmPoolName(other));
}

TEST_CASE("the template's pod is hardened as the bare pool pods, with their deadline",
          "[run][warm-pool]") {
    const json object = sandboxTemplateManifest(RunPodShape{}, 3600);
    CHECK(object["kind"] == "SandboxTemplate");
    CHECK(object["spec"]["networkPolicyManagement"] == "Unmanaged");
    const json bare = warmPodManifest(RunPodShape{}, 3600)["spec"];
    json spec = object["spec"]["podTemplate"]["spec"];
    // An unclaimed warm Sandbox has no shutdownTime: without it verify said "no deadline".
    CHECK(spec["activeDeadlineSeconds"] == bare["activeDeadlineSeconds"]);
    CHECK(spec["securityContext"] == bare["securityContext"]);
    CHECK(spec["automountServiceAccountToken"] == false);
    CHECK(spec["volumes"] == bare["volumes"]);
    CHECK(spec["containers"][0]["securityContext"] == bare["containers"][0]["securityContext"]);
    CHECK(spec["containers"][0]["resources"] == bare["containers"][0]["resources"]);
    CHECK(spec["containers"][0]["name"] == "run");
}

TEST_CASE("a claim sets no env or volumes and deletes itself at its shutdown time",
          "[run][warm-pool]") {
    const auto shutdown = *rossoctl::kube::parseTimestamp("2030-01-02T03:04:05Z");
    const json claim = sandboxClaimManifest(RunPodShape{}, shutdown);
    CHECK(claim["kind"] == "SandboxClaim");
    CHECK(claim["metadata"]["generateName"] == "rossoctl-run-");
    CHECK_FALSE(claim["metadata"].contains("name"));
    CHECK(claim["spec"]["warmPoolRef"]["name"] == warmPoolName(RunPodShape{}));
    // Upstream cold-starts a claim with env or volume templates, skipping the warm pool.
    CHECK_FALSE(claim["spec"].contains("env"));
    CHECK_FALSE(claim["spec"].contains("volumeClaimTemplates"));
    CHECK(claim["spec"]["lifecycle"]["shutdownPolicy"] == "Delete");
    CHECK(claim["spec"]["lifecycle"]["shutdownTime"] == "2030-01-02T03:04:05Z");
}

TEST_CASE("sandbox list names a sandbox's warm pool or claim", "[run][warm-pool]") {
    json sandbox = {{"metadata", {{"name", "s"}}}};
    CHECK(rossoctl::app::sandboxOwner(sandbox) == "<none>");
    sandbox["metadata"]["ownerReferences"] = {
        {{"kind", "Other"}, {"name", "x"}},
        {{"kind", "SandboxClaim"}, {"name", "rossoctl-run-ab"}, {"controller", true}}};
    CHECK(rossoctl::app::sandboxOwner(sandbox) == "SandboxClaim/rossoctl-run-ab");
}
