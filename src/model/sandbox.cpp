#include "rossoctl/model/sandbox.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "rossoctl/kube/timestamp.hpp"

namespace rossoctl::model {

using nlohmann::json;

json buildSandbox(const SandboxOptions& options, std::chrono::system_clock::time_point now) {
    HardenedPodOptions pod = options.pod;
    pod.workVolumeFromClaim = !options.storage.empty();
    auto lifetime = std::chrono::duration_cast<std::chrono::seconds>(options.shutdownTime - now);
    if (!pod.activeDeadlineSeconds && lifetime.count() > 0)
        pod.activeDeadlineSeconds = lifetime.count();
    json podSpec = hardenedPodSpec(pod);
    // Nothing of the agent's starts before the project's policies are enforced (attack 56 E7).
    if (!options.gateImage.empty()) addEgressGate(podSpec, options.gateImage);
    json spec = {
        {"podTemplate",
         {{"metadata", {{"labels", managedLabels(options.name)}}}, {"spec", podSpec}}},
        {"shutdownTime", kube::formatTimestamp(options.shutdownTime)},
        {"shutdownPolicy", "Retain"},
    };
    // v1beta1 says it with operatingMode; v1alpha1 with replicas.
    if (options.version == "v1alpha1")
        spec["replicas"] = 1;
    else
        spec["operatingMode"] = "Running";
    if (options.service) spec["service"] = true;
    if (!options.storage.empty()) {
        spec["volumeClaimTemplates"] =
            json::array({{{"metadata", {{"name", kWorkVolume}}},
                          {"spec",
                           {{"accessModes", json::array({"ReadWriteOnce"})},
                            {"resources", {{"requests", {{"storage", options.storage}}}}}}}}});
    }
    return {{"apiVersion", "agents.x-k8s.io/" + options.version},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", options.name},
              {"namespace", options.namespaceName},
              {"labels", managedLabels(options.name)}}},
            {"spec", spec}};
}

json buildAgentRuntime(const std::string& name, const std::string& namespaceName,
                       const TargetRef& target) {
    return {
        {"apiVersion", "agent.rossoctl.dev/v1alpha1"},
        {"kind", "AgentRuntime"},
        {"metadata",
         {{"name", name}, {"namespace", namespaceName}, {"labels", managedLabels(name)}}},
        {"spec",
         {{"type", "agent"},
          {"targetRef",
           {{"apiVersion", target.apiVersion}, {"kind", target.kind}, {"name", target.name}}}}}};
}

bool sandboxReady(const json& sandbox, std::string* reason, std::string* message) {
    const json conditions =
        sandbox.contains("status")
            ? sandbox.value("status", json::object()).value("conditions", json::array())
            : json::array();
    for (const auto& condition : conditions) {
        if (condition.value("type", "") != "Ready") continue;
        if (reason) *reason = condition.value("reason", "");
        if (message) *message = condition.value("message", "");
        return condition.value("status", "") == "True";
    }
    if (reason) *reason = "";
    if (message) *message = "";
    return false;
}

std::string sandboxPodName(const json& sandbox) {
    // The server's object: a missing or odd metadata is no name, never a read past the end.
    if (!sandbox.is_object()) return "";
    const json metadata = sandbox.value("metadata", json::object());
    if (!metadata.is_object()) return "";
    const json annotations = metadata.value("annotations", json::object());
    const auto podName =
        annotations.is_object() ? annotations.find("agents.x-k8s.io/pod-name") : annotations.end();
    if (podName != annotations.end() && podName->is_string()) return podName->get<std::string>();
    return metadata.value("name", "");
}

std::vector<std::string> podOnlyMounts(const json& sandbox) {
    std::vector<std::string> paths;
    if (!sandbox.is_object()) return paths;
    const json spec = sandbox.value("spec", json::object());
    const json podSpec = spec.value("podTemplate", json::object()).value("spec", json::object());
    if (!podSpec.is_object()) return paths;
    std::set<std::string> emptyDirs;
    for (const auto& volume : podSpec.value("volumes", json::array()))
        if (volume.is_object() && volume.contains("emptyDir"))
            emptyDirs.insert(volume.value("name", ""));
    for (const auto& container : podSpec.value("containers", json::array())) {
        if (!container.is_object()) continue;
        for (const auto& mount : container.value("volumeMounts", json::array())) {
            if (!mount.is_object() || emptyDirs.count(mount.value("name", "")) == 0) continue;
            const std::string path = mount.value("mountPath", "");
            if (path.empty() || path == "/tmp" ||
                std::find(paths.begin(), paths.end(), path) != paths.end())
                continue;
            paths.push_back(path);
        }
    }
    return paths;
}

std::string podOnlyFilesNote(const json& sandbox, const std::string& pod) {
    const auto paths = podOnlyMounts(sandbox);
    if (paths.empty()) return "";
    std::string joined;
    for (const auto& path : paths) joined += (joined.empty() ? "" : ", ") + path;
    return fmt::format(
        "what pod {} wrote to {} is gone with it ({}; a sandbox imported with --storage keeps "
        "its work volume)",
        pod, joined, paths.size() == 1 ? "an emptyDir" : "emptyDirs");
}

}  // namespace rossoctl::model
