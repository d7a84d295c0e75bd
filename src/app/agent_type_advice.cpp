// "sandbox/dep1 not found" when dep1 is an agent of another deployment type (walk 6 MINOR 13).
#include <fmt/format.h>

#include "rossoctl/app/agents.hpp"
#include "rossoctl/app/sandbox_pod.hpp"

namespace rossoctl::app {

std::string otherTypeAgentAdvice(kube::Client& client, const std::string& ns,
                                 const std::string& name) {
    // A Deployment only: the type agents import makes without --deployment-type; a StatefulSet
    // or a Job was asked for by name, and one GET is what this costs on the not-found path.
    for (const auto type : {model::WorkloadType::Deployment}) {
        const kube::ResourceRef ref = workloadResource(type, std::string("v1beta1"));
        std::optional<nlohmann::json> object;
        try {
            object = client.getIfExists(ref, ns, name);
        } catch (const std::exception&) {
            continue;  // refused or unreachable: only a sharper message is lost
        }
        if (!object || !Agent{{type, ref}, *object}.managed()) continue;
        const std::string typeWord = model::workloadTypeName(type);
        return fmt::format(
            "{} is an agent of type {} ({}/{}), not a sandbox: sandbox commands need an agent "
            "imported with --deployment-type sandbox (\"rossoctl agents delete {} -n {}\", then "
            "import it again with that flag)",
            name, typeWord, typeName(ref), name, name, ns);
    }
    return {};
}

}  // namespace rossoctl::app
