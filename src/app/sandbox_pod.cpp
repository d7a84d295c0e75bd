#include "rossoctl/app/sandbox_pod.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod_failure.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "rossoctl/ui/nearest_word.hpp"

namespace rossoctl::app {

using nlohmann::json;

namespace {

const json& metadataOf(const json& object) {
    static const json empty = json::object();
    if (object.contains("metadata") && object["metadata"].is_object()) return object["metadata"];
    return empty;
}

const json& specOf(const json& object) {
    static const json empty = json::object();
    if (object.contains("spec") && object["spec"].is_object()) return object["spec"];
    return empty;
}

}  // namespace

std::string uidOf(const json& object) {
    return metadataOf(object).value("uid", std::string{});
}

bool terminating(const json& object) {
    return metadataOf(object).contains("deletionTimestamp") &&
           !metadataOf(object)["deletionTimestamp"].is_null();
}

bool ownedBy(const json& object, const std::string& ownerUid) {
    if (ownerUid.empty()) return false;
    for (const auto& owner : metadataOf(object).value("ownerReferences", json::array())) {
        if (owner.value("uid", "") == ownerUid) return true;
    }
    return false;
}

bool controlledBy(const json& object, const std::string& ownerUid) {
    if (ownerUid.empty()) return false;
    for (const auto& owner : metadataOf(object).value("ownerReferences", json::array())) {
        if (!owner.is_object()) continue;
        const auto uid = owner.find("uid");
        const auto controller = owner.find("controller");
        if (uid != owner.end() && *uid == ownerUid && controller != owner.end() &&
            *controller == true)
            return true;
    }
    return false;
}

bool podReady(const json& pod) {
    if (!pod.contains("status") ||
        pod.value("status", json::object()).value("phase", "") != "Running")
        return false;
    return kube::conditionTrue(pod, "Ready");
}

std::string slowStopLine(const json& pod) {
    int64_t grace = 30;  // Kubernetes' default terminationGracePeriodSeconds
    const json& metadata = metadataOf(pod);
    const json& spec = specOf(pod);
    if (metadata.contains("deletionGracePeriodSeconds") &&
        metadata["deletionGracePeriodSeconds"].is_number_integer())
        grace = metadata["deletionGracePeriodSeconds"].get<int64_t>();
    else if (spec.contains("terminationGracePeriodSeconds") &&
             spec["terminationGracePeriodSeconds"].is_number_integer())
        grace = spec["terminationGracePeriodSeconds"].get<int64_t>();
    return fmt::format("waiting for pod {} to stop (grace period {}s)",
                       metadataOf(pod).value("name", ""), grace);
}

bool podFinished(const json& pod) {
    if (!pod.contains("status")) return false;
    const std::string phase = pod.value("status", json::object()).value("phase", "");
    return phase == "Succeeded" || phase == "Failed";
}

PodSelector sandboxPodSelector(const json& sandbox) {
    PodSelector selector;
    if (sandbox.contains("status") && sandbox["status"].is_object())
        selector.labelSelector =
            sandbox.value("status", json::object()).value("selector", std::string{});
    if (selector.labelSelector.empty())
        selector.fieldSelector = "metadata.name=" + model::sandboxPodName(sandbox);
    return selector;
}

SandboxPods findSandboxPods(kube::Client& client, const json& sandbox) {
    const PodSelector selector = sandboxPodSelector(sandbox);
    kube::ListOptions options;
    options.labelSelector = selector.labelSelector;
    options.fieldSelector = selector.fieldSelector;
    SandboxPods pods;
    pods.list =
        client.list(kube::resources::pods(), metadataOf(sandbox).value("namespace", ""), options);
    const std::string uid = uidOf(sandbox);
    for (const auto& pod : pods.list.value("items", json::array())) {
        if (controlledBy(pod, uid)) pods.owned.push_back(pod);
    }
    return pods;
}

std::optional<json> currentPod(const std::vector<json>& pods) {
    std::optional<json> newest;
    for (const auto& pod : pods) {
        if (terminating(pod)) continue;
        // RFC 3339 in UTC compares as text.
        if (!newest || metadataOf(pod).value("creationTimestamp", "") >
                           metadataOf(*newest).value("creationTimestamp", ""))
            newest = pod;
    }
    return newest;
}

std::optional<json> recordedPod(const json& sandbox, const std::vector<json>& pods) {
    const std::string name = model::sandboxPodName(sandbox);
    for (const auto& pod : pods)
        if (!terminating(pod) && metadataOf(pod).value("name", "") == name) return pod;
    return std::nullopt;
}

std::optional<json> sandboxPod(const json& sandbox, const std::vector<json>& owned) {
    if (auto recorded = recordedPod(sandbox, owned)) return recorded;
    std::vector<std::string> live;
    std::optional<json> only;
    for (const auto& pod : owned) {
        if (terminating(pod)) continue;
        live.push_back(metadataOf(pod).value("name", ""));
        only = pod;
    }
    if (live.size() > 1)
        throw Error(fmt::format(
            "sandbox/{} has {} pods that name it as their controller ({}) and none is the one it "
            "records; the controller refuses that too: delete the pods it did not make",
            metadataOf(sandbox).value("name", ""), live.size(), fmt::join(live, ", ")));
    return only;
}

std::vector<std::string> otherLivePods(const json& sandbox, const SandboxPods& pods) {
    const std::string recorded = model::sandboxPodName(sandbox);
    std::vector<std::string> names;
    auto consider = [&](const json& pod) {
        const std::string name = metadataOf(pod).value("name", "");
        if (name == recorded || terminating(pod) || podFinished(pod)) return;
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    };
    for (const auto& pod : pods.list.value("items", json::array())) consider(pod);
    for (const auto& pod : pods.owned) consider(pod);
    return names;
}

bool podEnvDiffers(kube::Client& client, const json& sandbox, const json& templateContainer) {
    auto pod = sandboxPod(sandbox, findSandboxPods(client, sandbox).owned);
    if (!pod || !pod->contains("spec")) return false;
    const std::string name = templateContainer.value("name", "");
    const json wanted = templateContainer.value("env", json::array());
    for (const auto& container :
         (*pod).value("spec", json::object()).value("containers", json::array())) {
        if (container.value("name", "") == name)
            return container.value("env", json::array()) != wanted;
    }
    return false;
}

namespace {

std::string memoryLimitOf(const json& pod, const std::string& container) {
    for (const auto& item : specOf(pod).value("containers", json::array())) {
        if (!item.is_object() || (!container.empty() && item.value("name", "") != container))
            continue;
        const json limit = item.value("resources", json::object())
                               .value("limits", json::object())
                               .value("memory", json());
        return limit.is_string() ? limit.get<std::string>() : std::string();
    }
    return {};
}

}  // namespace

ContainerKill containerKill(const std::optional<json>& pod, const std::string& container) {
    if (!pod) return {"Killed", "the pod was deleted", ""};
    if (terminating(*pod)) return {"Killed", "the pod is being deleted", ""};
    const json status = pod->value("status", json::object());
    const std::string podReason = status.value("reason", "");
    if (podReason == "NodeLost" || podReason == "Evicted" || podReason == "DeadlineExceeded")
        return {podReason == "NodeLost" ? "Killed" : podReason,
                fmt::format("the pod was stopped ({}: {})", podReason, status.value("message", "")),
                ""};
    for (const auto& item : status.value("containerStatuses", json::array())) {
        if (!container.empty() && item.value("name", "") != container) continue;
        for (const char* when : {"state", "lastState"}) {
            const json terminated =
                item.value(when, json::object()).value("terminated", json::object());
            const std::string reason = terminated.value("reason", "");
            if (reason == "OOMKilled") {
                const std::string limit = memoryLimitOf(*pod, container);
                return {"OOMKilled",
                        limit.empty()
                            ? "it ran out of memory (OOMKilled: the container's memory limit was "
                              "hit)"
                            : fmt::format("it ran out of memory (OOMKilled: the container's "
                                          "memory limit, {}, was hit)",
                                          limit),
                        limit};
            }
            if (!reason.empty() && reason != "Completed")
                return {"Killed", fmt::format("the container was terminated ({})", reason), ""};
        }
    }
    for (const auto& condition : status.value("conditions", json::array()))
        if (condition.value("type", "") == "Ready" && condition.value("status", "") == "Unknown")
            return {"Killed", "the pod's node stopped reporting (node lost)", ""};
    return {};
}

std::string whyContainerKilled(const std::optional<json>& pod, const std::string& container) {
    return containerKill(pod, container).message;
}

std::string whyContainerKilled(kube::Client& client, const std::string& ns, const std::string& pod,
                               const std::string& container) {
    try {
        return whyContainerKilled(client.getIfExists(kube::resources::pods(), ns, pod), container);
    } catch (const std::exception&) {
        return {};  // a message helper: the exit code already says the command was killed
    }
}

std::vector<std::string> podContainerNames(const json& pod) {
    std::vector<std::string> names;
    for (const auto& container : specOf(pod).value("containers", json::array()))
        if (container.is_object()) names.push_back(container.value("name", ""));
    return names;
}

std::string missingContainer(const json& pod, const std::string& container, bool initToo) {
    if (container.empty()) return {};
    const auto names = podContainerNames(pod);
    if (std::find(names.begin(), names.end(), container) != names.end()) return {};
    std::vector<std::string> inits;
    for (const auto& init : specOf(pod).value("initContainers", json::array())) {
        if (!init.is_object() || !init.contains("name") || !init["name"].is_string()) continue;
        // A native sidecar (restartPolicy Always) runs beside the containers: exec reaches it.
        if (init["name"] == container && init.value("restartPolicy", "") == "Always") return {};
        inits.push_back(init["name"]);
    }
    if (initToo && std::find(inits.begin(), inits.end(), container) != inits.end()) return {};
    const bool isInit = std::find(inits.begin(), inits.end(), container) != inits.end();
    return fmt::format("has no container \"{}\"{}; it has: {}{}", container,
                       isInit ? " to run in (it is an init container, which has ended)" : "",
                       fmt::join(names, ", "),
                       inits.empty() || isInit ? std::string()
                                               : fmt::format(" (init containers, for logs: {})",
                                                             fmt::join(inits, ", ")));
}

bool suspendedInSpec(const json& sandbox) {
    const json& spec = specOf(sandbox);
    if (spec.value("operatingMode", "") == "Suspended") return true;
    return spec.contains("replicas") && spec["replicas"].is_number() && spec["replicas"] == 0;
}

std::string sandboxStatus(const json& sandbox, bool hasPod,
                          std::chrono::system_clock::time_point now) {
    if (suspendedInSpec(sandbox)) return hasPod ? "Suspending" : "Suspended";
    if (kube::conditionTrue(sandbox, "Finished")) return "Finished";
    const std::string why = sandboxNotRunningReason(sandbox, now);
    if (why.rfind("expired", 0) == 0) return "Expired";
    if (why.rfind("has finished", 0) == 0) return "Finished";
    return kube::conditionTrue(sandbox, "Ready") ? "Running" : "Pending";
}

std::string resumeAdvice(const json& sandbox, const std::string& ns, const std::string& name) {
    if (!suspendedInSpec(sandbox)) return {};
    return fmt::format(": resume it with \"rossoctl sandbox resume {} -n {}\"", name, ns);
}

std::string sandboxNotRunningReason(const json& sandbox,
                                    std::chrono::system_clock::time_point now) {
    const json& spec = specOf(sandbox);
    if (spec.value("operatingMode", "") == "Suspended")
        return "is suspended (operatingMode Suspended)";
    if (suspendedInSpec(sandbox)) return "is suspended (replicas 0)";
    if (spec.contains("shutdownTime") && spec["shutdownTime"].is_string()) {
        auto shutdown = kube::parseTimestamp(spec["shutdownTime"].get<std::string>());
        if (shutdown && *shutdown <= now)
            return fmt::format("expired at {} (spec.shutdownTime)",
                               spec["shutdownTime"].get<std::string>());
    }
    if (auto finished = kube::findCondition(sandbox, "Finished");
        finished && finished->value("status", "") == "True")
        return fmt::format("has finished ({}: {})", finished->value("reason", ""),
                           finished->value("message", ""));
    return {};
}

std::string describeConditions(const json& sandbox) {
    std::vector<std::string> parts;
    for (const char* type : {"Ready", "Suspended", "Finished"}) {
        auto condition = kube::findCondition(sandbox, type);
        if (!condition) continue;
        std::string part = fmt::format("{}={}", type, condition->value("status", "Unknown"));
        const std::string reason = condition->value("reason", "");
        const std::string message = condition->value("message", "");
        if (!reason.empty() || !message.empty())
            part += fmt::format(" ({}{}{})", reason, reason.empty() || message.empty() ? "" : ": ",
                                message);
        parts.push_back(part);
    }
    if (parts.empty()) return "no conditions yet (is the agent-sandbox controller running?)";
    return fmt::format("{}", fmt::join(parts, ", "));
}

std::string sandboxNotFoundAdvice(kube::Client& client, const kube::ResourceRef& sandboxes,
                                  const std::string& ns, const std::string& name) {
    if (auto other = otherTypeAgentAdvice(client, ns, name); !other.empty()) return other;
    std::vector<std::string> names;
    try {
        for (const auto& item : client.list(sandboxes, ns).value("items", json::array()))
            names.push_back(metadataOf(item).value("name", ""));
    } catch (const std::exception&) {
        names.clear();  // refused or unreachable: the message without a suggestion is still right
    }
    return sandboxNotFoundAdvice(names, ns, name);
}

std::string sandboxNotFoundAdvice(const std::vector<std::string>& known, const std::string& ns,
                                  const std::string& name) {
    const std::string nearest = ui::nearestWord(name, known);
    if (!nearest.empty()) return fmt::format("did you mean \"{}\"?", nearest);
    return fmt::format("run \"rossoctl sandbox list -n {}\"", ns);
}

json runningSandboxPod(kube::Client& client, const kube::ResourceRef& sandboxes,
                       std::chrono::system_clock::time_point now, const std::string& ns,
                       const std::string& name, const std::string& use, bool takesRunPods) {
    json sandbox;
    try {
        sandbox = client.get(sandboxes, ns, name);
    } catch (const kube::ApiError& error) {
        if (!error.isNotFound()) throw;
        std::string advice = takesRunPods ? run::runPodAdvice(client, ns, name) : "";
        if (advice.empty()) advice = sandboxNotFoundAdvice(client, sandboxes, ns, name);
        throw Error(fmt::format("sandbox/{} not found in namespace {}; {}", name, ns, advice));
    }
    if (auto why = sandboxNotRunningReason(sandbox, now); !why.empty())
        throw Error(fmt::format("sandbox/{} {}; it has no pod to {}{}", name, why, use,
                                resumeAdvice(sandbox, ns, name)));
    const auto pod = sandboxPod(sandbox, findSandboxPods(client, sandbox).owned);
    if (!pod)
        throw Error(fmt::format("sandbox/{} has no pod; the Sandbox says {}", name,
                                describeConditions(sandbox)));
    const std::string phase = (*pod).value("status", json::object()).value("phase", "Unknown");
    if (phase != "Running")
        throw Error(fmt::format("sandbox/{}: pod {} is {}, not Running{}", name,
                                (*pod).value("metadata", json::object()).value("name", ""), phase,
                                notRunningAdvice(*pod, ns, name)));
    return *pod;
}

std::string notRunningAdvice(const json& pod, const std::string& ns, const std::string& sandbox,
                             const std::string& then) {
    if (auto image = model::podImageFailure(pod))
        return fmt::format(
            ": {}; waiting will not help: give the agent an image this cluster can pull "
            "(\"rossoctl agents delete {} -n {}\", then import it again)",
            *image, sandbox, ns);
    if (auto failure = model::podStartFailure(pod))
        return fmt::format(
            ": {}; waiting will not help until that is fixed (\"kubectl describe pod {} -n {}\" "
            "shows its events)",
            *failure, metadataOf(pod).value("name", ""), ns);
    return fmt::format("; wait with \"rossoctl agents wait {} -n {}\"{}", sandbox, ns,
                       then.empty() ? "" : ", then " + then);
}

}  // namespace rossoctl::app
