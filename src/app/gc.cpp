#include "rossoctl/app/gc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>

#include "rossoctl/app/agents.hpp"
#include "rossoctl/app/enforcement_check.hpp"
#include "rossoctl/app/listed_object.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/model/workload.hpp"

namespace rossoctl::app::gc {

using nlohmann::json;

namespace {

constexpr const char* kSandboxGroup = "agents.x-k8s.io";
constexpr const char* kRuntimeGroup = "agent.rossoctl.dev";

const json& metadataOf(const json& object) {
    static const json empty = json::object();
    return object.contains("metadata") && object["metadata"].is_object() ? object["metadata"]
                                                                         : empty;
}

std::string stringAt(const json& object, std::initializer_list<const char*> path) {
    const json* at = &object;
    for (const char* key : path) {
        if (!at->is_object() || !at->contains(key)) return {};
        at = &(*at)[key];
    }
    return at->is_string() ? at->get<std::string>() : std::string{};
}

// When `text` (an RFC 3339 time) is at or before now.
bool passed(const std::string& text, std::chrono::system_clock::time_point now) {
    if (text.empty()) return false;
    const auto when = kube::parseTimestamp(text);
    return when && *when <= now;
}

// Only what rossoctl made is collected: a server that ignores the selector, or an object that
// merely looks like garbage (another operator's expired Sandbox), is never deleted.
bool madeByRossoctl(const json& object) {
    const json& labels = metadataOf(object).value("labels", json::object());
    return labels.is_object() && labels.value(model::kManagedByLabel, "") == model::kManagedByValue;
}

// shutdownPolicy Retain on a Sandbox with volume claims keeps data on purpose: gc keeps it too.
bool retainsData(const json& sandbox) {
    const json& spec =
        sandbox.contains("spec") && sandbox["spec"].is_object() ? sandbox["spec"] : json::object();
    const auto claims = spec.find("volumeClaimTemplates");
    return stringAt(sandbox, {"spec", "shutdownPolicy"}) == "Retain" && claims != spec.end() &&
           claims->is_array() && !claims->empty();
}

bool controlled(const json& object) {
    for (const auto& owner : metadataOf(object).value("ownerReferences", json::array()))
        if (owner.value("controller", false)) return true;
    return false;
}

class Scanner {
  public:
    Scanner(kube::Client& client, const ScanOptions& options, Scan& scan)
        : client_(client), options_(options), scan_(scan) {}

    // Lists ref and offers each object to judge (its reason, or "" to keep it). A failure is
    // recorded and ends this kind only; with `optional`, a 404 (nothing of it here) is not one.
    void kind(const kube::ResourceRef& ref, const std::string& selector,
              const std::function<std::string(const json&)>& judge, bool optional = false) {
        try {
            kube::ListOptions list;
            list.labelSelector = selector;
            const json objects = client_.list(ref, options_.namespaceName, list);
            for (const auto& object : objects.value("items", json::array())) {
                // One object of the wrong shape is skipped, not the whole scan with it.
                try {
                    offer(ref, object, judge);
                } catch (const json::exception& error) {
                    scan_.errors.push_back(
                        fmt::format("skipped a {} listed {}: a field of another type than "
                                    "Kubernetes gives it ({})",
                                    ref.kind, where(), withoutJsonTag(error.what())));
                }
            }
        } catch (const kube::ApiError& error) {
            if (optional && error.isNotFound()) return;
            scan_.errors.push_back(
                fmt::format("cannot list {} {}: {}", ref.qualifiedName(), where(), error.what()));
        }
    }

    void offer(const kube::ResourceRef& ref, const json& object,
               const std::function<std::string(const json&)>& judge) {
        const json& metadata = metadataOf(object);
        if (metadata.contains("deletionTimestamp")) return;
        const auto created = kube::parseTimestamp(metadata.value("creationTimestamp", ""));
        const auto age =
            created ? std::chrono::duration_cast<std::chrono::seconds>(options_.now - *created)
                    : std::chrono::seconds{0};
        if (age < options_.olderThan || !madeByRossoctl(object)) return;
        std::string reason = judge(object);
        if (reason.empty()) return;
        // An empty name made DELETE .../pods, a deletecollection; a foreign
        // metadata.namespace steered a delete of -n t elsewhere.
        if (const std::string why = unusableListedObject(object, options_.namespaceName);
            !why.empty()) {
            scan_.errors.push_back(
                fmt::format("skipped a {} listed {}: {}", ref.kind, where(), why));
            return;
        }
        const std::string name = listedName(object);
        const std::string ns = actingNamespace(object, options_.namespaceName);
        scan_.items.push_back({ref, ns, name, stringAt(metadata, {"uid"}),
                               stringAt(metadata, {"resourceVersion"}), age, std::move(reason)});
    }

    std::string where() const {
        return options_.namespaceName.empty() ? std::string("in any namespace")
                                              : "in " + options_.namespaceName;
    }

    kube::Client& client() { return client_; }
    const ScanOptions& options() const { return options_; }

  private:
    kube::Client& client_;
    const ScanOptions& options_;
    Scan& scan_;
};

std::string ownerGone(const json& object, const run::OwnerAlive& alive) {
    const json annotations = metadataOf(object).value("annotations", json::object());
    for (const char* key : {run::kRunOwnerAnnotation, run::kClaimedByAnnotation}) {
        const std::string owner = annotations.value(key, "");
        if (!owner.empty())
            return alive(owner) ? std::string{}
                                : fmt::format("its rossoctl process ({}) is gone",
                                              run::describeRunOwner(owner));
    }
    return {};
}

std::string judgeRunPod(const json& pod, const run::OwnerAlive& alive) {
    if (!run::isLeftoverRunPod(pod, alive)) return {};
    const std::string phase = stringAt(pod, {"status", "phase"});
    if ((phase == "Succeeded" || phase == "Failed") && run::keptRunPod(pod))
        return fmt::format("pod kept by sandbox run --keep ended ({}) at its deadline", phase);
    if (phase == "Succeeded" || phase == "Failed")
        return fmt::format("run pod ended ({}) and was never deleted", phase);
    return ownerGone(pod, alive);
}

// The workload an AgentRuntime's targetRef names; nullopt when its kind is not one we know.
std::optional<kube::ResourceRef> targetResource(kube::Discovery& discovery,
                                                const std::string& kind) {
    std::string lower = kind;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const auto type = model::parseWorkloadType(lower);
    if (!type) return std::nullopt;
    if (*type == model::WorkloadType::Sandbox && !discovery.isServed(kSandboxGroup))
        return std::nullopt;
    return workloadResource(*type, discovery);
}

// What `project create`'s enforcement check left (a second Ctrl-C, a killed process): collected
// once its process is known gone, or once no check could still be running.
std::string judgeCheckObject(const json& object, std::chrono::system_clock::time_point now,
                             const run::OwnerAlive& alive) {
    const auto created = kube::parseTimestamp(stringAt(object, {"metadata", "creationTimestamp"}));
    if (created && *created + kEnforcementCheckLifetime <= now)
        return fmt::format("enforcement check of project create, over (its pods end within {}s)",
                           kEnforcementCheckPodSeconds);
    if (const std::string gone = ownerGone(object, alive); !gone.empty())
        return "enforcement check of project create: " + gone;
    return {};
}

}  // namespace

Scan scan(kube::Client& client, kube::Discovery& discovery, const ScanOptions& options) {
    Scan result;
    Scanner scanner(client, options, result);
    const auto now = options.now;
    std::string managedSelector;
    managedSelector.append(model::kManagedByLabel).append("=").append(model::kManagedByValue);
    if (discovery.isServed(kSandboxGroup))
        scanner.kind(
            discovery.sandboxes(), managedSelector, [&](const json& sandbox) -> std::string {
                const std::string shutdown = stringAt(sandbox, {"spec", "shutdownTime"});
                if (controlled(sandbox) || !passed(shutdown, now)) return {};
                if (retainsData(sandbox)) {
                    result.kept.push_back(fmt::format(
                        "sandbox {} is past its shutdownTime but keeps its volume claims "
                        "(shutdownPolicy Retain): delete it yourself when its data is no longer "
                        "needed",
                        metadataOf(sandbox).value("name", "")));
                    return {};
                }
                return fmt::format("past its spec.shutdownTime {}", shutdown);
            });
    std::string runSelector, poolSelector;
    runSelector.append(run::kRunLabel).append("=true");
    poolSelector.append(run::kPoolLabel).append("=").append(run::kPoolWarm);
    scanner.kind(kube::resources::pods(), runSelector,
                 [&](const json& pod) { return judgeRunPod(pod, options.ownerAlive); });
    scanner.kind(kube::resources::pods(), poolSelector, [&](const json& pod) -> std::string {
        const std::string phase = stringAt(pod, {"status", "phase"});
        if (phase != "Succeeded" && phase != "Failed") return {};
        return fmt::format("warm pool pod ended ({}) and was never deleted", phase);
    });
    const std::string checkSelector = managedSelector + "," + std::string(kEnforcementCheckLabel);
    for (const auto& ref : {kube::resources::pods(), kube::resources::networkPolicies()})
        scanner.kind(
            ref, checkSelector,
            [&](const json& object) { return judgeCheckObject(object, now, options.ownerAlive); },
            true);
    if (discovery.isServed(run::kExtensionsGroup))
        scanner.kind(run::sandboxClaims(), runSelector, [&](const json& claim) -> std::string {
            const std::string shutdown = stringAt(claim, {"spec", "lifecycle", "shutdownTime"});
            if (passed(shutdown, now))
                return fmt::format("run claim past its shutdownTime {}", shutdown);
            // Kept on purpose (--keep): its shutdownTime alone ends it.
            if (metadataOf(claim)
                    .value("annotations", json::object())
                    .value(run::kKeptAnnotation, "") == "true")
                return {};
            return ownerGone(claim, options.ownerAlive);
        });
    if (discovery.isServed(kRuntimeGroup))
        scanner.kind(kube::resources::agentRuntimes(), managedSelector,
                     [&](const json& runtime) -> std::string {
                         const std::string kind = stringAt(runtime, {"spec", "targetRef", "kind"});
                         const std::string name = stringAt(runtime, {"spec", "targetRef", "name"});
                         const auto ref = targetResource(discovery, kind);
                         if (!ref || name.empty()) return {};
                         // Looked up where the runtime was listed, never where it says.
                         const std::string ns = actingNamespace(runtime, options.namespaceName);
                         if (!unusableListedObject(runtime, options.namespaceName).empty() ||
                             !kube::invalidPathSegment(name).empty())
                             return {};
                         if (client.getIfExists(*ref, ns, name)) return {};
                         return fmt::format("its target {}/{} is gone", kind, name);
                     });
    return result;
}

Deleted remove(kube::Client& client, const Garbage& item, bool serverDryRun) {
    kube::DeleteOptions options;
    options.dryRun = serverDryRun;
    options.preconditionUid = item.uid;
    options.preconditionResourceVersion = item.resourceVersion;
    options.propagationPolicy = "Background";
    if (item.ref.kind == "Pod") options.gracePeriodSeconds = 0;
    try {
        client.remove(item.ref, item.namespaceName, item.name, options);
    } catch (const kube::ApiError& error) {
        if (error.isNotFound()) return Deleted::Gone;
        if (error.code() == 409) return Deleted::Changed;
        throw;
    }
    return Deleted::Yes;
}

}  // namespace rossoctl::app::gc
