#include "rossoctl/app/project_gate.hpp"

#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/model/egress_gate.hpp"

namespace rossoctl::app {

std::string projectGateImage(kube::Client& client, const std::string& ns) {
    std::optional<nlohmann::json> namespaceObject;
    try {
        namespaceObject = client.getIfExists(kube::resources::namespaces(), "", ns);
    } catch (const kube::ApiError& error) {
        if (!error.isForbidden()) throw;
        return model::kDefaultGateImage;
    }
    return namespaceObject ? model::recordedGateImage(*namespaceObject) : "";
}

}  // namespace rossoctl::app
