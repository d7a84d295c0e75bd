#pragma once
// What the project subcommands share: finding a project and reporting a write that failed
// part-way (which verb on which resource, and what had been written before it).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/app/context.hpp"
#include "rossoctl/kube/resource.hpp"

namespace rossoctl::commands {

// Labelled rossoctl.dev/sandbox-project=true.
bool isSandboxProject(const nlohmann::json& namespaceObject);

// The project's namespace; throws Error naming `rossoctl project create` when it is absent.
nlohmann::json getProjectNamespace(app::Context& context, const std::string& name);

// Rethrows the exception being handled (call inside a catch block), reworded to say which
// request failed and which objects had been written before it; Forbidden names the missing
// permission. ApiErrors stay ApiErrors so the exit code and prefix are kept.
[[noreturn]] void rethrowPartialWrite(const std::string& verb, const kube::ResourceRef& ref,
                                      const std::string& ns, const std::string& name,
                                      const std::vector<std::string>& done,
                                      const std::string& finishHint);

}  // namespace rossoctl::commands
