// project delete's deletes and wait: the rules in reverse order of project create, the
// namespace last, so a failed run leaves a project that a re-run finishes.
#include "rossoctl/app/project_delete.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "rossoctl/app/partial_write.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/model/project.hpp"

namespace rossoctl::app {
namespace {

using nlohmann::json;
namespace resources = kube::resources;

// Deletes one object unless it is already gone; `done` is what earlier deletes removed.
void deleteIfPresent(Context& context, const ProjectDeleteRequest& request,
                     const kube::ResourceRef& ref, const std::string& ns, const std::string& name,
                     std::vector<std::string>& done, const std::string& preconditionUid = {}) {
    const std::string finishHint =
        fmt::format("run \"rossoctl project delete {} --yes\" again to finish", request.name);
    try {
        kube::DeleteOptions deleteOptions;
        deleteOptions.propagationPolicy = "Background";
        if (!preconditionUid.empty()) deleteOptions.preconditionUid = preconditionUid;
        context.client().remove(ref, ns, name, deleteOptions);
    } catch (const kube::ApiError& error) {
        if (error.isNotFound()) return;
        rethrowPartialWrite("delete", ref, ns, name, done, finishHint);
    } catch (...) {
        rethrowPartialWrite("delete", ref, ns, name, done, finishHint);
    }
    std::string kind = ref.kind;
    std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
    done.push_back(kind + "/" + name);
    if (request.onDeleted) request.onDeleted(done.back());
}

void deleteObjects(Context& context, const ProjectDeleteRequest& request) {
    const std::string& project = request.name;
    std::vector<std::string> done;
    auto& discovery = context.discovery();
    for (const auto& object : model::optionalProjectObjects(project)) {
        const auto& group = object.ref.group;
        if (!group.empty() && group != "networking.k8s.io" && !discovery.isServed(group)) continue;
        deleteIfPresent(context, request, object.ref, project, object.object["metadata"]["name"],
                        done);
    }
    // default-deny stays until the namespace goes, so running pods never get open egress.
    deleteIfPresent(context, request, resources::limitRanges(), project, model::kLimitRangeName,
                    done);
    deleteIfPresent(context, request, resources::resourceQuotas(), project, model::kQuotaName,
                    done);
    // A Project is its namespace seen through OpenShift (the same UID; the DELETE's options
    // reach the namespace's): the precondition holds there too.
    if (discovery.isServed("project.openshift.io"))
        deleteIfPresent(context, request, resources::projects(), "", project, done,
                        request.namespaceUid);
    else
        deleteIfPresent(context, request, resources::namespaces(), "", project, done,
                        request.namespaceUid);
}

// An adopted namespace: each object project create writes, when it is still rossoctl's (its
// label, a resourceVersion precondition), default-deny included; then the namespace's labels
// and annotations rossoctl applied are given up by applying a namespace that says nothing.
void releaseAdopted(Context& context, const ProjectDeleteRequest& request) {
    const std::string& project = request.name;
    auto& client = context.client();
    auto& discovery = context.discovery();
    std::vector<std::pair<kube::ResourceRef, std::string>> owned;
    for (const auto& object : model::optionalProjectObjects(project)) {
        const auto& group = object.ref.group;
        if (!group.empty() && group != "networking.k8s.io" && !discovery.isServed(group)) continue;
        owned.emplace_back(object.ref, object.object["metadata"]["name"]);
    }
    owned.emplace_back(resources::networkPolicies(), model::kDefaultDenyName);
    owned.emplace_back(resources::limitRanges(), model::kLimitRangeName);
    owned.emplace_back(resources::resourceQuotas(), model::kQuotaName);
    std::vector<std::string> done;
    const std::string finishHint =
        fmt::format("run \"rossoctl project delete {} --yes\" again to finish", project);
    for (const auto& [ref, name] : owned) {
        std::string verb = "get";
        try {
            const auto existing = client.getIfExists(ref, project, name);
            if (!existing) continue;
            const json labels =
                (*existing).value("metadata", json::object()).value("labels", json::object());
            if (labels.value(model::kManagedByLabel, "") != model::kManagedByValue) continue;
            verb = "delete";
            kube::DeleteOptions deleteOptions;
            deleteOptions.preconditionResourceVersion =
                (*existing).value("metadata", json::object()).value("resourceVersion", "");
            client.remove(ref, project, name, deleteOptions);
        } catch (const kube::ApiError& error) {
            if (error.isNotFound()) continue;
            rethrowPartialWrite(verb, ref, project, name, done, finishHint);
        } catch (...) {
            rethrowPartialWrite(verb, ref, project, name, done, finishHint);
        }
        std::string kind = ref.kind;
        std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
        done.push_back(kind + "/" + name);
        if (request.onDeleted) request.onDeleted(done.back());
    }
    const json bare = {
        {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", project}}}};
    try {
        client.apply(resources::namespaces(), "", bare,
                     {.fieldManager = "rossoctl", .force = true});
    } catch (...) {
        rethrowPartialWrite("patch", resources::namespaces(), "", project, done, finishHint);
    }
}

// Watches the namespace until it is deleted.
void waitUntilGone(Context& context, const ProjectDeleteRequest& request) {
    const std::string& name = request.name;
    if (request.onWaiting) request.onWaiting(true);
    kube::WaitOptions waitOptions;
    waitOptions.timeout = request.timeout;
    waitOptions.cancel = context.cancelFlag();
    std::string phase = "still there";
    auto result = kube::waitForObject(
        context.client(), context.clock(), resources::namespaces(), "", name, waitOptions,
        [&](const std::optional<json>& object) {
            if (object) phase = (*object).value("status", json::object()).value("phase", phase);
            return !object;
        });
    if (request.onWaiting) request.onWaiting(false);
    if (result.outcome == kube::WaitOutcome::Cancelled)
        throw Error(
            fmt::format("interrupted while waiting for namespace \"{}\" to be deleted", name));
    if (!result.satisfied())
        throw Error(fmt::format(
            "timed out after {}s waiting for namespace \"{}\" to be deleted (it is {}); check "
            "\"rossoctl project describe {}\" for what is left",
            request.timeout.count() / 1000, name, phase, name));
}

}  // namespace

void deleteProject(Context& context, const ProjectDeleteRequest& request) {
    if (request.adopted && !request.terminating) return releaseAdopted(context, request);
    if (!request.terminating) deleteObjects(context, request);
    if (request.wait) waitUntilGone(context, request);
}

}  // namespace rossoctl::app
