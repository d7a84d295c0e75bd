#pragma once
// The hardened pod every rossoctl workload runs: no service-account token, restricted
// security context, cpu/memory limits, an emptyDir working volume.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/model/validation.hpp"

namespace rossoctl::model {

inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "rossoctl";
inline constexpr const char* kNameLabel = "app.kubernetes.io/name";
inline constexpr const char* kWorkVolume = "workspace";
inline constexpr int kSandboxUid = 65532;  // a non-root uid, as distroless images use

struct HardenedPodOptions {
    std::string containerName = "agent";
    std::string image;
    std::vector<std::string> command;
    std::vector<std::string> args;
    std::vector<EnvVar> env;
    std::optional<int> port;
    std::string cpu = "500m";
    std::string memory = "512Mi";
    std::string runtimeClass;
    std::string imagePullSecret;
    std::string workdir = "/workspace";
    std::optional<long> activeDeadlineSeconds;
    std::string restartPolicy;         // empty: the workload's default
    bool workVolumeFromClaim = false;  // the volume comes from a claim template instead
};

// {app.kubernetes.io/name: NAME, app.kubernetes.io/managed-by: rossoctl}
nlohmann::json managedLabels(const std::string& name);
nlohmann::json hardenedPodSpec(const HardenedPodOptions& options);

}  // namespace rossoctl::model
