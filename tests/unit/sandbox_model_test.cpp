#include <catch2/catch.hpp>

#include "rossoctl/model/sandbox.hpp"

using namespace rossoctl::model;

TEST_CASE("a sandbox is hardened", "[model]") {
    SandboxOptions options;
    options.name = "orders";
    options.namespaceName = "team1";
    options.pod.image = "python:3.12";
    options.pod.env = {{"MCP_URL", "http://mcp:8080"}};
    // A fixed instant, not the machine's: the deadline is measured from the given clock.
    const std::chrono::system_clock::time_point now{std::chrono::hours(400'000)};
    options.shutdownTime = now + std::chrono::hours(24);
    auto sandbox = buildSandbox(options, now);
    CHECK(sandbox["apiVersion"] == "agents.x-k8s.io/v1beta1");
    CHECK(sandbox["spec"]["operatingMode"] == "Running");
    const auto& spec = sandbox["spec"]["podTemplate"]["spec"];
    CHECK(spec["automountServiceAccountToken"] == false);
    CHECK(spec["securityContext"]["runAsNonRoot"] == true);
    const auto& container = spec["containers"][0];
    CHECK(container["name"] == "agent");
    CHECK(container["securityContext"]["allowPrivilegeEscalation"] == false);
    CHECK(container["securityContext"]["capabilities"]["drop"][0] == "ALL");
    CHECK(container["resources"]["limits"]["memory"] == "512Mi");
    CHECK(container["env"][0]["name"] == "MCP_URL");
    CHECK(spec["volumes"][0]["emptyDir"].is_object());
    CHECK(spec["activeDeadlineSeconds"] == 86400);
    CHECK(sandbox["spec"]["podTemplate"]["metadata"]["labels"]["app.kubernetes.io/name"] ==
          "orders");
    CHECK_FALSE(sandbox["spec"].contains("volumeClaimTemplates"));
}

TEST_CASE("v1alpha1 sandboxes use replicas, storage adds a claim", "[model]") {
    SandboxOptions options;
    options.name = "s";
    options.version = "v1alpha1";
    options.storage = "1Gi";
    options.pod.image = "busybox";
    const std::chrono::system_clock::time_point now{std::chrono::hours(400'000)};
    options.shutdownTime = now + std::chrono::hours(1);
    auto sandbox = buildSandbox(options, now);
    CHECK(sandbox["spec"]["replicas"] == 1);
    CHECK_FALSE(sandbox["spec"].contains("operatingMode"));
    CHECK(sandbox["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "workspace");
    for (const auto& volume : sandbox["spec"]["podTemplate"]["spec"]["volumes"])
        CHECK(volume["name"] != "workspace");
}

TEST_CASE("sandbox readiness is read from conditions", "[model]") {
    nlohmann::json sandbox = {
        {"metadata", {{"name", "s"}}},
        {"status",
         {{"conditions", {{{"type", "Ready"}, {"status", "False"}, {"reason", "PodNotReady"}}}}}}};
    std::string reason;
    CHECK_FALSE(sandboxReady(sandbox, &reason));
    CHECK(reason == "PodNotReady");
    sandbox["status"]["conditions"][0]["status"] = "True";
    CHECK(sandboxReady(sandbox));
    CHECK(sandboxPodName(sandbox) == "s");
    sandbox["metadata"]["annotations"]["agents.x-k8s.io/pod-name"] = "p";
    CHECK(sandboxPodName(sandbox) == "p");
}
