// rossoctl version's server side: /version, then one discovery read per agent-sandbox group,
// from the server rather than the cache, since the answer is what version is asked for.
#include "rossoctl/app/server_version.hpp"

namespace rossoctl::app {

ServerVersion readServerVersion(Context& context) {
    ServerVersion server;
    server.version = context.client().getPath("/version");
    for (const auto& name : agentSandboxGroups())
        if (auto group = context.discovery().group(name, /*fresh=*/true))
            server.agentSandbox.push_back({name, group->versions, group->preferredVersion});
    return server;
}

}  // namespace rossoctl::app
