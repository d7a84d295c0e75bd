#pragma once
// The egress gate: the first init container of every pod rossoctl writes for a Sandbox. A
// network engine may program a new pod's NetworkPolicy chain some milliseconds after the pod's
// containers start (kube-router does); a container that sends in that window leaves no socket
// for verify to read (attack 56 E7). The gate tries a TCP connect to the API server, which a
// project's default-deny denies, until one fails, and only then lets the pod's other containers
// start; its termination message says what it saw, and `sandbox verify` reads it.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rossoctl::model {

inline constexpr const char* kEgressGateName = "rossoctl-egress-gate";
// The image the gate runs (project create's --check-image), recorded on the namespace.
inline constexpr const char* kGateImageAnnotation = "rossoctl.dev/gate-image";
inline constexpr const char* kDefaultGateImage = "busybox:1.36";
// What the gate writes to its termination message once a connect failed.
inline constexpr const char* kGateHeldPrefix = "rossoctl-egress-gate: policies held after ";

// The gate's command: sh -c SCRIPT. Verify compares a pod's gate with it.
std::vector<std::string> egressGateCommand();
// The init container, hardened as the agent (uid 65532, no capabilities, read-only root).
nlohmann::json egressGateContainer(const std::string& image);
// Puts the gate first among podSpec's initContainers (replacing a gate already there).
void addEgressGate(nlohmann::json& podSpec, const std::string& image);
// The namespace's rossoctl.dev/gate-image, else kDefaultGateImage (also for no namespace).
std::string gateImageOf(const std::optional<nlohmann::json>& namespaceObject);
// The namespace's rossoctl.dev/gate-image, else "": `project create` records it beside the
// default-deny that denies the API server, the one place the gate is held rather than waiting.
std::string recordedGateImage(const nlohmann::json& namespaceObject);

// Why podSpec's first init container is not the gate exactly as egressGateContainer(image)
// writes it ("" when it is): a gate with another image, command, args, env, mounts or
// termination path does not speak for the pod, nor one in a pod with service links on.
std::string egressGateMismatch(const nlohmann::json& podSpec, const std::string& image);

}  // namespace rossoctl::model
