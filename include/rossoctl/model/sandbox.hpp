#pragma once
// The agents.x-k8s.io Sandbox and the AgentRuntime that points at a workload.
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/model/egress_gate.hpp"
#include "rossoctl/model/pod.hpp"

namespace rossoctl::model {

struct SandboxOptions {
    std::string name;
    std::string namespaceName;
    std::string version = "v1beta1";  // the served agents.x-k8s.io version
    HardenedPodOptions pod;
    std::string storage;  // a quantity: adds a volumeClaimTemplate for the work volume
    bool service = false;
    // The egress gate's image (model/egress_gate.hpp); empty: no gate. Only a project's
    // default-deny denies the API server the gate waits for; elsewhere it would wait its bound.
    std::string gateImage;
    std::chrono::system_clock::time_point shutdownTime;
};

nlohmann::json buildSandbox(const SandboxOptions& options,
                            std::chrono::system_clock::time_point now);

struct TargetRef {
    std::string apiVersion;
    std::string kind;
    std::string name;
};

nlohmann::json buildAgentRuntime(const std::string& name, const std::string& namespaceName,
                                 const TargetRef& target);

// Sandbox helpers that read the object, whichever version it is.
bool sandboxReady(const nlohmann::json& sandbox, std::string* reason = nullptr,
                  std::string* message = nullptr);
std::string sandboxPodName(const nlohmann::json& sandbox);

// Where the sandbox's pod keeps files that go with the pod: the mount paths of its emptyDir
// volumes, /tmp left out ("/workspace" unless it was imported with --storage). What deleting
// the pod (restart, suspend, set-env --restart) loses.
std::vector<std::string> podOnlyMounts(const nlohmann::json& sandbox);
// "what pod orders wrote to /workspace is gone with it (an emptyDir; a sandbox imported with
// --storage keeps /workspace)", or "" when nothing is lost.
std::string podOnlyFilesNote(const nlohmann::json& sandbox, const std::string& pod);

}  // namespace rossoctl::model
