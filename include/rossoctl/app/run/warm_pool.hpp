#pragma once
// `sandbox run --pool` on clusters that serve the agent-sandbox extensions: a SandboxTemplate
// and SandboxWarmPool per run shape keep hardened Sandboxes warm, and a run takes one with a
// SandboxClaim. The claim carries no env or volumes (upstream cold-starts such claims): per-run
// settings arrive over exec after the claim. Claims expire on their own (shutdownTime with
// shutdownPolicy Delete) in case rossoctl dies before it deletes them.
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/clock.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::app::run {

inline constexpr const char* kExtensionsGroup = "extensions.agents.x-k8s.io";
inline constexpr const char* kExtensionsVersion = "v1beta1";

kube::ResourceRef sandboxTemplates();
kube::ResourceRef sandboxWarmPools();
kube::ResourceRef sandboxClaims();

// The SandboxTemplate and SandboxWarmPool of one shape share this name: the pool's name when
// `sandbox pool` is given none.
std::string warmPoolName(const RunPodShape& shape);

// lifetimeSeconds: the pod's activeDeadlineSeconds (a warm pod that outlives it fails, and the
// pool replaces it), so nothing rossoctl creates runs without a deadline. `name`: the template's
// and pool's name; empty for the shape's own (warmPoolName).
// gateImage: the egress gate the pool's pods start with (app/project_gate.hpp); "": none.
nlohmann::json sandboxTemplateManifest(const RunPodShape& shape, long lifetimeSeconds,
                                       const std::string& name = {},
                                       const std::string& gateImage = {});
nlohmann::json sandboxWarmPoolManifest(const RunPodShape& shape, int size,
                                       const std::string& name = {});
// A claim on the pool `pool` that the claim controller deletes at `shutdownTime` at the latest.
nlohmann::json sandboxClaimManifest(const std::string& pool,
                                    std::chrono::system_clock::time_point shutdownTime);
// The same on the shape's own pool (warmPoolName).
nlohmann::json sandboxClaimManifest(const RunPodShape& shape,
                                    std::chrono::system_clock::time_point shutdownTime);

struct WarmPoolStatus {
    int replicas = 0;
    int ready = 0;
};
WarmPoolStatus warmPoolStatus(const nlohmann::json& pool);

// The shape's SandboxWarmPool in ns, when the cluster serves the extensions and it exists.
std::optional<nlohmann::json> findWarmPool(kube::Client& client, bool extensionsServed,
                                           const std::string& ns, const RunPodShape& shape);
// True when the template or pool carries the labels `sandbox pool` writes on them. Whoever may
// write the object may write these too: this tells rossoctl's own from one made by hand or by
// another tool, it is no defence against a hostile writer.
bool writtenBySandboxPool(const nlohmann::json& object);
// True when `pool` is one `sandbox pool` writes for `shape` (its labels, its shape annotation,
// the SandboxTemplate of its own name), whose pods have the work dir as an emptyDir.
bool warmPoolWrittenByRossoctl(const nlohmann::json& pool, const RunPodShape& shape);

// Creates a claim on the pool named `pool`; returns the claim as created. A kept one (--keep)
// carries kKeptAnnotation instead of its process: `gc` leaves it until its shutdownTime.
nlohmann::json createClaim(kube::Client& client, const Clock& clock, const std::string& ns,
                           const std::string& pool, long timeoutSeconds, bool keep = false);
// Waits until the claim (`created`, as its POST returned it: the watch starts from its
// resourceVersion, no LIST) names a Ready sandbox and returns that sandbox's (and pod's) name;
// nullopt when cancelled. Throws when it does not happen within `startTimeout`.
std::optional<std::string> waitClaimedSandbox(kube::Client& client, const Clock& clock,
                                              const kube::CancelFlag* cancel, const std::string& ns,
                                              const nlohmann::json& created,
                                              std::chrono::milliseconds startTimeout);

// Why the pool's sandboxes will not become ready (a pod refused by quota or LimitRange, an
// image that cannot be pulled), read from its first sandbox that is not; nullopt when none says.
std::optional<std::string> warmPoolFillFailure(kube::Client& client, const std::string& ns,
                                               const nlohmann::json& pool,
                                               std::chrono::system_clock::time_point since);

// What the pool's first sandbox that is not ready says of itself ("sandbox NAME: Ready=False
// (...)"), for a wait that ran out of time; empty when every sandbox is ready or none exists.
std::string warmPoolNotReadyReason(kube::Client& client, const std::string& ns,
                                   const nlohmann::json& pool);

// An object as its POST returned it, as the one-item List a wait starts from (so the wait
// watches from its resourceVersion instead of listing); nullopt without a resourceVersion.
std::optional<nlohmann::json> initialListOf(const nlohmann::json& created);

// Deletes the claim; its Sandbox and pod follow by owner reference.
void releaseClaim(kube::Client& client, const std::string& ns, const std::string& claim);

}  // namespace rossoctl::app::run
