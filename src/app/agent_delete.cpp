#include "rossoctl/app/agent_delete.hpp"

#include <fmt/format.h>

#include <algorithm>

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

// The claims a workload's volumeClaimTemplates made that exist: a Sandbox's are named
// TEMPLATE-NAME (owned by it), a StatefulSet's TEMPLATE-NAME-ORDINAL (left behind when it goes).
std::vector<AgentClaim> workloadClaims(kube::Client& client, const AgentPart& part,
                                       const std::string& ns, const std::string& name) {
    std::vector<AgentClaim> claims;
    const json spec = part.object.value("spec", json::object());
    const json templates = spec.value("volumeClaimTemplates", json::array());
    if (!templates.is_array()) return claims;
    const bool sandbox = part.ref.kind == "Sandbox";
    if (!sandbox && part.ref.kind != "StatefulSet") return claims;
    const json replicas = spec.value("replicas", json(1));
    const int count = replicas.is_number_integer() ? std::clamp(replicas.get<int>(), 1, 16) : 1;
    const std::string uid = part.object.value("metadata", json::object()).value("uid", "");
    for (const auto& claimTemplate : templates) {
        if (!claimTemplate.is_object()) continue;
        const std::string templateName =
            claimTemplate.value("metadata", json::object()).value("name", "");
        if (templateName.empty()) continue;
        for (int ordinal = 0; ordinal < (sandbox ? 1 : count); ++ordinal) {
            const std::string claimName =
                sandbox ? templateName + "-" + name
                        : fmt::format("{}-{}-{}", templateName, name, ordinal);
            const auto found =
                client.getIfExists(kube::resources::persistentVolumeClaims(), ns, claimName);
            if (!found) continue;
            bool owned = false;
            const json owners =
                found->value("metadata", json::object()).value("ownerReferences", json::array());
            if (owners.is_array())
                for (const auto& owner : owners)
                    if (owner.is_object() && !uid.empty() && owner.value("uid", "") == uid)
                        owned = true;
            claims.push_back({claimName, owned});
        }
    }
    return claims;
}

}  // namespace

void deleteAgent(Context& context, const AgentDeleteRequest& request,
                 const std::function<void(const std::string& typeName)>& deleted,
                 const std::function<void(const AgentClaim&)>& claim) {
    const std::string& ns = request.namespaceName;
    auto& client = context.client();
    const auto parts = findAgentParts(context, ns, request.name);
    std::vector<AgentClaim> claims;
    if (claim)
        for (const auto& part : parts) {
            auto found = workloadClaims(client, part, ns, request.name);
            claims.insert(claims.end(), found.begin(), found.end());
        }
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
    for (const auto& found : claims) claim(found);
    if (!request.wait) return;
    for (const auto& part : parts)
        if (!waitUntilDeleted(client, context.clock(), part.ref, ns, request.name, request.timeout))
            throw Error(fmt::format(
                "{}/{} is still being deleted after {}; check it with \"rossoctl agents get {} -n "
                "{}\"",
                typeName(part.ref), request.name, request.timeoutText, request.name, ns));
}

}  // namespace rossoctl::app
