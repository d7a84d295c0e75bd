#include "rossoctl/model/workload.hpp"

#include <fmt/format.h>

#include "rossoctl/model/sandbox.hpp"

namespace rossoctl::model {

using nlohmann::json;

namespace {

json objectMeta(const std::string& name, const std::string& namespaceName) {
    return {{"name", name}, {"namespace", namespaceName}, {"labels", managedLabels(name)}};
}

json podTemplate(const std::string& name, const HardenedPodOptions& pod) {
    return {{"metadata", {{"labels", managedLabels(name)}}}, {"spec", hardenedPodSpec(pod)}};
}

json workClaimTemplate(const std::string& storage) {
    return {{"metadata", {{"name", kWorkVolume}}},
            {"spec",
             {{"accessModes", json::array({"ReadWriteOnce"})},
              {"resources", {{"requests", {{"storage", storage}}}}}}}};
}

const json& field(const json& object, const char* name) {
    static const json kEmpty = json::object();
    if (!object.is_object()) return kEmpty;
    auto it = object.find(name);
    return it == object.end() ? kEmpty : *it;
}

long number(const json& object, const char* name) {
    const json& value = field(object, name);
    return value.is_number_integer() ? value.get<long>() : 0;
}

// The condition of that type, or an empty object.
const json& conditionOrNull(const json& object, const std::string& type) {
    static const json kEmpty = json::object();
    const json& conditions = field(field(object, "status"), "conditions");
    if (!conditions.is_array()) return kEmpty;
    for (const auto& c : conditions)
        if (c.value("type", "") == type) return c;
    return kEmpty;
}

bool conditionTrue(const json& object, const std::string& type) {
    return conditionOrNull(object, type).value("status", "") == "True";
}

// "Available=False (MinimumReplicasUnavailable: ...); Progressing=True (...)"
std::string describeConditions(const json& object) {
    const json& conditions = field(field(object, "status"), "conditions");
    std::string text;
    if (!conditions.is_array()) return text;
    for (const auto& c : conditions) {
        std::string one = c.value("type", "") + "=" + c.value("status", "");
        std::string reason = c.value("reason", "");
        std::string message = c.value("message", "");
        if (!reason.empty() || !message.empty())
            one += " (" + reason + (reason.empty() || message.empty() ? "" : ": ") + message + ")";
        text += (text.empty() ? "" : "; ") + one;
    }
    return text;
}

WorkloadStatus replicaStatus(const json& object, bool available) {
    const json& spec = field(object, "spec");
    const json& status = field(object, "status");
    long desired = field(spec, "replicas").is_number_integer() ? number(spec, "replicas") : 1;
    long ready = number(status, "readyReplicas");
    long updated = number(status, "updatedReplicas");
    bool observed =
        number(status, "observedGeneration") >= number(field(object, "metadata"), "generation");
    WorkloadStatus result;
    result.readyText = fmt::format("{}/{}", ready, desired);
    result.ready = observed && available && ready >= desired && updated >= desired;
    if (result.ready) {
        result.reason = "Ready";
    } else if (!observed) {
        result.reason = "NotObserved";
    } else {
        result.reason = "PodsNotReady";
    }
    std::string conditions = describeConditions(object);
    result.message = fmt::format("{} of {} replicas ready, {} updated", ready, desired, updated);
    if (!conditions.empty()) result.message += "; " + conditions;
    return result;
}

WorkloadStatus jobStatus(const json& job) {
    WorkloadStatus result;
    long readyPods = number(field(job, "status"), "ready");
    result.message = describeConditions(job);
    if (conditionTrue(job, "Complete")) {
        result.ready = true;
        result.reason = "Complete";
    } else if (conditionTrue(job, "Failed")) {
        result.failed = true;
        result.reason = conditionOrNull(job, "Failed").value("reason", "Failed");
    } else if (readyPods > 0) {
        result.ready = true;
        result.reason = "Running";
    } else {
        result.reason = number(field(job, "status"), "active") > 0 ? "PodNotReady" : "Pending";
    }
    result.readyText = fmt::format("{}/1", result.ready ? 1 : 0);
    if (result.message.empty())
        result.message = fmt::format("{} active pod(s), {} ready",
                                     number(field(job, "status"), "active"), readyPods);
    return result;
}

WorkloadStatus sandboxStatus(const json& sandbox) {
    WorkloadStatus result;
    std::string message;
    result.ready = sandboxReady(sandbox, &result.reason, &message);
    // A finished sandbox's pod is not recreated: waiting longer cannot help.
    result.failed = !result.ready && conditionTrue(sandbox, "Finished");
    if (result.reason.empty()) result.reason = result.ready ? "Ready" : "Pending";
    result.readyText = result.ready ? "1/1" : "0/1";
    result.message = describeConditions(sandbox);
    if (result.message.empty()) result.message = "no conditions reported yet";
    return result;
}

}  // namespace

std::optional<WorkloadType> parseWorkloadType(const std::string& text) {
    for (auto type : allWorkloadTypes())
        if (workloadTypeName(type) == text) return type;
    return std::nullopt;
}

std::string workloadTypeName(WorkloadType type) {
    switch (type) {
        case WorkloadType::Deployment:
            return "deployment";
        case WorkloadType::StatefulSet:
            return "statefulset";
        case WorkloadType::Job:
            return "job";
        case WorkloadType::Sandbox:
            return "sandbox";
    }
    return "unknown";
}

std::vector<WorkloadType> allWorkloadTypes() {
    return {WorkloadType::Deployment, WorkloadType::StatefulSet, WorkloadType::Job,
            WorkloadType::Sandbox};
}

json buildDeployment(const WorkloadOptions& options) {
    return {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", objectMeta(options.name, options.namespaceName)},
            {"spec",
             {{"replicas", 1},
              {"selector", {{"matchLabels", managedLabels(options.name)}}},
              {"template", podTemplate(options.name, options.pod)}}}};
}

json buildStatefulSet(const WorkloadOptions& options) {
    HardenedPodOptions pod = options.pod;
    pod.workVolumeFromClaim = !options.storage.empty();
    json spec = {{"replicas", 1},
                 {"serviceName", options.name},
                 {"selector", {{"matchLabels", managedLabels(options.name)}}},
                 {"template", podTemplate(options.name, pod)}};
    if (!options.storage.empty())
        spec["volumeClaimTemplates"] = json::array({workClaimTemplate(options.storage)});
    return {{"apiVersion", "apps/v1"},
            {"kind", "StatefulSet"},
            {"metadata", objectMeta(options.name, options.namespaceName)},
            {"spec", spec}};
}

json buildJob(const WorkloadOptions& options) {
    HardenedPodOptions pod = options.pod;
    pod.restartPolicy = "Never";
    json spec = {{"backoffLimit", 0}, {"template", podTemplate(options.name, pod)}};
    if (options.activeDeadlineSeconds)
        spec["activeDeadlineSeconds"] = *options.activeDeadlineSeconds;
    return {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", objectMeta(options.name, options.namespaceName)},
            {"spec", spec}};
}

json buildService(const std::string& name, const std::string& namespaceName,
                  std::optional<int> port, bool headless) {
    json spec = {{"selector", managedLabels(name)}};
    if (headless || !port) spec["clusterIP"] = "None";
    if (port)
        spec["ports"] = json::array(
            {{{"name", "agent"}, {"port", *port}, {"targetPort", *port}, {"protocol", "TCP"}}});
    return {{"apiVersion", "v1"},
            {"kind", "Service"},
            {"metadata", objectMeta(name, namespaceName)},
            {"spec", spec}};
}

WorkloadStatus workloadStatus(WorkloadType type, const json& object) {
    switch (type) {
        case WorkloadType::Deployment: {
            WorkloadStatus status = replicaStatus(object, conditionTrue(object, "Available"));
            const json& progressing = conditionOrNull(object, "Progressing");
            if (progressing.value("reason", "") == "ProgressDeadlineExceeded") {
                status.failed = true;
                status.reason = "ProgressDeadlineExceeded";
            }
            return status;
        }
        case WorkloadType::StatefulSet:
            return replicaStatus(object, true);
        case WorkloadType::Job:
            return jobStatus(object);
        case WorkloadType::Sandbox:
            return sandboxStatus(object);
    }
    return {};
}

std::string workloadImage(WorkloadType type, const json& object) {
    const json& spec = field(object, "spec");
    const json& podSpec = type == WorkloadType::Sandbox ? field(field(spec, "podTemplate"), "spec")
                                                        : field(field(spec, "template"), "spec");
    const json& containers = field(podSpec, "containers");
    if (!containers.is_array() || containers.empty()) return "";
    return containers[0].value("image", "");
}

}  // namespace rossoctl::model
