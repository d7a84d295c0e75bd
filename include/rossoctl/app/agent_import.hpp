#pragma once
// What `agents import` writes, computed from checked input before anything is sent: the
// workload, an optional Service, and the AgentRuntime that points at the workload.
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/kube/resource.hpp"
#include "rossoctl/model/egress_gate.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/model/workload.hpp"

namespace rossoctl::app {

struct ImportRequest {
    model::WorkloadType type = model::WorkloadType::Deployment;
    std::string name;
    std::string namespaceName;
    std::string image;
    std::string imagePullSecret;
    std::vector<model::EnvVar> env;
    std::vector<std::string> command;  // the container's command (ENTRYPOINT); empty: the image's
    std::vector<std::string> args;     // its args (CMD); empty: the image's
    std::optional<int> port;
    std::string cpu = "500m";
    std::string memory = "512Mi";
    std::string runtimeClass;
    std::string gateImage;  // Sandbox: its egress gate's image; empty: none (not a project)
    std::string storage;
    bool service = false;
    std::chrono::seconds lifetime{0};  // Sandbox and Job; 0 = none
    std::string sandboxVersion = "v1beta1";
    bool agentRuntime = true;  // the AgentRuntime CRD is served
};

struct PlannedObject {
    kube::ResourceRef ref;
    nlohmann::json object;
};

// Workload first, then the Service, then the AgentRuntime.
std::vector<PlannedObject> planImport(const ImportRequest& request,
                                      std::chrono::system_clock::time_point now);

// Checks of the request that do not depend on the cluster (which flags fit which type, name
// lengths the workload's pods need); throws UsageError.
void checkImportRequest(const ImportRequest& request);

}  // namespace rossoctl::app
