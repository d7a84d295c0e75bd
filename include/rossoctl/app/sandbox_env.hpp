#pragma once
// `sandbox set-env`'s write: read the Sandbox, change its pod template's env, write it back with
// the resourceVersion it read, and on a conflict read again and redo the same change, so a
// concurrent writer's change is never lost.
#include <nlohmann/json.hpp>
#include <string>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/model/env_edit.hpp"
#include "rossoctl/random.hpp"

namespace rossoctl::app {

enum class EnvWrite { Send, ServerDryRun, ClientDryRun };

struct SandboxEnvEdit {
    nlohmann::json sandbox;    // as written (client dry run: as it would be; unchanged: as read)
    nlohmann::json container;  // the edited container as it now is
    model::EnvEditResult edit;
};

// The Sandbox, or Error with the hint where to look (the -n in use) when there is none.
nlohmann::json getSandboxOrHint(kube::Client& client, const kube::ResourceRef& sandboxes,
                                const std::string& ns, const std::string& name);

// The pod template's spec of a Sandbox (Error when it has none).
nlohmann::json& sandboxPodSpec(nlohmann::json& sandbox, const std::string& name);

// Applies `change` to `container` (empty: the default container) of sandbox `name`. Nothing is
// written when the change changes nothing (edit.changed() is false). Gives up with Error after
// ten conflicts in a row, having written nothing.
SandboxEnvEdit editSandboxEnv(kube::Client& client, const Clock& clock, Random& random,
                              const kube::ResourceRef& sandboxes, const std::string& ns,
                              const std::string& name, const std::string& container,
                              const model::EnvChange& change, EnvWrite mode);

}  // namespace rossoctl::app
