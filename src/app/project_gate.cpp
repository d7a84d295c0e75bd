#include "rossoctl/app/project_gate.hpp"

#include <fmt/format.h>

#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/model/egress_gate.hpp"
#include "rossoctl/model/project.hpp"

namespace rossoctl::app {

ProjectGate projectGate(kube::Client& client, const std::string& ns) {
    std::optional<nlohmann::json> namespaceObject;
    try {
        namespaceObject = client.getIfExists(kube::resources::namespaces(), "", ns);
    } catch (const kube::ApiError& error) {
        if (!error.isForbidden()) throw;
        return {model::kDefaultGateImage, ""};
    }
    if (!namespaceObject) return {};
    ProjectGate gate{model::recordedGateImage(*namespaceObject), ""};
    if (!gate.image.empty()) return gate;
    gate.whyNone = model::isSandboxProject(*namespaceObject)
                       ? fmt::format(
                             "project {} was made by an older rossoctl: run \"rossoctl project "
                             "create {}\" again (with its flags), then import again",
                             ns, ns)
                       : fmt::format(
                             "namespace {} is no rossoctl project (no default-deny egress, no "
                             "quota): \"rossoctl project create {} --adopt\" makes it one, then "
                             "import again",
                             ns, ns);
    return gate;
}

}  // namespace rossoctl::app
