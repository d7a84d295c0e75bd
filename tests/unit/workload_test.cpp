#include "rossoctl/model/workload.hpp"

#include <catch2/catch.hpp>

#include "rossoctl/app/agent_import.hpp"
#include "rossoctl/errors.hpp"

using namespace rossoctl;
using namespace rossoctl::model;
using nlohmann::json;

namespace {

WorkloadOptions ordersOptions() {
    WorkloadOptions options;
    options.name = "orders";
    options.namespaceName = "team1";
    options.pod.image = "ghcr.io/acme/orders:1.4";
    options.pod.env = {{"MCP_URL", "http://mcp:8080"}};
    return options;
}

void checkHardened(const json& podTemplate) {
    CHECK(podTemplate["metadata"]["labels"] == managedLabels("orders"));
    const json& spec = podTemplate["spec"];
    CHECK(spec["automountServiceAccountToken"] == false);
    CHECK(spec["securityContext"]["runAsNonRoot"] == true);
    const json& container = spec["containers"][0];
    CHECK(container["name"] == "agent");
    CHECK(container["securityContext"]["allowPrivilegeEscalation"] == false);
    CHECK(container["securityContext"]["capabilities"]["drop"][0] == "ALL");
    CHECK(container["resources"]["limits"]["cpu"] == "500m");
}

app::ImportRequest ordersRequest(WorkloadType type) {
    app::ImportRequest request;
    request.type = type;
    request.name = "orders";
    request.namespaceName = "team1";
    request.image = "ghcr.io/acme/orders:1.4";
    request.lifetime = std::chrono::hours(2);
    return request;
}

const auto kNow = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));

}  // namespace

TEST_CASE("a deployment agent: one replica, managed labels, hardened pod", "[workload]") {
    auto deployment = buildDeployment(ordersOptions());
    CHECK(deployment["apiVersion"] == "apps/v1");
    CHECK(deployment["kind"] == "Deployment");
    CHECK(deployment["metadata"]["namespace"] == "team1");
    CHECK(deployment["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "rossoctl");
    CHECK(deployment["spec"]["replicas"] == 1);
    CHECK(deployment["spec"]["selector"]["matchLabels"] == managedLabels("orders"));
    checkHardened(deployment["spec"]["template"]);
    // A ReplicaSet's pods may not carry a deadline; the apiserver would refuse it.
    CHECK_FALSE(deployment["spec"]["template"]["spec"].contains("activeDeadlineSeconds"));
}

TEST_CASE("a statefulset agent names its governing service and claims storage", "[workload]") {
    auto options = ordersOptions();
    options.storage = "1Gi";
    auto set = buildStatefulSet(options);
    CHECK(set["kind"] == "StatefulSet");
    CHECK(set["spec"]["serviceName"] == "orders");
    CHECK(set["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "workspace");
    checkHardened(set["spec"]["template"]);
    for (const auto& volume : set["spec"]["template"]["spec"]["volumes"])
        CHECK(volume["name"] != "workspace");
}

TEST_CASE("a job agent is not retried and has a deadline", "[workload]") {
    auto options = ordersOptions();
    options.activeDeadlineSeconds = 3600;
    auto job = buildJob(options);
    CHECK(job["apiVersion"] == "batch/v1");
    CHECK(job["spec"]["backoffLimit"] == 0);
    CHECK(job["spec"]["activeDeadlineSeconds"] == 3600);
    CHECK(job["spec"]["template"]["spec"]["restartPolicy"] == "Never");
    checkHardened(job["spec"]["template"]);
}

TEST_CASE("services select the agent's pods; headless without a port", "[workload]") {
    auto service = buildService("orders", "team1", 8080, false);
    CHECK(service["spec"]["selector"] == managedLabels("orders"));
    CHECK(service["spec"]["ports"][0]["port"] == 8080);
    CHECK_FALSE(service["spec"].contains("clusterIP"));
    CHECK(buildService("orders", "team1", std::nullopt, false)["spec"]["clusterIP"] == "None");
    CHECK(buildService("orders", "team1", 80, true)["spec"]["clusterIP"] == "None");
}

TEST_CASE("workload types parse by their lower-case names", "[workload]") {
    for (auto type : allWorkloadTypes()) CHECK(parseWorkloadType(workloadTypeName(type)) == type);
    CHECK_FALSE(parseWorkloadType("Deployment"));
    CHECK_FALSE(parseWorkloadType("pod"));
}

TEST_CASE("deployment readiness needs Available, ready replicas and an observed spec",
          "[workload]") {
    json deployment = {{"metadata", {{"generation", 2}}},
                       {"spec", {{"replicas", 1}}},
                       {"status",
                        {{"observedGeneration", 2},
                         {"readyReplicas", 0},
                         {"updatedReplicas", 1},
                         {"conditions",
                          {{{"type", "Available"},
                            {"status", "False"},
                            {"reason", "MinimumReplicasUnavailable"},
                            {"message", "Deployment does not have minimum availability."}}}}}}};
    auto status = workloadStatus(WorkloadType::Deployment, deployment);
    CHECK_FALSE(status.ready);
    CHECK(status.readyText == "0/1");
    CHECK_THAT(status.message, Catch::Contains("MinimumReplicasUnavailable"));
    deployment["status"]["readyReplicas"] = 1;
    deployment["status"]["conditions"][0]["status"] = "True";
    CHECK(workloadStatus(WorkloadType::Deployment, deployment).ready);
    deployment["metadata"]["generation"] = 3;  // a newer spec not yet rolled out
    CHECK_FALSE(workloadStatus(WorkloadType::Deployment, deployment).ready);
}

TEST_CASE("job readiness: complete or a ready pod; failed stops the wait", "[workload]") {
    json job = {{"metadata", json::object()}, {"status", {{"active", 1}}}};
    CHECK_FALSE(workloadStatus(WorkloadType::Job, job).ready);
    job["status"]["ready"] = 1;
    CHECK(workloadStatus(WorkloadType::Job, job).reason == "Running");
    job["status"] = {
        {"conditions", {{{"type", "Failed"}, {"status", "True"}, {"reason", "DeadlineExceeded"}}}}};
    auto failed = workloadStatus(WorkloadType::Job, job);
    CHECK(failed.failed);
    CHECK(failed.reason == "DeadlineExceeded");
    job["status"]["conditions"][0] = {{"type", "Complete"}, {"status", "True"}};
    CHECK(workloadStatus(WorkloadType::Job, job).reason == "Complete");
}

TEST_CASE("sandbox and statefulset readiness", "[workload]") {
    json sandbox = {{"metadata", {{"name", "s"}}},
                    {"status",
                     {{"conditions",
                       {{{"type", "Ready"}, {"status", "False"}, {"reason", "PodNotReady"}},
                        {{"type", "Finished"}, {"status", "True"}, {"reason", "PodFailed"}}}}}}};
    auto status = workloadStatus(WorkloadType::Sandbox, sandbox);
    CHECK_FALSE(status.ready);
    CHECK(status.failed);
    CHECK(status.reason == "PodNotReady");
    json set = {
        {"metadata", {{"generation", 1}}},
        {"spec", {{"replicas", 1}}},
        {"status", {{"observedGeneration", 1}, {"readyReplicas", 1}, {"updatedReplicas", 1}}}};
    CHECK(workloadStatus(WorkloadType::StatefulSet, set).ready);
    CHECK(workloadImage(WorkloadType::StatefulSet, buildStatefulSet(ordersOptions())) ==
          "ghcr.io/acme/orders:1.4");
}

TEST_CASE("import plans a v1beta1 sandbox whose deadline equals its lifetime", "[workload]") {
    auto planned = app::planImport(ordersRequest(WorkloadType::Sandbox), kNow);
    REQUIRE(planned.size() == 2);
    const json& sandbox = planned[0].object;
    CHECK(planned[0].ref.version == "v1beta1");
    CHECK(sandbox["apiVersion"] == "agents.x-k8s.io/v1beta1");
    CHECK(sandbox["spec"]["operatingMode"] == "Running");
    CHECK(sandbox["spec"]["shutdownTime"] == "2023-11-15T00:13:20Z");
    CHECK(sandbox["spec"]["podTemplate"]["spec"]["activeDeadlineSeconds"] == 7200);
    CHECK(sandbox["spec"]["podTemplate"]["spec"]["containers"][0]["name"] == "agent");
    const json& runtime = planned[1].object;
    CHECK(runtime["apiVersion"] == "agent.rossoctl.dev/v1alpha1");
    CHECK(runtime["spec"]["type"] == "agent");
    CHECK(runtime["spec"]["targetRef"] ==
          json{{"apiVersion", "agents.x-k8s.io/v1beta1"}, {"kind", "Sandbox"}, {"name", "orders"}});
}

TEST_CASE("import plans a v1alpha1 sandbox where only that version is served", "[workload]") {
    auto request = ordersRequest(WorkloadType::Sandbox);
    request.sandboxVersion = "v1alpha1";
    request.port = 8080;
    auto planned = app::planImport(request, kNow);
    REQUIRE(planned.size() == 2);  // the controller makes the Service from spec.service
    const json& sandbox = planned[0].object;
    CHECK(planned[0].ref.apiVersion() == "agents.x-k8s.io/v1alpha1");
    CHECK(sandbox["apiVersion"] == "agents.x-k8s.io/v1alpha1");
    CHECK(sandbox["spec"]["replicas"] == 1);
    CHECK_FALSE(sandbox["spec"].contains("operatingMode"));
    CHECK(sandbox["spec"]["service"] == true);
    CHECK(sandbox["spec"]["podTemplate"]["spec"]["activeDeadlineSeconds"] == 7200);
    CHECK(planned[1].object["spec"]["targetRef"]["apiVersion"] == "agents.x-k8s.io/v1alpha1");
}

TEST_CASE("import plans workload, service, runtime in that order", "[workload]") {
    auto request = ordersRequest(WorkloadType::StatefulSet);
    request.lifetime = std::chrono::seconds(0);
    request.service = true;
    auto planned = app::planImport(request, kNow);
    REQUIRE(planned.size() == 3);
    CHECK(planned[0].ref.kind == "StatefulSet");
    CHECK(planned[1].ref.kind == "Service");
    CHECK(planned[1].object["spec"]["clusterIP"] == "None");
    CHECK(planned[2].object["spec"]["targetRef"]["kind"] == "StatefulSet");

    request.agentRuntime = false;
    CHECK(app::planImport(request, kNow).size() == 2);

    auto job = ordersRequest(WorkloadType::Job);
    auto jobPlan = app::planImport(job, kNow);
    CHECK(jobPlan[0].object["spec"]["activeDeadlineSeconds"] == 7200);
}

TEST_CASE("import requests are checked against their type", "[workload]") {
    auto request = ordersRequest(WorkloadType::Deployment);
    CHECK_THROWS_WITH(app::checkImportRequest(request), Catch::Contains("--lifetime needs"));
    request.lifetime = std::chrono::seconds(0);
    CHECK_NOTHROW(app::checkImportRequest(request));
    request.storage = "1Gi";
    CHECK_THROWS_AS(app::checkImportRequest(request), UsageError);
    request.storage.clear();
    request.name = "9lives";
    CHECK_NOTHROW(app::checkImportRequest(request));
    request.port = 80;  // a Service name must start with a letter
    CHECK_THROWS_WITH(app::checkImportRequest(request), Catch::Contains("start with a letter"));
    auto set = ordersRequest(WorkloadType::StatefulSet);
    set.lifetime = std::chrono::seconds(0);
    set.name = std::string(53, 'a');
    CHECK_THROWS_WITH(app::checkImportRequest(set), Catch::Contains("at most 52"));
    set.name = "Orders";
    CHECK_THROWS_AS(app::checkImportRequest(set), UsageError);
}
