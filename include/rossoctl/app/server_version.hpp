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

// A group whose discovery the server refused or failed (403, 503): whether it is served is
// not known, which is not "not served".
struct UnreadGroup {
    std::string name;
    std::string error;  // the server's words, unescaped
};

struct ServerVersion {
    nlohmann::json version;                 // GET /version, as the server sent it
    std::vector<ServedGroup> agentSandbox;  // the groups served; empty: agent-sandbox is not
    std::vector<UnreadGroup> unread;        // besides: the groups discovery did not answer for
};

// The agent-sandbox groups rossoctl uses, in the order they are shown.
inline const std::vector<std::string>& agentSandboxGroups() {
    static const std::vector<std::string> groups{"agents.x-k8s.io", "extensions.agents.x-k8s.io"};
    return groups;
}

ServerVersion readServerVersion(Context& context);

}  // namespace rossoctl::app
