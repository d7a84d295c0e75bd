#include "rossoctl/model/egress_gate.hpp"

#include <fmt/format.h>

#include "rossoctl/model/pod.hpp"

namespace rossoctl::model {

using nlohmann::json;

namespace {

// Every pod has the API server's address in its environment; a project's default-deny denies
// it. A connect that succeeds means the pod's policies are not enforced yet: try again in 30 ms.
// One refused (kube-router answers after about a second) or timed out means they are. Any other
// failure (no nc, a port range a sysctl emptied) proves nothing. Never more than 10 s: a project
// that allows the API server is not held here, it is "not confirmed".
constexpr const char* kGateScript = R"SH(h=$KUBERNETES_SERVICE_HOST p=$KUBERNETES_SERVICE_PORT n=0
if [ -z "$h" ] || [ -z "$p" ]; then why="no API server address in its environment"
elif ! command -v nc >/dev/null 2>&1; then why="no nc in its image"
else
why="the API server stayed reachable for 10 s"
end=$(($(date +%s) + 10))
while [ "$(date +%s)" -lt "$end" ]; do
n=$((n + 1))
if out=$(nc -w 2 "$h" "$p" </dev/null 2>&1); then sleep 0.03; continue; fi
case $out in
*refused*|*"timed out"*)
m="rossoctl-egress-gate: policies held after $n tries"
echo "$m"; echo "$m" >/dev/termination-log; exit 0;;
esac
why="a connect failed otherwise: $out"
sleep 0.03
done
fi
m="rossoctl-egress-gate: not confirmed ($why)"
echo "$m"; echo "$m" >/dev/termination-log; exit 0)SH";

const json& gateField(const json& object, const char* name) {
    static const json kNone;
    if (!object.is_object()) return kNone;
    const auto it = object.find(name);
    return it == object.end() ? kNone : *it;
}

// Absent, null or empty: what the gate as written has for fields it leaves out.
bool gateFieldEmpty(const json& value) {
    return value.is_null() ||
           ((value.is_array() || value.is_object() || value.is_string()) && value.empty());
}

}  // namespace

std::vector<std::string> egressGateCommand() {
    return {"/bin/sh", "-c", kGateScript};
}

json egressGateContainer(const std::string& image) {
    return {{"name", kEgressGateName},
            {"image", image},
            {"command", egressGateCommand()},
            {"resources",
             {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}},
              {"limits", {{"cpu", "100m"}, {"memory", "32Mi"}}}}},
            {"securityContext",
             {{"allowPrivilegeEscalation", false},
              {"privileged", false},
              {"readOnlyRootFilesystem", true},
              {"runAsNonRoot", true},
              {"runAsUser", kSandboxUid},
              {"runAsGroup", kSandboxUid},
              {"capabilities", {{"drop", json::array({"ALL"})}}},
              {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
            {"terminationMessagePath", "/dev/termination-log"},
            {"terminationMessagePolicy", "File"}};
}

void addEgressGate(json& podSpec, const std::string& image) {
    json inits = json::array({egressGateContainer(image)});
    if (podSpec.contains("initContainers") && podSpec["initContainers"].is_array())
        for (const auto& container : podSpec["initContainers"])
            if (gateField(container, "name") != kEgressGateName) inits.push_back(container);
    podSpec["initContainers"] = std::move(inits);
}

std::string recordedGateImage(const json& namespaceObject) {
    const json& image = gateField(gateField(gateField(namespaceObject, "metadata"), "annotations"),
                                  kGateImageAnnotation);
    return image.is_string() ? image.get<std::string>() : "";
}

std::string gateImageOf(const std::optional<json>& namespaceObject) {
    const std::string image = namespaceObject ? recordedGateImage(*namespaceObject) : "";
    return image.empty() ? kDefaultGateImage : image;
}

std::string egressGateMismatch(const json& podSpec, const std::string& image) {
    // The gate connects to $KUBERNETES_SERVICE_HOST; with service links on, a Service named
    // kubernetes in the pod's namespace sets it, and a tenant's refuses at once (attack 58 G1).
    if (gateField(podSpec, "enableServiceLinks") != false)
        return "the pod's service links are on: a Service named kubernetes in its namespace "
               "would choose what the gate connects to";
    const json& inits = gateField(podSpec, "initContainers");
    if (!inits.is_array() || inits.empty()) return "it has no init container";
    const json& first = inits.front();
    const json& name = gateField(first, "name");
    if (name != kEgressGateName)
        return fmt::format("its first init container is {}, not {}",
                           name.is_string() ? name.get<std::string>() : "unnamed", kEgressGateName);
    if (gateField(first, "image") != image)
        return fmt::format("its image is {}, not the project's gate image {}",
                           gateField(first, "image").dump(), image);
    if (gateField(first, "command") != json(egressGateCommand()))
        return "its command is not the gate's";
    // What else changes what the script runs, sees or reports.
    for (const char* field :
         {"args", "env", "envFrom", "volumeDevices", "workingDir", "restartPolicy"})
        if (!gateFieldEmpty(gateField(first, field))) return fmt::format("it sets {}", field);
    // ServiceAccount admission mounts the token into every container of a pod that automounts
    // it, the gate's too; that path changes nothing the script runs. Any other mount might.
    const json& mounts = gateField(first, "volumeMounts");
    if (!gateFieldEmpty(mounts)) {
        if (!mounts.is_array()) return "it sets volumeMounts";
        for (const auto& mount : mounts)
            if (gateField(mount, "mountPath") != "/var/run/secrets/kubernetes.io/serviceaccount")
                return "it sets volumeMounts";
    }
    const json& path = gateField(first, "terminationMessagePath");
    if (!path.is_null() && path != "/dev/termination-log")
        return "its terminationMessagePath is not /dev/termination-log";
    return "";
}

}  // namespace rossoctl::model
