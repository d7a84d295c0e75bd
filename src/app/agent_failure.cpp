#include "rossoctl/app/agent_failure.hpp"

#include <fmt/format.h>

#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/model/pod_failure.hpp"

namespace rossoctl::app {

using nlohmann::json;

namespace {

// spec.selector.matchLabels as a label selector; empty when there is none to select by.
std::string matchLabelsSelector(const json& workload) {
    std::string selector;
    const json labels = workload.value("spec", json::object())
                            .value("selector", json::object())
                            .value("matchLabels", json::object());
    for (const auto& [key, value] : labels.items()) {
        if (!selector.empty()) selector += ",";
        selector += key + "=" + value.get<std::string>();
    }
    return selector;
}

std::vector<json> workloadPods(kube::Client& client, const std::string& ns,
                               model::WorkloadType type, const json& workload) {
    if (type == model::WorkloadType::Sandbox) return findSandboxPods(client, workload).owned;
    kube::ListOptions options;
    options.labelSelector = matchLabelsSelector(workload);
    if (options.labelSelector.empty()) return {};
    const json list = client.list(kube::resources::pods(), ns, options);
    const json items = list.value("items", json::array());
    return {items.begin(), items.end()};
}

}  // namespace

std::optional<std::string> agentStartFailure(kube::Client& client, const std::string& ns,
                                             model::WorkloadType type, const json& workload) {
    for (const auto& pod : workloadPods(client, ns, type, workload)) {
        if (terminating(pod)) continue;
        if (auto failure = model::podStartFailure(pod))
            return fmt::format("pod {}: {}", pod["metadata"].value("name", ""), *failure);
    }
    return std::nullopt;
}

}  // namespace rossoctl::app
