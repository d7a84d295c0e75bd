#include "rossoctl/model/pod.hpp"

namespace rossoctl::model {

using nlohmann::json;

json managedLabels(const std::string& name) {
    return {{kNameLabel, name}, {kManagedByLabel, kManagedByValue}};
}

json hardenedPodSpec(const HardenedPodOptions& options) {
    json container = {
        {"name", options.containerName},
        {"image", options.image},
        {"workingDir", options.workdir},
        {"resources",
         {{"requests", {{"cpu", options.cpu}, {"memory", options.memory}}},
          {"limits", {{"cpu", options.cpu}, {"memory", options.memory}}}}},
        {"securityContext",
         {{"allowPrivilegeEscalation", false},
          {"privileged", false},
          {"readOnlyRootFilesystem", true},
          {"runAsNonRoot", true},
          {"capabilities", {{"drop", json::array({"ALL"})}}},
          {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
        {"volumeMounts", json::array({{{"name", kWorkVolume}, {"mountPath", options.workdir}}})},
    };
    // A work dir of /tmp is the pod's /tmp: a second mount there is invalid (walk 6 MINOR 19).
    const bool ownTmp = options.workdir != "/tmp";
    if (ownTmp) container["volumeMounts"].push_back({{"name", "tmp"}, {"mountPath", "/tmp"}});
    if (!options.command.empty()) container["command"] = options.command;
    if (!options.args.empty()) container["args"] = options.args;
    json env = json::array();
    for (const auto& var : options.env) env.push_back({{"name", var.name}, {"value", var.value}});
    if (!env.empty()) container["env"] = env;
    if (options.port)
        container["ports"] = json::array({{{"containerPort", *options.port}, {"protocol", "TCP"}}});

    json volumes = json::array();
    if (ownTmp) volumes.push_back({{"name", "tmp"}, {"emptyDir", json::object()}});
    if (!options.workVolumeFromClaim)
        volumes.insert(volumes.begin(), json{{"name", kWorkVolume}, {"emptyDir", json::object()}});

    json spec = {
        {"automountServiceAccountToken", false},
        {"enableServiceLinks", false},
        {"securityContext",
         {{"runAsNonRoot", true},
          {"runAsUser", kSandboxUid},
          {"runAsGroup", kSandboxUid},
          {"fsGroup", kSandboxUid},
          {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
        {"containers", json::array({container})},
        {"volumes", volumes},
    };
    if (!options.runtimeClass.empty()) spec["runtimeClassName"] = options.runtimeClass;
    if (!options.imagePullSecret.empty())
        spec["imagePullSecrets"] = json::array({{{"name", options.imagePullSecret}}});
    if (options.activeDeadlineSeconds)
        spec["activeDeadlineSeconds"] = *options.activeDeadlineSeconds;
    if (!options.restartPolicy.empty()) spec["restartPolicy"] = options.restartPolicy;
    return spec;
}

}  // namespace rossoctl::model
