#include "rossoctl/app/agent_delete.hpp"

#include <fmt/format.h>

#include "rossoctl/app/agents.hpp"
#include "rossoctl/kube/api_error.hpp"

namespace rossoctl::app {
namespace {

using nlohmann::json;

bool managedAgentObject(const json& object, const std::string& name) {
    const json labels = object.value("metadata", json::object()).value("labels", json::object());
    return labels.value(model::kManagedByLabel, "") == model::kManagedByValue &&
           labels.value(model::kNameLabel, "") == name;
}

// What the agent consists of: its managed workload, AgentRuntime and Service, each if present.
struct AgentPart {
    kube::ResourceRef ref;
    json object;
};

std::vector<AgentPart> findAgentParts(Context& context, const std::string& ns,
                                      const std::string& name) {
    auto& client = context.client();
    std::vector<AgentPart> parts;
    if (context.discovery().pickVersion("agent.rossoctl.dev", {"v1alpha1"}))
        if (auto runtime = client.getIfExists(kube::resources::agentRuntimes(), ns, name))
            if (managedAgentObject(*runtime, name))
                parts.push_back({kube::resources::agentRuntimes(), *runtime});
    if (auto service = client.getIfExists(kube::resources::services(), ns, name))
        if (managedAgentObject(*service, name))
            parts.push_back({kube::resources::services(), *service});
    bool foreign = false;
    for (const auto& workload : findWorkloads(client, context.discovery(), ns, name)) {
        if (workload.managed())
            parts.push_back({workload.kind.ref, workload.object});
        else
            foreign = true;
    }
    // Only an unmanaged workload of that name: explain rather than say "not found".
    if (parts.empty() && foreign) getAgent(client, context.discovery(), ns, name);
    if (parts.empty())
        throw Error(fmt::format("agent \"{}\" not found in namespace \"{}\"; {}", name, ns,
                                agentNotFoundAdvice(client, context.discovery(), ns, name)));
    return parts;
}

}  // namespace

void deleteAgent(Context& context, const AgentDeleteRequest& request,
                 const std::function<void(const std::string& typeName)>& deleted) {
    const std::string& ns = request.namespaceName;
    auto& client = context.client();
    const auto parts = findAgentParts(context, ns, request.name);
    for (const auto& part : parts) {
        kube::DeleteOptions remove;
        remove.preconditionUid = part.object.value("metadata", json::object()).value("uid", "");
        remove.propagationPolicy = "Foreground";  // the workload's pods go before it does
        try {
            client.remove(part.ref, ns, request.name, remove);
        } catch (const kube::ApiError& error) {
            if (error.isConflict())  // the UID precondition: a same-named newer object is there
                throw Error(fmt::format(
                    "{}/{} was replaced by a new object while rossoctl deleted the agent; the new "
                    "one is kept: check it with \"rossoctl agents get {} -n {}\" and run the "
                    "delete again to remove it",
                    typeName(part.ref), request.name, request.name, ns));
            if (!error.isNotFound()) throw;  // already gone is what we wanted
        }
        deleted(typeName(part.ref));
    }
    if (!request.wait) return;
    for (const auto& part : parts)
        if (!waitUntilDeleted(client, context.clock(), part.ref, ns, request.name, request.timeout))
            throw Error(fmt::format(
                "{}/{} is still being deleted after {}; check it with \"rossoctl agents get {} -n "
                "{}\"",
                typeName(part.ref), request.name, request.timeoutText, request.name, ns));
}

}  // namespace rossoctl::app
