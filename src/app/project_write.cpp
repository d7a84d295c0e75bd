// project create's writes, with server-side apply so running it again converges and finishes
// a half-done run.
#include "rossoctl/app/project_write.hpp"

#include <fmt/format.h>

#include <optional>
#include <set>

#include "rossoctl/app/partial_write.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/model/validation.hpp"

namespace rossoctl::app {
namespace {

using nlohmann::json;
namespace resources = kube::resources;

struct WriteResult {
    json object;
    std::string outcome;         // created, configured, unchanged, deleted
    std::optional<json> before;  // as it was, when it existed
};

// How long one write rides out an API server that is away (a restart, a failover).
constexpr std::chrono::seconds kOutageBudget{60};

// The next action, named: a re-run converges, finishing what a failed run left half-way.
std::string finishHint(const std::string& project) {
    return fmt::format("run \"rossoctl project create {}\" again, with the same flags, to finish",
                       project);
}

// Refuses a namespace rossoctl did not make (kube-system under default-deny would be a
// disaster) and one being deleted, before anything is written.
std::optional<json> checkExistingNamespace(Context& context, const std::string& name, bool adopt) {
    std::optional<json> existing;
    try {
        existing = context.client().getIfExists(resources::namespaces(), "", name);
    } catch (...) {
        rethrowPartialWrite("get", resources::namespaces(), "", name, {}, finishHint(name));
    }
    if (!existing) return existing;
    if (existing->value("status", json::object()).value("phase", "") == "Terminating")
        throw Error(
            fmt::format("project \"{}\" is being deleted; wait for \"rossoctl project delete "
                        "{} --yes\" to finish, then run this again",
                        name, name));
    if (!model::isSandboxProject(*existing) && !adopt)
        throw Error(
            fmt::format("namespace \"{}\" already exists and is not a rossoctl project (no "
                        "label {}=true); pick another name, or pass --adopt to make it one",
                        name, model::kSandboxProjectLabel));
    return existing;
}

bool isEgressPolicy(const kube::ResourceRef& ref) {
    return ref.resource == "networkpolicies" || ref.resource == "egressfirewalls" ||
           ref.resource == "ciliumnetworkpolicies";
}

WriteResult writeObject(Context& context, const model::PlannedObject& planned, bool dryRun,
                        const std::vector<std::string>& done) {
    auto& client = context.client();
    const auto& metadata = planned.object["metadata"];
    const std::string name = metadata.value("name", "");
    const std::string ns = metadata.value("namespace", "");
    std::string verb = "get";
    WriteResult result;
    // Each step reads before it writes, so a step cut by an API outage is safe to repeat.
    auto attempt = [&] {
        verb = "get";
        if (planned.createOnly) {
            // A ProjectRequest is a one-shot request, not an object: ask only when missing.
            if (client.getIfExists(resources::projects(), "", name)) {
                result = {planned.object, "unchanged", std::nullopt};
                return;
            }
            verb = "create";
            result = {client.create(planned.ref, ns, planned.object, {.dryRun = dryRun}), "created",
                      std::nullopt};
            return;
        }
        auto before = client.getIfExists(planned.ref, ns, name);
        verb = "patch";
        // force: these objects are rossoctl's; the command line is what they must say.
        json after = client.apply(planned.ref, ns, planned.object,
                                  {.dryRun = dryRun, .fieldManager = "rossoctl", .force = true});
        std::string outcome = "created";
        if (before) {
            auto oldVersion =
                (*before).value("metadata", json::object()).value("resourceVersion", "");
            outcome =
                oldVersion == after.value("metadata", json::object()).value("resourceVersion", "")
                    ? "unchanged"
                    : "configured";
        }
        result = {after, outcome, std::move(before)};
    };
    try {
        kube::rideOutOutage(context.clock(), kOutageBudget, context.cancelFlag(), attempt);
        return result;
    } catch (...) {
        rethrowPartialWrite(verb, planned.ref, ns, name, done, finishHint(ns.empty() ? name : ns));
    }
}

// A quantity as the flag that sets it would be given; equal numbers ("4096Mi", "4Gi") are the same.
bool sameQuantity(const json& a, const json& b) {
    if (!a.is_string() || !b.is_string()) return a == b;
    try {
        return model::parseQuantity(a.get<std::string>(), "quota") ==
               model::parseQuantity(b.get<std::string>(), "quota");
    } catch (const std::exception&) {
        return a == b;
    }
}

std::string quantityText(const json& value) {
    return value.is_string() ? value.get<std::string>() : value.is_null() ? "none" : value.dump();
}

// What a re-run changed in the quota or the limits, as "--memory 4Gi → 8Gi", by the flag that
// sets it (a flag setting two fields, --cpu's requests and limits, said once).
std::vector<std::string> limitChanges(const kube::ResourceRef& ref, const json& before,
                                      const json& after) {
    struct Field {
        const char* flag;
        std::vector<std::string> path;
    };
    std::vector<Field> fields;
    if (ref.resource == "resourcequotas")
        fields = {{"--cpu", {"spec", "hard", "limits.cpu"}},
                  {"--memory", {"spec", "hard", "limits.memory"}},
                  {"--pods", {"spec", "hard", "pods"}},
                  {"--storage", {"spec", "hard", "requests.storage"}},
                  {"--pvcs", {"spec", "hard", "persistentvolumeclaims"}}};
    else if (ref.resource == "limitranges")
        fields = {{"--container-cpu", {"default", "cpu"}},
                  {"--container-memory", {"default", "memory"}},
                  {"--max-container-cpu", {"max", "cpu"}},
                  {"--max-container-memory", {"max", "memory"}}};
    // A LimitRange's fields are those of its Container entry.
    auto root = [&](const json& object) -> json {
        if (ref.resource != "limitranges") return object;
        const json limits = object.value("spec", json::object()).value("limits", json::array());
        if (limits.is_array())
            for (const auto& limit : limits)
                if (limit.is_object() && limit.value("type", "") == "Container") return limit;
        return json::object();
    };
    auto at = [](json value, const std::vector<std::string>& path) {
        for (const auto& key : path) {
            if (!value.is_object() || !value.contains(key)) return json();
            value = json(value[key]);
        }
        return value;
    };
    const json old = root(before), now = root(after);
    std::vector<std::string> changes;
    for (const auto& field : fields) {
        const json was = at(old, field.path), is = at(now, field.path);
        if (!was.is_null() && !is.is_null() && !sameQuantity(was, is))
            changes.push_back(
                fmt::format("{} {} → {}", field.flag, quantityText(was), quantityText(is)));
    }
    return changes;
}

// Objects an earlier run wrote that this one no longer wants (a host removed, --no-dns now).
std::vector<std::string> pruneStale(Context& context, const model::ProjectPlan& plan,
                                    const std::string& ns, std::vector<std::string>& done) {
    std::set<std::string> wanted;
    for (const auto& object : plan.objects) wanted.insert(object.displayName());
    std::vector<std::string> pruned;
    for (const auto& candidate : model::optionalProjectObjects(ns)) {
        if (wanted.count(candidate.displayName())) continue;
        if (!candidate.ref.group.empty() && candidate.ref.group != "networking.k8s.io" &&
            !context.discovery().isServed(candidate.ref.group))
            continue;
        const std::string name = candidate.object["metadata"]["name"];
        std::string verb = "get";
        try {
            auto existing = context.client().getIfExists(candidate.ref, ns, name);
            if (!existing) continue;
            auto labels =
                (*existing).value("metadata", json::object()).value("labels", json::object());
            if (labels.value(model::kManagedByLabel, "") != model::kManagedByValue) continue;
            verb = "delete";
            kube::DeleteOptions deleteOptions;
            deleteOptions.preconditionResourceVersion =
                (*existing).value("metadata", json::object()).value("resourceVersion", "");
            context.client().remove(candidate.ref, ns, name, deleteOptions);
        } catch (const kube::ApiError& error) {
            if (error.isNotFound() || error.isConflict()) continue;
            rethrowPartialWrite(verb, candidate.ref, ns, name, done, finishHint(ns));
        } catch (...) {
            rethrowPartialWrite(verb, candidate.ref, ns, name, done, finishHint(ns));
        }
        pruned.push_back(candidate.displayName());
        done.push_back(candidate.displayName() + " deleted");
    }
    return pruned;
}

// Until the quota controller has counted usage, quota admission refuses every pod; wait for it
// so the enforcement check and the next command (agents import) do not hit that. False when it
// did not count within `timeout`.
bool waitForQuotaStatus(Context& context, const std::string& ns,
                        std::chrono::milliseconds timeout) {
    kube::WaitOptions waitOptions;
    waitOptions.timeout = timeout;
    waitOptions.cancel = context.cancelFlag();
    auto result = kube::waitForObject(
        context.client(), context.clock(), resources::resourceQuotas(), ns, model::kQuotaName,
        waitOptions, [](const std::optional<json>& quota) {
            return !quota || quota->value("status", json::object()).contains("hard");
        });
    return result.outcome != kube::WaitOutcome::TimedOut;
}

// The namespace as this run applies it: an adopted one keeps saying so (server-side apply
// would drop an annotation a re-run left out).
model::PlannedObject markAdoption(const model::PlannedObject& planned,
                                  const std::optional<json>& existing) {
    model::PlannedObject marked = planned;
    const bool adopted =
        existing && (!model::isSandboxProject(*existing) || isAdoptedProject(*existing));
    if (adopted && planned.ref.resource == "namespaces" && !planned.createOnly)
        marked.object["metadata"]["annotations"][kAdoptedAnnotation] = "true";
    return marked;
}

}  // namespace

bool isAdoptedProject(const json& namespaceObject) {
    const json metadata = namespaceObject.value("metadata", json::object());
    const json annotations = metadata.value("annotations", json::object());
    return annotations.is_object() && annotations.value(kAdoptedAnnotation, "") == "true";
}

ProjectWriteResult writeProject(Context& context, const model::ProjectPlan& plan,
                                const std::string& project, const ProjectWriteOptions& options) {
    const bool serverDryRun = options.serverDryRun;
    auto existing = checkExistingNamespace(context, project, options.adopt);
    ProjectWriteResult written;
    std::vector<std::string> done;
    for (const auto& unmarked : plan.objects) {
        const model::PlannedObject planned = markAdoption(unmarked, existing);
        // A namespace that does not exist yet cannot hold dry-run objects: stop after it.
        if (serverDryRun && !existing && planned.ref.namespaced) {
            written.onlyNamespaceChecked = true;
            break;
        }
        auto result = writeObject(context, planned, serverDryRun, done);
        written.egressChanged |= existing && !serverDryRun && isEgressPolicy(planned.ref) &&
                                 result.outcome != "unchanged";
        if (existing && !serverDryRun && result.before && result.outcome == "configured")
            for (auto& change : limitChanges(planned.ref, *result.before, result.object))
                written.limitChanges.push_back(std::move(change));
        written.objects.push_back(result.object);
        done.push_back(planned.displayName() + " " + result.outcome);
        written.lines.push_back(planned.displayName() + " " + result.outcome +
                                (serverDryRun ? " (server dry run)" : ""));
    }
    if (serverDryRun) return written;
    for (const auto& name : pruneStale(context, plan, project, done)) {
        written.lines.push_back(name + " deleted (no longer wanted)");
        written.egressChanged |= existing && (name.find("networkpolic") != std::string::npos ||
                                              name.find("egressfirewall") != std::string::npos);
    }
    const auto waitStarted = context.clock().monotonic();
    written.quotaCounted = waitForQuotaStatus(context, project, options.quotaTimeout);
    written.quotaWaited = std::chrono::duration_cast<std::chrono::milliseconds>(
        context.clock().monotonic() - waitStarted);
    return written;
}

}  // namespace rossoctl::app
