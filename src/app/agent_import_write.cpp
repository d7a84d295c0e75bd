// agents import's reads and writes: refuse before creating anything, then create in order,
// so a failure leaves at most what the error message names.
#include "rossoctl/app/agent_import_write.hpp"

#include <fmt/format.h>

#include "rossoctl/app/agents.hpp"
#include "rossoctl/app/limit_range.hpp"
#include "rossoctl/app/namespace_hint.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/model/project.hpp"

namespace rossoctl::app {
namespace {

using nlohmann::json;

// Refuses before writing anything when an agent (or a Service) of that name exists.
void refuseExisting(Context& context, const ImportRequest& request) {
    const std::string& ns = request.namespaceName;
    auto& client = context.client();
    bool exists = !findWorkloads(client, context.discovery(), ns, request.name).empty();
    if (!exists && request.agentRuntime)
        exists = client.getIfExists(kube::resources::agentRuntimes(), ns, request.name).has_value();
    if (exists)
        throw Error(fmt::format(
            "agent \"{}\" already exists in namespace \"{}\"; delete it first with \"rossoctl "
            "agents delete {} -n {}\"",
            request.name, ns, request.name, ns));
}

// A pod the LimitRange refuses is never created: say so now, exit 2, write nothing.
void refuseLimitRangeViolation(Context& context, const ImportRequest& request) {
    const auto ranges =
        context.client().list(kube::resources::limitRanges(), request.namespaceName);
    if (auto why = limitRangeViolation(ranges, request.namespaceName, request.cpu, request.memory);
        !why.empty())
        throw UsageError(why);
}

std::string createdMessage(const std::vector<std::string>& created) {
    std::string text;
    for (const auto& name : created) text += (text.empty() ? "" : ", ") + name;
    return text;
}

// Ctrl-C while creating planned[index]: what was created, what may have been (the request cut
// before its answer came), what was not, and how to remove it (a new import refuses a name
// that exists). Nothing sent yet: the plain interruption.
[[noreturn]] void throwInterrupted(const ImportRequest& request,
                                   const std::vector<PlannedObject>& planned, size_t index,
                                   const std::vector<std::string>& created) {
    std::vector<std::string> rest;
    for (size_t i = index + 1; i < planned.size(); ++i)
        rest.push_back(typeName(planned[i].ref) + "/" + request.name);
    const std::string cut = typeName(planned[index].ref) + "/" + request.name;
    const std::string advice =
        fmt::format("\"rossoctl agents delete {} -n {}\" before importing it again", request.name,
                    request.namespaceName);
    if (!created.empty()) {
        rest.insert(rest.begin(), cut);
        throw Error(fmt::format("interrupted: {} was created, {} was not; remove it with {}",
                                createdMessage(created), createdMessage(rest), advice),
                    kExitCancelled);
    }
    throw Error(
        fmt::format("interrupted while {} was being created (it may exist now){}; remove "
                    "what exists with {}",
                    cut,
                    rest.empty() ? "" : fmt::format("; {} was not created", createdMessage(rest)),
                    advice),
        kExitCancelled);
}

// Creates in order; after a partial failure says exactly what exists and how to remove it.
std::vector<json> createAll(Context& context, const ImportRequest& request,
                            const std::vector<PlannedObject>& planned, bool serverDryRun) {
    std::vector<json> results;
    std::vector<std::string> created;
    kube::WriteOptions write;
    write.dryRun = serverDryRun;
    for (size_t index = 0; index < planned.size(); ++index) {
        const auto& object = planned[index];
        const std::string label = typeName(object.ref) + "/" + request.name;
        try {
            results.push_back(
                context.client().create(object.ref, request.namespaceName, object.object, write));
            created.push_back(label);
        } catch (const kube::TransportError&) {
            if (!context.cancelled() || serverDryRun) throw;
            throwInterrupted(request, planned, index, created);
        } catch (const kube::ApiError& error) {
            if (created.empty() && error.isAlreadyExists())
                refuseExisting(context, request);  // lost a race: say it the same way
            if (created.empty() || serverDryRun) throw;
            throw Error(fmt::format(
                "created {}, but creating {} failed: {}; remove what was created with \"rossoctl "
                "agents delete {} -n {}\"",
                createdMessage(created), label, error.what(), request.name, request.namespaceName));
        }
    }
    return results;
}

}  // namespace

std::chrono::seconds defaultLifetime(Context& context, const std::string& ns, bool mayNotExist) {
    std::optional<json> namespaceObject;
    try {
        namespaceObject = context.client().getIfExists(kube::resources::namespaces(), "", ns);
    } catch (const kube::ApiError& error) {
        if (!error.isForbidden()) throw;  // a project member may not read its namespace
        return kFallbackLifetime;
    }
    if (!namespaceObject && mayNotExist) {
        context.err() << fmt::format(
            "note: namespace \"{}\" does not exist yet; the dry run uses the default lifetime "
            "{}h (create it with \"rossoctl project create {}\")\n",
            ns, kFallbackLifetime.count(), ns);
        return kFallbackLifetime;
    }
    if (!namespaceObject) throw Error(missingNamespaceMessage(context.client(), ns));
    const json& metadata = (*namespaceObject)["metadata"];
    if (!metadata.contains("annotations") ||
        !metadata["annotations"].contains(model::kDefaultLifetimeAnnotation))
        return kFallbackLifetime;
    std::string value = metadata["annotations"][model::kDefaultLifetimeAnnotation];
    try {
        return model::parseLifetime(value,
                                    "annotation " + std::string(model::kDefaultLifetimeAnnotation));
    } catch (const UsageError& e) {
        throw Error(fmt::format("namespace \"{}\": {}; fix it or pass --lifetime", ns, e.what()));
    }
}

std::vector<json> importAgent(Context& context, const ImportRequest& request,
                              const std::vector<PlannedObject>& planned, bool serverDryRun) {
    refuseExisting(context, request);
    refuseLimitRangeViolation(context, request);
    return createAll(context, request, planned, serverDryRun);
}

}  // namespace rossoctl::app
