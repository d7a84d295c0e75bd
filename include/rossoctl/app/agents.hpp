#pragma once
// Finding agents of every deployment type (by name or by the managed-by label) and the rows
// `agents list/get` and `sandbox list/get` print for them.
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/clock.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/discovery.hpp"
#include "rossoctl/model/workload.hpp"
#include "rossoctl/ui/printer.hpp"

namespace rossoctl::app {

struct AgentKind {
    model::WorkloadType type;
    kube::ResourceRef ref;
};

// The REST collection of a workload type; the Sandbox at the version the cluster serves
// (throws Error naming what to install when agents.x-k8s.io is not served).
kube::ResourceRef workloadResource(model::WorkloadType type, kube::Discovery& discovery);
// The same for a known Sandbox version (what an import plan already chose).
kube::ResourceRef workloadResource(model::WorkloadType type, const std::string& sandboxVersion);
// Every type this cluster serves; the Sandbox is left out when agents.x-k8s.io is not served.
std::vector<AgentKind> servedAgentKinds(kube::Discovery& discovery);
// kubectl's name for a type in messages: "deployment.apps", "sandbox.agents.x-k8s.io".
std::string typeName(const kube::ResourceRef& ref);

struct Agent {
    AgentKind kind;
    nlohmann::json object;
    std::string name() const;
    std::string namespaceName() const;
    bool managed() const;  // carries app.kubernetes.io/managed-by=rossoctl
};

// The label selector of rossoctl-managed agents, narrowed by the user's -l (may be "").
std::string agentSelector(const std::string& selector);
// Every rossoctl-managed agent in ns ("" = every namespace), sorted by namespace then name.
std::vector<Agent> listAgents(kube::Client& client, kube::Discovery& discovery,
                              const std::string& ns, const std::string& selector = "");
// For "agent A not found": the agent in ns whose name A nearly spells (listed only on that
// error path), for a "did you mean"; "" when none is near or the list fails.
std::string nearestAgentName(kube::Client& client, kube::Discovery& discovery,
                             const std::string& ns, const std::string& name);
// "did you mean" that agent, else where to see the agents in ns (the end of a not-found line).
std::string agentNotFoundAdvice(kube::Client& client, kube::Discovery& discovery,
                                const std::string& ns, const std::string& name);
// Every workload of any agent type named `name` in ns, managed or not.
std::vector<Agent> findWorkloads(kube::Client& client, kube::Discovery& discovery,
                                 const std::string& ns, const std::string& name);
// No managed agent of that name: none at all, or a workload without rossoctl's label.
class AgentNotFound : public Error {
  public:
    using Error::Error;
};

// The managed agent named `name`; throws AgentNotFound (exit 1) with what to do when there is
// none.
Agent getAgent(kube::Client& client, kube::Discovery& discovery, const std::string& ns,
               const std::string& name);

// A pod as a row shows it: its name and kubectl's STATUS (ImagePullBackOff, Running, ...).
struct PodSummary {
    std::string name;       // "" when there is no pod
    std::string status;     // model::podStatusText
    bool finished = false;  // phase Succeeded or Failed
};
PodSummary summarizePod(const nlohmann::json& pod);
// True when the pod's STATUS says more than the workload's own Pending (an image that cannot be
// pulled, a crash loop, an OOM kill), so a row shows it instead.
bool podStatusTellsMore(const PodSummary& pod);

// The UID of the object's controller: its first ownerReference with controller=true (Kubernetes
// allows one; a server naming more gets the first), "" when none.
std::string controllerUid(const nlohmann::json& object);
// The pod by the UID of its controlling owner (newest first), for the pods matching selector:
// each pod once, under its first controller reference.
std::vector<std::pair<std::string, PodSummary>> podsByOwner(kube::Client& client,
                                                            const std::string& ns,
                                                            const std::string& selector);
// The agent's current pod (name "" when none): the Sandbox's own, else the newest with its
// labels.
PodSummary agentPod(kube::Client& client, const Agent& agent);

// "5m" from metadata.creationTimestamp; "<unknown>" without one.
std::string objectAge(const nlohmann::json& object, std::chrono::system_clock::time_point now);

// Watches until the object is gone (or was never there); false when timeout passes first
// (0 = no limit) or on Ctrl-C.
bool waitUntilDeleted(kube::Client& client, const Clock& clock, const kube::ResourceRef& ref,
                      const std::string& ns, const std::string& name,
                      std::chrono::milliseconds timeout);

// `agents list/get`: NAME TYPE READY STATUS IMAGE [POD] AGE, wide + MESSAGE (NAMESPACE first
// with allNamespaces). POD with withPods (get looks each agent's pod up; list does not show
// it): a row then gives its pod, "" showing as <none>. STATUS is the workload's reason, or its
// pod's STATUS when the agent is not ready and the pod tells more (ImagePullBackOff).
ui::Table agentTable(bool allNamespaces, bool withPods);
void addAgentRow(ui::Table& table, const Agent& agent, const std::optional<PodSummary>& pod,
                 std::chrono::system_clock::time_point now, bool allNamespaces, bool withPods);
// The current pod of every agent of `agents` that is not ready, by "namespace/name"; one LIST
// of the managed pods, none when every agent is ready.
std::map<std::string, PodSummary> podsOfUnreadyAgents(kube::Client& client, const std::string& ns,
                                                      const std::vector<Agent>& agents);

// "SandboxWarmPool/NAME" or "SandboxClaim/NAME": the Sandbox's controlling owner, else "<none>".
std::string sandboxOwner(const nlohmann::json& sandbox);
// A warm pool's spare: a Sandbox a SandboxWarmPool controls, until a SandboxClaim takes it.
// `sandbox list` and `project describe` show these apart from the user's own sandboxes.
bool isWarmPoolSpare(const nlohmann::json& sandbox);
// `sandbox list/get`: NAME READY STATUS REASON POD AGE, wide + IMAGE SHUTDOWN OWNER MESSAGE
// (NAMESPACE first with allNamespaces); pod "" shows as <none>. STATUS is the pod's own when
// the sandbox is Pending or Running and the pod tells more (ImagePullBackOff, CrashLoopBackOff);
// Restarting (Terminating when the sandbox itself goes) while its pod is being deleted or a
// new pod has not yet had the Finished condition of the one before rewritten.
// showOwner: OWNER in the default columns too (when warm-pool spares are listed).
ui::Table sandboxTable(bool allNamespaces, bool showOwner = false);
void addSandboxRow(ui::Table& table, const nlohmann::json& sandbox, const PodSummary& pod,
                   std::chrono::system_clock::time_point now, bool allNamespaces);

// Prints objects as -o json|yaml (one object, or a List) or name; false for table formats.
bool printObjects(std::ostream& out, ui::OutputFormat format, const std::vector<Agent>& agents,
                  bool single, bool showManagedFields = false);

}  // namespace rossoctl::app
