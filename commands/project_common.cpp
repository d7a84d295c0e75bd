#include "project_common.hpp"

#include <fmt/format.h>

#include "rossoctl/model/project.hpp"

namespace rossoctl::commands {

nlohmann::json getProjectNamespace(app::Context& context, const std::string& name) {
    auto found = context.client().getIfExists(kube::resources::namespaces(), "", name);
    if (!found)
        throw Error(fmt::format(
            "project \"{}\" does not exist; see the projects with \"rossoctl project list\"",
            name));
    return *found;
}

}  // namespace rossoctl::commands
