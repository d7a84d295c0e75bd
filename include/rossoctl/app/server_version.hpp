#pragma once
// What `rossoctl version` reads from the server: its /version, and the versions of the
// agent-sandbox API groups it serves (agent-sandbox 1.0 serves v1beta1 only, v0.5 both).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/app/context.hpp"

namespace rossoctl::app {

struct ServedGroup {
    std::string name;  // agents.x-k8s.io, extensions.agents.x-k8s.io
    std::vector<std::string> versions;
    std::string preferredVersion;
};

struct ServerVersion {
    nlohmann::json version;                 // GET /version, as the server sent it
    std::vector<ServedGroup> agentSandbox;  // the groups served; empty: agent-sandbox is not
};

// The agent-sandbox groups rossoctl uses, in the order they are shown.
inline const std::vector<std::string>& agentSandboxGroups() {
    static const std::vector<std::string> groups{"agents.x-k8s.io", "extensions.agents.x-k8s.io"};
    return groups;
}

ServerVersion readServerVersion(Context& context);

}  // namespace rossoctl::app
