#pragma once
// Why an agent's pods cannot start until its spec, quota or LimitRange changes (a pod the
// controller may not create, an image that cannot be pulled, a container configuration
// error), so a wait for it can stop with the real blocker instead of timing out.
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "rossoctl/kube/client.hpp"
#include "rossoctl/model/workload.hpp"

namespace rossoctl::app {

// The workload's own status (the controller could not create its pod), then one LIST of its
// pods ("pod P: image X cannot be pulled (ErrImagePull): ..."), then its Warning events seen
// since `since` (FailedCreate: ... exceeded quota); nullopt while the pods still may start.
std::optional<std::string> agentStartFailure(kube::Client& client, const std::string& ns,
                                             model::WorkloadType type,
                                             const nlohmann::json& workload,
                                             std::chrono::system_clock::time_point since);

// A Sandbox whose pod cannot be created (its status or its FailedCreate events since `since`);
// nullopt when nothing says so. Events it may not read are skipped.
std::optional<std::string> sandboxCreateFailure(kube::Client& client, const nlohmann::json& sandbox,
                                                std::chrono::system_clock::time_point since);

}  // namespace rossoctl::app
