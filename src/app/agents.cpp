#include "rossoctl/app/agents.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod_status.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "rossoctl/ui/nearest_word.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::app {

using model::WorkloadType;
using nlohmann::json;

namespace {

std::string managedSelector() {
    return std::string(model::kManagedByLabel) + "=" + model::kManagedByValue;
}

// Reads in place: copying metadata for one field copied a server's 20 MiB name each time.
std::string metadataString(const json& object, const char* key) {
    if (!object.is_object()) return "";
    const auto metadata = object.find("metadata");
    if (metadata == object.end() || !metadata->is_object()) return "";
    const auto value = metadata->find(key);
    return value != metadata->end() && value->is_string() ? value->get<std::string>() : "";
}

}  // namespace

std::string controllerUid(const json& object) {
    if (!object.is_object()) return "";
    const auto metadata = object.find("metadata");
    if (metadata == object.end() || !metadata->is_object()) return "";
    const auto owners = metadata->find("ownerReferences");
    if (owners == metadata->end() || !owners->is_array()) return "";
    for (const auto& owner : *owners)
        if (owner.is_object() && owner.value("controller", false)) return owner.value("uid", "");
    return "";
}

kube::ResourceRef workloadResource(WorkloadType type, const std::string& sandboxVersion) {
    switch (type) {
        case WorkloadType::Deployment:
            return kube::resources::deployments();
        case WorkloadType::StatefulSet:
            return kube::resources::statefulSets();
        case WorkloadType::Job:
            return kube::resources::jobs();
        case WorkloadType::Sandbox:
            return kube::resources::sandboxes(sandboxVersion);
    }
    throw Error("unknown workload type");
}

kube::ResourceRef workloadResource(WorkloadType type, kube::Discovery& discovery) {
    if (type == WorkloadType::Sandbox) return discovery.sandboxes();
    return workloadResource(type, std::string());
}

std::vector<AgentKind> servedAgentKinds(kube::Discovery& discovery) {
    std::vector<AgentKind> kinds;
    for (auto type : model::allWorkloadTypes()) {
        if (type == WorkloadType::Sandbox) {
            auto version = discovery.pickVersion("agents.x-k8s.io", {"v1beta1", "v1alpha1"});
            if (!version) continue;
            kinds.push_back({type, kube::resources::sandboxes(*version)});
        } else {
            kinds.push_back({type, workloadResource(type, discovery)});
        }
    }
    return kinds;
}

std::string typeName(const kube::ResourceRef& ref) {
    std::string kind = ref.kind;
    std::transform(kind.begin(), kind.end(), kind.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ref.group.empty() ? kind : kind + "." + ref.group;
}

std::string Agent::name() const {
    return metadataString(object, "name");
}

std::string Agent::namespaceName() const {
    return metadataString(object, "namespace");
}

bool Agent::managed() const {
    const json& metadata = object.contains("metadata") ? object["metadata"] : json::object();
    if (!metadata.contains("labels") || !metadata["labels"].is_object()) return false;
    return metadata["labels"].value(model::kManagedByLabel, "") == model::kManagedByValue;
}

std::string agentSelector(const std::string& selector) {
    return managedSelector() + (selector.empty() ? "" : "," + selector);
}

std::vector<Agent> listAgents(kube::Client& client, kube::Discovery& discovery,
                              const std::string& ns, const std::string& selector) {
    std::vector<Agent> agents;
    kube::ListOptions options;
    options.labelSelector = agentSelector(selector);
    for (const auto& kind : servedAgentKinds(discovery)) {
        json list = client.list(kind.ref, ns, options);
        for (auto& item : list["items"]) agents.push_back({kind, std::move(item)});
    }
    std::stable_sort(agents.begin(), agents.end(), [](const Agent& a, const Agent& b) {
        return std::make_pair(a.namespaceName(), a.name()) <
               std::make_pair(b.namespaceName(), b.name());
    });
    return agents;
}

std::vector<Agent> findWorkloads(kube::Client& client, kube::Discovery& discovery,
                                 const std::string& ns, const std::string& name) {
    std::vector<Agent> found;
    for (const auto& kind : servedAgentKinds(discovery)) {
        if (auto object = client.getIfExists(kind.ref, ns, name)) {
            // Waits and pod lookups read the namespace from the object: never leave it empty.
            if (metadataString(*object, "namespace").empty())
                (*object)["metadata"]["namespace"] = ns;
            found.push_back({kind, std::move(*object)});
        }
    }
    return found;
}

Agent getAgent(kube::Client& client, kube::Discovery& discovery, const std::string& ns,
               const std::string& name) {
    auto found = findWorkloads(client, discovery, ns, name);
    for (const auto& agent : found)
        if (agent.managed()) return agent;
    if (!found.empty())
        throw AgentNotFound(fmt::format(
            "{} \"{}\" in namespace \"{}\" is not an agent: it lacks the label {}; rossoctl "
            "leaves it alone",
            typeName(found.front().kind.ref), name, ns, managedSelector()));
    throw AgentNotFound(fmt::format("agent \"{}\" not found in namespace \"{}\"; {}", name, ns,
                                    agentNotFoundAdvice(client, discovery, ns, name)));
}

std::string nearestAgentName(kube::Client& client, kube::Discovery& discovery,
                             const std::string& ns, const std::string& name) {
    std::vector<std::string> names;
    try {
        for (const auto& agent : listAgents(client, discovery, ns))
            names.push_back(metadataString(agent.object, "name"));
    } catch (const std::exception&) {
        return {};  // refused or unreachable: the message without a suggestion is still right
    }
    return ui::nearestWord(name, names);
}

std::string agentNotFoundAdvice(kube::Client& client, kube::Discovery& discovery,
                                const std::string& ns, const std::string& name) {
    const std::string nearest = nearestAgentName(client, discovery, ns, name);
    if (!nearest.empty()) return fmt::format("did you mean \"{}\"?", nearest);
    return fmt::format("see the agents there with \"rossoctl agents list -n {}\"", ns);
}

PodSummary summarizePod(const json& pod) {
    return {metadataString(pod, "name"), model::podStatusText(pod), podFinished(pod)};
}

bool podStatusTellsMore(const PodSummary& pod) {
    return !pod.name.empty() && !pod.status.empty() && pod.status != "Running" &&
           pod.status != "Pending";
}

std::vector<std::pair<std::string, PodSummary>> podsByOwner(kube::Client& client,
                                                            const std::string& ns,
                                                            const std::string& selector) {
    kube::ListOptions options;
    options.labelSelector = selector;
    json pods = client.list(kube::resources::pods(), ns, options)["items"];
    // Newest first, so a replacement pod wins over the one being deleted.
    std::stable_sort(pods.begin(), pods.end(), [](const json& a, const json& b) {
        return metadataString(a, "creationTimestamp") > metadataString(b, "creationTimestamp");
    });
    std::vector<std::pair<std::string, PodSummary>> owned;
    for (const auto& pod : pods) {
        // Kubernetes allows one controller per object: a pod naming 60 would be summarized 60
        // times, so only the first counts.
        std::string uid = controllerUid(pod);
        if (!uid.empty()) owned.emplace_back(std::move(uid), summarizePod(pod));
    }
    return owned;
}

namespace {

// The newest of `pods` not being deleted; nullopt when there is none.
std::optional<json> newestLivePod(const json& pods) {
    std::optional<json> newest;
    for (const auto& pod : pods) {
        if (pod["metadata"].contains("deletionTimestamp")) continue;
        if (!newest ||
            metadataString(pod, "creationTimestamp") > metadataString(*newest, "creationTimestamp"))
            newest = pod;
    }
    return newest;
}

}  // namespace

PodSummary agentPod(kube::Client& client, const Agent& agent) {
    const std::string ns = agent.namespaceName();
    if (agent.kind.type == WorkloadType::Sandbox) {
        auto pod =
            client.getIfExists(kube::resources::pods(), ns, model::sandboxPodName(agent.object));
        return pod ? summarizePod(*pod) : PodSummary{};
    }
    kube::ListOptions options;
    options.labelSelector =
        fmt::format("{}={},{}", model::kNameLabel, agent.name(), managedSelector());
    const auto newest = newestLivePod(client.list(kube::resources::pods(), ns, options)["items"]);
    return newest ? summarizePod(*newest) : PodSummary{};
}

std::map<std::string, PodSummary> podsOfUnreadyAgents(kube::Client& client, const std::string& ns,
                                                      const std::vector<Agent>& agents) {
    std::map<std::string, PodSummary> found;
    std::map<std::string, json> byAgent;  // "namespace/name" -> its pods
    for (const auto& agent : agents)
        if (!model::workloadStatus(agent.kind.type, agent.object).ready)
            byAgent[agent.namespaceName() + "/" + agent.name()] = json::array();
    if (byAgent.empty()) return found;
    kube::ListOptions options;
    options.labelSelector = managedSelector();
    const json pods = client.list(kube::resources::pods(), ns, options)["items"];
    for (const auto& pod : pods) {
        const json labels = pod.value("metadata", json::object()).value("labels", json::object());
        const auto agent = byAgent.find(metadataString(pod, "namespace") + "/" +
                                        labels.value(model::kNameLabel, ""));
        if (agent != byAgent.end()) agent->second.push_back(pod);
    }
    for (const auto& [key, owned] : byAgent)
        if (auto newest = newestLivePod(owned)) found[key] = summarizePod(*newest);
    return found;
}

std::string objectAge(const json& object, std::chrono::system_clock::time_point now) {
    auto created = kube::parseTimestamp(metadataString(object, "creationTimestamp"));
    if (!created) return "<unknown>";
    return ui::formatAge(std::chrono::duration_cast<std::chrono::seconds>(now - *created));
}

bool waitUntilDeleted(kube::Client& client, const Clock& clock, const kube::ResourceRef& ref,
                      const std::string& ns, const std::string& name,
                      std::chrono::milliseconds timeout) {
    kube::WaitOptions options;
    options.timeout = timeout;
    auto result = kube::waitForObject(client, clock, ref, ns, name, options,
                                      [](const std::optional<json>& object) { return !object; });
    return result.satisfied();
}

std::string sandboxOwner(const json& sandbox) {
    // A warm pool's Sandbox, or one a SandboxClaim took (the claim then controls it).
    for (const auto& owner :
         sandbox.value("metadata", json::object()).value("ownerReferences", json::array()))
        if (owner.value("controller", false))
            return owner.value("kind", "") + "/" + owner.value("name", "");
    return "<none>";
}

bool isWarmPoolSpare(const json& sandbox) {
    return sandboxOwner(sandbox).rfind("SandboxWarmPool/", 0) == 0;
}

// What list -w keeps room for: a Ready condition not yet written (Unknown, a new sandbox's
// first rows), the longest status a sandbox's pod commonly passes through (ContainerCreating;
// ImagePullBackOff) and the longest Ready reason (DependenciesNotReady).
constexpr size_t kReadyWidth = std::string_view("Unknown").size();
constexpr size_t kStatusWidth = std::string_view("ContainerCreating").size();
constexpr size_t kReasonWidth = std::string_view("DependenciesNotReady").size();

ui::Table agentTable(bool allNamespaces, bool withPods) {
    ui::Table table;
    table.headers = {"NAME", "TYPE", "READY", "STATUS", "IMAGE", "AGE", "MESSAGE"};
    table.wideOnly = {false, false, false, false, false, false, true};
    table.watchWidths = {0, 0, 0, kReasonWidth};  // STATUS holds a reason or the pod's status
    if (withPods) {
        table.headers.insert(table.headers.begin() + 5, "POD");
        table.wideOnly.insert(table.wideOnly.begin() + 5, false);
    }
    if (allNamespaces) {
        table.headers.insert(table.headers.begin(), "NAMESPACE");
        table.wideOnly.insert(table.wideOnly.begin(), false);
        table.watchWidths.insert(table.watchWidths.begin(), 0);
    }
    return table;
}

void addAgentRow(ui::Table& table, const Agent& agent, const std::optional<PodSummary>& pod,
                 std::chrono::system_clock::time_point now, bool allNamespaces, bool withPods) {
    auto status = model::workloadStatus(agent.kind.type, agent.object);
    const bool podSays = !status.ready && pod && podStatusTellsMore(*pod);
    std::vector<std::string> row = {agent.name(),
                                    model::workloadTypeName(agent.kind.type),
                                    status.readyText,
                                    podSays ? pod->status : status.reason,
                                    model::workloadImage(agent.kind.type, agent.object),
                                    objectAge(agent.object, now),
                                    status.message};
    if (withPods) row.insert(row.begin() + 5, !pod || pod->name.empty() ? "<none>" : pod->name);
    if (allNamespaces) row.insert(row.begin(), agent.namespaceName());
    table.rows.push_back(std::move(row));
}

ui::Table sandboxTable(bool allNamespaces, bool showOwner) {
    ui::Table table;
    table.headers = {"NAME", "READY", "STATUS",   "REASON", "POD",
                     "AGE",  "IMAGE", "SHUTDOWN", "OWNER",  "MESSAGE"};
    table.wideOnly = {false, false, false, false, false, false, true, true, !showOwner, true};
    table.watchWidths = {0, kReadyWidth, kStatusWidth, kReasonWidth};
    if (allNamespaces) {
        table.headers.insert(table.headers.begin(), "NAMESPACE");
        table.wideOnly.insert(table.wideOnly.begin(), false);
        table.watchWidths.insert(table.watchWidths.begin(), 0);
    }
    return table;
}

void addSandboxRow(ui::Table& table, const json& sandbox, const PodSummary& pod,
                   std::chrono::system_clock::time_point now, bool allNamespaces) {
    std::string reason, message;
    bool ready = model::sandboxReady(sandbox, &reason, &message);
    bool reported = sandbox.contains("status") && sandbox["status"].contains("conditions");
    const json spec = sandbox.value("spec", json::object());
    std::string status = sandboxStatus(sandbox, !pod.name.empty(), now);
    if (pod.status == "Terminating" && !suspendedInSpec(sandbox)) {
        // Its pod is being deleted (a restart, verify's, or the sandbox's own deletion): the
        // Failed phase a SIGTERM-ignoring agent ends in at the grace period is no failure.
        status = terminating(sandbox) ? "Terminating" : "Restarting";
        if (reason == "PodFailed" || reason == "PodSucceeded") reason = "PodTerminating";
    } else if (!pod.name.empty() && !pod.finished && !suspendedInSpec(sandbox) &&
               kube::conditionTrue(sandbox, "Finished")) {
        // Finished speaks of the pod before this one, not yet rewritten for the new pod.
        status = "Restarting";
        if (reason == "PodFailed" || reason == "PodSucceeded") reason = "PodReplaced";
    } else if ((status == "Pending" || status == "Running") && podStatusTellsMore(pod)) {
        status = pod.status;
    }
    std::vector<std::string> row = {metadataString(sandbox, "name"),
                                    ready ? "True" : (reported ? "False" : "Unknown"),
                                    status,
                                    reason.empty() ? "<none>" : reason,
                                    pod.name.empty() ? "<none>" : pod.name,
                                    objectAge(sandbox, now),
                                    model::workloadImage(WorkloadType::Sandbox, sandbox),
                                    spec.value("shutdownTime", "<none>"),
                                    sandboxOwner(sandbox),
                                    message};
    if (allNamespaces) row.insert(row.begin(), metadataString(sandbox, "namespace"));
    table.rows.push_back(std::move(row));
}

bool printObjects(std::ostream& out, ui::OutputFormat format, const std::vector<Agent>& agents,
                  bool single, bool showManagedFields) {
    if (format == ui::OutputFormat::Name) {
        for (const auto& agent : agents)
            out << typeName(agent.kind.ref) << '/' << ui::escapeForTerminal(agent.name()) << '\n';
        return true;
    }
    if (format != ui::OutputFormat::Json && format != ui::OutputFormat::Yaml) return false;
    json items = json::array();
    for (const auto& agent : agents) items.push_back(agent.object);
    return ui::printJsonOrYaml(
        out, format, single && items.size() == 1 ? items[0] : ui::asList(items), showManagedFields);
}

}  // namespace rossoctl::app
