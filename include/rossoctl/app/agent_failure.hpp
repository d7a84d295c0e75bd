#pragma once
// Why an agent's pods cannot start until its spec changes (an image that cannot be pulled, a
// container configuration error), so a wait for it can stop instead of timing out.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "rossoctl/kube/client.hpp"
#include "rossoctl/model/workload.hpp"

namespace rossoctl::app {

// One LIST of the workload's pods; "pod P: image X cannot be pulled (ErrImagePull): ..." for
// the first that cannot start, nullopt while each still may.
std::optional<std::string> agentStartFailure(kube::Client& client, const std::string& ns,
                                             model::WorkloadType type,
                                             const nlohmann::json& workload);

}  // namespace rossoctl::app
