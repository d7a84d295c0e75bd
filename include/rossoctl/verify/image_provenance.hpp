#pragma once
// The image-provenance boundary (kubescape C-0304/C-0312/C-0313): every image of the pod by
// digest, from a registry the project allows; live, the digest the node really ran
// (status.*ContainerStatuses[].imageID, the kubelet's word, not the agent's).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

struct ImageReference {
    std::string registry;    // "docker.io" when the reference names none
    std::string repository;  // "library/busybox"
    std::string tag;         // "" when pinned by digest only ("latest" when neither is given)
    std::string digest;      // "sha256:..." or ""
};
ImageReference parseImageReference(const std::string& image);

// The project's allowed registries (project create --allow-registry), from the namespace's
// annotation; nullopt when the project set none (then the check is reported, not judged).
std::optional<std::vector<std::string>> allowedRegistries(const nlohmann::json& namespaceObject);

// "docker.io" allows every image of that registry; "ghcr.io/team" only that path and below.
bool registryAllowed(const ImageReference& image, const std::vector<std::string>& allowed);

// probeImage: this run's --trusted-probe image; an earlier run's probe of that image that has
// ended is left out (attack 67 F1), one of another image is judged (review 68 M2).
Finding imageProvenanceStatic(const nlohmann::json& pod,
                              const std::optional<std::vector<std::string>>& allowed,
                              const std::string& probeImage = "");
Finding imageProvenanceLive(const nlohmann::json& pod,
                            const std::optional<std::vector<std::string>>& allowed,
                            const std::string& probeImage = "");

}  // namespace rossoctl::verify
