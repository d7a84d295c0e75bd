#pragma once
// What the project subcommands share: finding a project (its namespace) by name.
#include <nlohmann/json.hpp>
#include <string>

#include "rossoctl/app/context.hpp"

namespace rossoctl::commands {

// The project's namespace; throws Error naming `rossoctl project create` when it is absent.
nlohmann::json getProjectNamespace(app::Context& context, const std::string& name);

}  // namespace rossoctl::commands
