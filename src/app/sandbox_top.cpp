// `sandbox top`: sandboxes → their pods → one kubelet Summary per node, read through
// /api/v1/nodes/NODE/proxy/stats/summary.
#include "rossoctl/app/sandbox_top.hpp"

#include <fmt/format.h>

#include <set>

#include "rossoctl/app/agents.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/resource.hpp"

namespace rossoctl::app {
namespace {

using nlohmann::json;

// The label the controller gives each sandbox's pod (`sandbox list` selects by it too).
constexpr const char* kSandboxPodLabel = "agents.x-k8s.io/sandbox-name-hash";

const json* findMember(const json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    auto found = object.find(key);
    return found == object.end() ? nullptr : &*found;
}

// A count: a non-negative integer, nothing else (a float, a string, a negative number is no
// count the kubelet writes).
std::optional<uint64_t> countAt(const json& object, const char* key) {
    const json* value = findMember(object, key);
    if (!value) return std::nullopt;
    if (value->is_number_unsigned()) return value->get<uint64_t>();
    if (value->is_number_integer() && value->get<int64_t>() >= 0)
        return static_cast<uint64_t>(value->get<int64_t>());
    return std::nullopt;
}

std::string stringAt(const json& object, const char* key) {
    const json* value = findMember(object, key);
    return value && value->is_string() ? value->get<std::string>() : std::string{};
}

const json& objectAt(const json& object, const char* key) {
    static const json empty = json::object();
    const json* value = findMember(object, key);
    return value && value->is_object() ? *value : empty;
}

PodUsage usageOf(const json& pod, const std::set<std::string>& emptyDirs) {
    PodUsage usage;
    const json& cpu = objectAt(pod, "cpu");
    usage.cpuNanoCores = countAt(cpu, "usageNanoCores");
    usage.time = stringAt(cpu, "time").substr(0, 40);
    usage.memoryWorkingSet = countAt(objectAt(pod, "memory"), "workingSetBytes");
    usage.processes = countAt(objectAt(pod, "process_stats"), "process_count");
    const json* containers = findMember(pod, "containers");
    if (containers && containers->is_array()) {
        for (const auto& container : *containers) {
            const auto used = countAt(objectAt(container, "rootfs"), "usedBytes");
            if (!used) continue;
            // Saturates: a sum past 2^64 is a node's nonsense, not an overflow here.
            const uint64_t sum = usage.writableLayerBytes.value_or(0);
            usage.writableLayerBytes = sum + *used < sum ? UINT64_MAX : sum + *used;
        }
    }
    const json* volumes = findMember(pod, "volume");
    if (volumes && volumes->is_array()) {
        for (const auto& volume : *volumes) {
            const auto used = countAt(volume, "usedBytes");
            if (!used || !emptyDirs.count(stringAt(volume, "name"))) continue;
            const uint64_t sum = usage.emptyDirBytes.value_or(0);
            usage.emptyDirBytes = sum + *used < sum ? UINT64_MAX : sum + *used;
        }
    }
    return usage;
}

// Sandbox UID → its current pod, from one LIST of the controller's pods.
std::map<std::string, json> podsBySandbox(kube::Client& client, const std::string& ns) {
    kube::ListOptions options;
    options.labelSelector = kSandboxPodLabel;
    const json list = client.list(kube::resources::pods(), ns, options);
    std::map<std::string, std::vector<json>> owned;
    for (const auto& pod : list.value("items", json::array())) {
        // One controller per pod, as Kubernetes allows: a pod naming 60 is not kept 60 times.
        std::string uid = controllerUid(pod);
        if (!uid.empty()) owned[std::move(uid)].push_back(pod);
    }
    std::map<std::string, json> current;
    for (auto& [uid, pods] : owned)
        if (auto pod = currentPod(pods)) current.emplace(uid, std::move(*pod));
    return current;
}

json nodeSummary(kube::Client& client, const std::string& node) {
    const std::string path = "/api/v1/nodes/" + kube::urlEncode(node) + "/proxy/stats/summary";
    try {
        return client.getPath(path, kMaxSummaryBytes);
    } catch (const kube::ApiError& error) {
        if (!error.isForbidden()) throw;
        throw Error(fmt::format(
            "reading usage needs get on nodes/proxy (the kubelet's Summary API of node {} "
            "through the API server), which these credentials lack: {}; ask a cluster admin "
            "for it (e.g. a ClusterRole with resources nodes/proxy, verbs get)",
            node, error.what()));
    }
}

}  // namespace

std::map<std::string, PodUsage> parseSummary(
    const json& summary, const std::set<std::string>& wanted,
    const std::map<std::string, std::set<std::string>>& emptyDirs) {
    static const std::set<std::string> none;
    if (!summary.is_object())
        throw Error("the node's stats answer is not a Summary (a JSON object)");
    std::map<std::string, PodUsage> pods;
    const json* items = findMember(summary, "pods");
    if (!items || !items->is_array()) return pods;
    for (const auto& pod : *items) {
        const std::string uid = stringAt(objectAt(pod, "podRef"), "uid");
        if (!wanted.count(uid)) continue;
        const auto names = emptyDirs.find(uid);
        pods[uid] = usageOf(pod, names == emptyDirs.end() ? none : names->second);
    }
    return pods;
}

std::vector<SandboxUsage> sandboxUsage(kube::Client& client, const TopRequest& request,
                                       PoolFilter& pool, std::vector<std::string>* notFound) {
    std::vector<json> sandboxes;
    if (request.names.empty()) {
        json list = client.list(request.sandboxes, request.namespaceName);
        for (auto& sandbox : list["items"])
            if (pool.keep(sandbox)) sandboxes.push_back(std::move(sandbox));
    } else {
        for (const auto& name : request.names) {
            try {
                sandboxes.push_back(client.get(request.sandboxes, request.namespaceName, name));
            } catch (const kube::ApiError& error) {
                if (!error.isNotFound() || !notFound) throw;
                notFound->push_back(name);
            }
        }
        if (sandboxes.empty()) return {};
    }
    const auto pods = podsBySandbox(client, request.namespaceName);
    std::vector<SandboxUsage> rows;
    std::set<std::string> nodes;
    // A UID names one object: a server repeating one gets its pod in one row, not copied to each.
    std::set<std::string> seen;
    for (const auto& sandbox : sandboxes) {
        SandboxUsage row;
        const json metadata = sandbox.value("metadata", json::object());
        row.namespaceName = metadata.value("namespace", "");
        row.sandbox = metadata.value("name", "");
        const std::string uid = uidOf(sandbox);
        auto pod = uid.empty() || !seen.insert(uid).second ? pods.end() : pods.find(uid);
        if (pod != pods.end()) {
            row.pod = pod->second.value("metadata", json::object()).value("name", "");
            row.podUid = uidOf(pod->second);
            row.node = pod->second.value("spec", json::object()).value("nodeName", "");
            if (!row.node.empty()) nodes.insert(row.node);
        }
        rows.push_back(std::move(row));
    }
    // One Summary per node, matched to pods by UID (a pod of the same name elsewhere is not it).
    std::set<std::string> wanted;
    for (const auto& row : rows)
        if (!row.podUid.empty()) wanted.insert(row.podUid);
    // Where a hardened pod writes: its emptyDirs, by name in its spec.
    std::map<std::string, std::set<std::string>> emptyDirs;
    for (const auto& [owner, pod] : pods) {
        const json spec = pod.value("spec", json::object());
        for (const auto& volume : spec.value("volumes", json::array()))
            if (volume.is_object() && volume.contains("emptyDir"))
                emptyDirs[uidOf(pod)].insert(stringAt(volume, "name"));
    }
    std::map<std::string, PodUsage> usage;
    for (const auto& node : nodes)
        for (auto& [uid, podUsage] : parseSummary(nodeSummary(client, node), wanted, emptyDirs))
            usage[uid] = std::move(podUsage);
    for (auto& row : rows) {
        auto found = usage.find(row.podUid);
        if (!row.podUid.empty() && found != usage.end()) row.usage = found->second;
    }
    return rows;
}

}  // namespace rossoctl::app
