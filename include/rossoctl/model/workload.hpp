#pragma once
// The workloads an agent can run as (Deployment, StatefulSet, Job, Sandbox), the Service in
// front of them, and how to read whether one is ready, whatever its type.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/model/pod.hpp"

namespace rossoctl::model {

enum class WorkloadType { Deployment, StatefulSet, Job, Sandbox };

// "deployment", "statefulset", "job", "sandbox"; nullopt for anything else.
std::optional<WorkloadType> parseWorkloadType(const std::string& text);
std::string workloadTypeName(WorkloadType type);
std::vector<WorkloadType> allWorkloadTypes();

struct WorkloadOptions {
    std::string name;
    std::string namespaceName;
    HardenedPodOptions pod;
    std::string storage;                        // StatefulSet: a claim template for the work volume
    std::optional<long> activeDeadlineSeconds;  // Job: how long it may run
};

// replicas 1, selector and template labels managedLabels(name), hardened pod.
nlohmann::json buildDeployment(const WorkloadOptions& options);
// serviceName = name (its governing Service), replicas 1.
nlohmann::json buildStatefulSet(const WorkloadOptions& options);
// backoffLimit 0, restartPolicy Never: a failed agent is not silently run again.
nlohmann::json buildJob(const WorkloadOptions& options);

// Selects the agent's pods; headless (clusterIP None) when asked or when there is no port.
nlohmann::json buildService(const std::string& name, const std::string& namespaceName,
                            std::optional<int> port, bool headless);

// What `agents list/get/wait` show about a workload of any type.
struct WorkloadStatus {
    bool ready = false;
    bool failed = false;    // will not become ready by waiting (a failed Job)
    std::string readyText;  // "1/1", "0/1"
    std::string reason;     // short: PodNotReady, Complete, BackoffLimitExceeded, ...
    std::string message;    // what the conditions say
};

// Deployment: Available and all replicas ready; StatefulSet: all replicas ready and current;
// Job: Complete, or its pod running and Ready (agents usually run until stopped);
// Sandbox: the Ready condition.
WorkloadStatus workloadStatus(WorkloadType type, const nlohmann::json& object);

// The image of the workload's first container, wherever its pod template lives.
std::string workloadImage(WorkloadType type, const nlohmann::json& object);

}  // namespace rossoctl::model
