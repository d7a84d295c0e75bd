// rossoctl version's server side: /version, then one discovery read per agent-sandbox group,
// from the server rather than the cache, since the answer is what version is asked for.
#include "rossoctl/app/server_version.hpp"

#include "rossoctl/kube/api_error.hpp"

namespace rossoctl::app {

ServerVersion readServerVersion(Context& context) {
    ServerVersion server;
    server.version = context.client().getPath("/version");
    // The version is read already: a group's discovery failing leaves that group unknown.
    for (const auto& name : agentSandboxGroups()) {
        try {
            if (auto group = context.discovery().group(name, /*fresh=*/true))
                server.agentSandbox.push_back({name, group->versions, group->preferredVersion});
        } catch (const kube::ApiError& error) {
            server.unread.push_back({name, error.what()});
        }
    }
    return server;
}

}  // namespace rossoctl::app
