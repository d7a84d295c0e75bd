#pragma once
// Deleting an agent: its AgentRuntime and Service first (so nothing points at a missing
// workload), then its managed workload, whose pods go before it; each by the UID it was read
// with, so a same-named object created meanwhile is never touched.
#include <chrono>
#include <functional>
#include <string>

#include "rossoctl/app/context.hpp"

namespace rossoctl::app {

struct AgentDeleteRequest {
    std::string namespaceName;
    std::string name;
    bool wait = true;
    std::chrono::milliseconds timeout{0};
    std::string timeoutText;  // as the user gave it, for the time-out message
};

// A volume claim the agent's workload made for --storage (its /workspace): a Sandbox's claims
// are owned by it and go with it; a StatefulSet leaves its claims (and their data) behind.
struct AgentClaim {
    std::string name;
    bool deletedWithAgent = false;
};

// Calls `deleted` with "deployment.apps"-style type names as each part is deleted (or was
// already gone), and `claim` for each volume claim of the workload once it is deleted. Throws
// Error when no managed part exists (an unmanaged workload of that name is explained instead),
// or when a part is still there after the time-out.
void deleteAgent(Context& context, const AgentDeleteRequest& request,
                 const std::function<void(const std::string& typeName)>& deleted,
                 const std::function<void(const AgentClaim&)>& claim = {});

}  // namespace rossoctl::app
