#pragma once
// A Sandbox's pod, found the way the controller knows it: pods whose ownerReferences carry
// the Sandbox's UID, looked up by status.selector, else by the pod's name (the
// agents.x-k8s.io/pod-name annotation or the Sandbox's own name).
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/kube/client.hpp"

namespace rossoctl::app {

inline constexpr const char* kPodNameAnnotation = "agents.x-k8s.io/pod-name";

// How to select the sandbox's pods in a LIST or watch.
struct PodSelector {
    std::string labelSelector;  // status.selector, when the controller has written it
    std::string fieldSelector;  // metadata.name=<pod name> otherwise
};
PodSelector sandboxPodSelector(const nlohmann::json& sandbox);

struct SandboxPods {
    nlohmann::json list;  // the LIST answer (its resourceVersion starts a watch)
    // Pods whose controller reference is the sandbox's UID: as the agent-sandbox controller counts
    // its pods, so a pod anyone may create with a plain owner reference is not the sandbox's.
    std::vector<nlohmann::json> owned;
};

// One LIST request.
SandboxPods findSandboxPods(kube::Client& client, const nlohmann::json& sandbox);

bool ownedBy(const nlohmann::json& object, const std::string& ownerUid);
// An ownerReference with this UID and controller: true.
bool controlledBy(const nlohmann::json& object, const std::string& ownerUid);
std::string uidOf(const nlohmann::json& object);
bool terminating(const nlohmann::json& object);
bool podReady(const nlohmann::json& pod);

// How long a deleted pod may still be stopping before a waiting command says why it waits.
inline constexpr std::chrono::seconds kSlowStopAfter{5};
// "waiting for pod orders to stop (grace period 30s)": the grace period its DELETE gave it
// (metadata.deletionGracePeriodSeconds), else its spec's, else Kubernetes' default of 30s.
std::string slowStopLine(const nlohmann::json& pod);
// Succeeded or Failed: the controller does not recreate such a pod.
bool podFinished(const nlohmann::json& pod);
// The newest owned pod that is not being deleted.
std::optional<nlohmann::json> currentPod(const std::vector<nlohmann::json>& pods);
// The sandbox's pod among `owned` (findSandboxPods): the one it records, else the one live pod
// it controls; never merely the newest, which anyone who may create pods can make. Several live
// pods it controls, none recorded, is an Error (the controller refuses that state too).
std::optional<nlohmann::json> sandboxPod(const nlohmann::json& sandbox,
                                         const std::vector<nlohmann::json>& owned);
// The pod the Sandbox records as its own (annotation agents.x-k8s.io/pod-name, else its name,
// as the controller resolves it) among pods, if there and not being deleted.
std::optional<nlohmann::json> recordedPod(const nlohmann::json& sandbox,
                                          const std::vector<nlohmann::json>& pods);
// The pods of the LIST (those matching the Sandbox's selector) and those owned by it, other than
// the recorded one, that run or may run: neither being deleted nor finished; names, each once.
std::vector<std::string> otherLivePods(const nlohmann::json& sandbox, const SandboxPods& pods);

// The env of `container` in the sandbox's current pod differs from `templateContainer`'s (a
// template written without a restart); false when there is no current pod to compare.
bool podEnvDiffers(kube::Client& client, const nlohmann::json& sandbox,
                   const nlohmann::json& templateContainer);

// Why a command in `container` of `pod` ended with SIGKILL (exit 137), when the pod's status
// tells: "the pod was deleted", "it ran out of memory (OOMKilled, limit 64Mi)", "the node ... was
// lost". Empty when it does not. One GET; never throws.
std::string whyContainerKilled(kube::Client& client, const std::string& ns, const std::string& pod,
                               const std::string& container);
// The same, read from a pod already fetched (nullopt: the pod no longer exists).
std::string whyContainerKilled(const std::optional<nlohmann::json>& pod,
                               const std::string& container);

// whyContainerKilled as data: `reason` is OOMKilled, Evicted, DeadlineExceeded or Killed (the
// pod deleted, its node lost, another termination), empty when the pod does not say;
// `memoryLimit` the container's limit from the pod's spec (with OOMKilled).
struct ContainerKill {
    std::string reason;
    std::string message;
    std::string memoryLimit;
};
ContainerKill containerKill(const std::optional<nlohmann::json>& pod, const std::string& container);

// The names of the pod's containers (spec.containers), in order.
std::vector<std::string> podContainerNames(const nlohmann::json& pod);
// "has no container \"nope\"; it has: agent" when `container` is given and the pod has no
// container of that name; empty otherwise.
// initToo: an init container counts too (logs reads a finished one's, as kubectl logs -c does).
std::string missingContainer(const nlohmann::json& pod, const std::string& container,
                             bool initToo = false);

// True when the spec asks for no pod (operatingMode Suspended, or replicas 0 on v1alpha1).
bool suspendedInSpec(const nlohmann::json& sandbox);

// The STATUS column of `sandbox list`: Running, Pending, Suspending (asked to, its pod still
// there), Suspended, Expired or Finished.
std::string sandboxStatus(const nlohmann::json& sandbox, bool hasPod,
                          std::chrono::system_clock::time_point now);

// Why the sandbox will not get a running pod: "is suspended (operatingMode Suspended)",
// "expired at 2026-...", "has finished (PodFailed: ...)"; empty when it can run.
std::string sandboxNotRunningReason(const nlohmann::json& sandbox,
                                    std::chrono::system_clock::time_point now);

// What follows a message that a suspended sandbox has no pod: ": resume it with \"rossoctl
// sandbox resume NAME -n NS\""; empty when the sandbox is not suspended.
std::string resumeAdvice(const nlohmann::json& sandbox, const std::string& ns,
                         const std::string& name);

// What follows "pod P is Pending, not Running" in a message about sandbox `sandbox` in ns: when
// the pod cannot start without a change (an image that cannot be pulled, a container that
// cannot be created) that reason and that waiting will not help; else the wait to run, then
// `then` ("verify again"). Every command it names carries -n NS.
std::string notRunningAdvice(const nlohmann::json& pod, const std::string& ns,
                             const std::string& sandbox, const std::string& then = {});

// The Running pod of sandbox `name` in ns, for exec, cp and port-forward; throws Error saying
// what to do when the sandbox is missing, cannot run, has no pod or its pod is not Running.
// `use` completes "it has no pod to ..." ("run commands in", "forward ports to"); with
// `takesRunPods` (a command that also takes pod/NAME) a missing sandbox named as a pod sandbox
// run made is pointed to pod/NAME.
nlohmann::json runningSandboxPod(kube::Client& client, const kube::ResourceRef& sandboxes,
                                 std::chrono::system_clock::time_point now, const std::string& ns,
                                 const std::string& name,
                                 const std::string& use = "run commands in",
                                 bool takesRunPods = false);

// What follows "sandbox/S not found in namespace NS; ": "did you mean \"orders\"?" for a
// sandbox whose name S nearly spells (one list, only on that error path), else the list
// command (also when the list is refused).
std::string sandboxNotFoundAdvice(kube::Client& client, const kube::ResourceRef& sandboxes,
                                  const std::string& ns, const std::string& name);
// For "sandbox/S not found": S is a rossoctl agent of type deployment (what agents import makes
// without --deployment-type sandbox), said with what to do; "" otherwise. One GET, on that
// error path only; a read refused or failed counts as none.
std::string otherTypeAgentAdvice(kube::Client& client, const std::string& ns,
                                 const std::string& name);
// The same from the names already listed in ns.
std::string sandboxNotFoundAdvice(const std::vector<std::string>& known, const std::string& ns,
                                  const std::string& name);

// "Ready=False (PodNotReady: pod orders is Pending), Finished=False" for messages.
std::string describeConditions(const nlohmann::json& sandbox);

}  // namespace rossoctl::app
