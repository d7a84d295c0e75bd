// SandboxTemplate + SandboxWarmPool per run shape, and the SandboxClaim a run takes one with.
#include "rossoctl/app/run/warm_pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "rossoctl/app/agent_failure.hpp"
#include "rossoctl/app/run/artifacts.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/egress_gate.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/model/pod_failure.hpp"

namespace rossoctl::app::run {

using nlohmann::json;

namespace {

constexpr const char* kWarmRunName = "sandbox-run-warm";
// A warm sandbox waits until it is claimed; the claim's shutdownTime bounds its use.
constexpr long kWarmSleepSeconds = 2147483647;

kube::ResourceRef extensionsRef(const char* plural, const char* kind) {
    return {kExtensionsGroup, kExtensionsVersion, plural, kind, true};
}

json typed(const kube::ResourceRef& ref, const std::string& name) {
    json object = json::object();
    object["apiVersion"] = ref.apiVersion();
    object["kind"] = ref.kind;
    object["metadata"]["name"] = name;
    object["metadata"]["labels"] = model::managedLabels(kWarmRunName);
    return object;
}

// The pod of every Sandbox of the pool: hardened as the bare pool pods, with their deadline
// (an unclaimed warm Sandbox has no shutdownTime; the warm pool replaces what dies, and the
// claim's shutdownTime bounds a run).
json warmPodTemplate(const RunPodShape& shape, long lifetimeSeconds, const std::string& gateImage) {
    model::HardenedPodOptions options;
    options.containerName = kContainerName;
    options.image = shape.image;
    options.command = {"sleep", std::to_string(kWarmSleepSeconds)};
    options.cpu = shape.cpu;
    options.memory = shape.memory;
    options.workdir = shape.workdir;
    options.runtimeClass = shape.runtimeClass;
    options.activeDeadlineSeconds = lifetimeSeconds;
    json spec = model::hardenedPodSpec(options);
    spec["terminationGracePeriodSeconds"] = 1;  // thrown away after one run
    // A claimed spare is someone's sandbox: verify judges its start window as any other's.
    if (!gateImage.empty()) model::addEgressGate(spec, gateImage);
    json podTemplate = json::object();
    podTemplate["metadata"]["labels"] = model::managedLabels(kWarmRunName);
    podTemplate["metadata"]["annotations"] = {{kPoolShapeAnnotation, shapeKey(shape)}};
    podTemplate["spec"] = spec;
    return podTemplate;
}

}  // namespace

std::optional<json> initialListOf(const json& created) {
    // Without a resourceVersion a watch would start from now and could miss the first change.
    if (!created.is_object()) return std::nullopt;
    const std::string version =
        created.value("metadata", json::object()).value("resourceVersion", "");
    if (version.empty()) return std::nullopt;
    json list = json::object();
    list["metadata"]["resourceVersion"] = version;
    list["items"] = json::array({created});
    return list;
}

kube::ResourceRef sandboxTemplates() {
    return extensionsRef("sandboxtemplates", "SandboxTemplate");
}
kube::ResourceRef sandboxWarmPools() {
    return extensionsRef("sandboxwarmpools", "SandboxWarmPool");
}
kube::ResourceRef sandboxClaims() {
    return extensionsRef("sandboxclaims", "SandboxClaim");
}

std::string warmPoolName(const RunPodShape& shape) {
    return "rossoctl-run-" + sha256Hex(shapeKey(shape)).substr(0, 12);
}

json sandboxTemplateManifest(const RunPodShape& shape, long lifetimeSeconds,
                             const std::string& name, const std::string& gateImage) {
    json object = typed(sandboxTemplates(), name.empty() ? warmPoolName(shape) : name);
    object["metadata"]["annotations"] = {{kPoolShapeAnnotation, shapeKey(shape)}};
    object["spec"]["podTemplate"] = warmPodTemplate(shape, lifetimeSeconds, gateImage);
    // As the bare pool pods: no NetworkPolicy of the controller's (its default blocks the
    // private ranges, which would make a pooled run see another network than a fresh one).
    object["spec"]["networkPolicyManagement"] = "Unmanaged";
    return object;
}

json sandboxWarmPoolManifest(const RunPodShape& shape, int size, const std::string& name) {
    const std::string poolName = name.empty() ? warmPoolName(shape) : name;
    json object = typed(sandboxWarmPools(), poolName);
    object["metadata"]["annotations"] = {{kPoolShapeAnnotation, shapeKey(shape)}};
    object["spec"]["replicas"] = size;
    object["spec"]["sandboxTemplateRef"]["name"] = poolName;
    return object;
}

json sandboxClaimManifest(const RunPodShape& shape,
                          std::chrono::system_clock::time_point shutdownTime) {
    return sandboxClaimManifest(warmPoolName(shape), shutdownTime);
}

json sandboxClaimManifest(const std::string& pool,
                          std::chrono::system_clock::time_point shutdownTime) {
    json object = typed(sandboxClaims(), "");
    object["metadata"].erase("name");
    object["metadata"]["generateName"] = "rossoctl-run-";
    object["metadata"]["labels"][kRunLabel] = "true";
    object["spec"]["warmPoolRef"]["name"] = pool;
    // Upstream's default policy is Retain: an expired claim would stay behind.
    object["spec"]["lifecycle"] = {{"shutdownTime", kube::formatTimestamp(shutdownTime)},
                                   {"shutdownPolicy", "Delete"}};
    return object;
}

namespace {

// A count the server wrote: what is not a whole number counts as 0, and a huge one as the
// most an int holds (never a narrowing that wraps, or a float's undefined conversion).
int countAt(const json& object, const char* key) {
    const auto found = object.is_object() ? object.find(key) : object.end();
    if (!object.is_object() || found == object.end()) return 0;
    if (found->is_number_unsigned())
        return static_cast<int>(std::min<uint64_t>(found->get<uint64_t>(), INT_MAX));
    if (found->is_number_integer())
        return static_cast<int>(std::clamp<int64_t>(found->get<int64_t>(), 0, INT_MAX));
    return 0;
}

}  // namespace

WarmPoolStatus warmPoolStatus(const json& pool) {
    const auto status = pool.is_object() ? pool.find("status") : pool.end();
    if (!pool.is_object() || status == pool.end()) return {};
    return {countAt(*status, "replicas"), countAt(*status, "readyReplicas")};
}

std::optional<json> findWarmPool(kube::Client& client, bool extensionsServed, const std::string& ns,
                                 const RunPodShape& shape) {
    if (!extensionsServed) return std::nullopt;
    return client.getIfExists(sandboxWarmPools(), ns, warmPoolName(shape));
}

bool writtenBySandboxPool(const json& object) {
    const auto metadata = object.find("metadata");
    if (!object.is_object() || metadata == object.end() || !metadata->is_object()) return false;
    const auto labels = metadata->find("labels");
    if (labels == metadata->end() || !labels->is_object()) return false;
    const json expected = model::managedLabels(kWarmRunName);  // items() only refers to it
    for (const auto& [key, value] : expected.items()) {
        const auto label = labels->find(key);
        if (label == labels->end() || *label != value) return false;
    }
    return true;
}

bool warmPoolWrittenByRossoctl(const json& pool, const RunPodShape& shape) {
    if (!writtenBySandboxPool(pool)) return false;
    // Any member may be of another type: what is not an object has no members, and only
    // strings compare equal below.
    static const json none;
    const auto member = [](const json& object, const char* key) -> const json& {
        const auto found = object.is_object() ? object.find(key) : object.end();
        return object.is_object() && found != object.end() ? *found : none;
    };
    const json& metadata = member(pool, "metadata");
    const json& name = member(metadata, "name");
    return name.is_string() && !name.get<std::string>().empty() &&
           member(member(member(pool, "spec"), "sandboxTemplateRef"), "name") == name &&
           member(member(metadata, "annotations"), kPoolShapeAnnotation) == json(shapeKey(shape));
}

json createClaim(kube::Client& client, const Clock& clock, const std::string& ns,
                 const std::string& pool, long timeoutSeconds, bool keep) {
    const auto shutdown =
        clock.now() + std::chrono::seconds(timeoutSeconds + kDeadlineMarginSeconds);
    json claim = sandboxClaimManifest(pool, shutdown);
    // So `gc` can tell a claim whose process was killed from one still in use; a kept one has
    // no process to outlive (walk 6 M1: gc deleted it 2 s after the run, /workspace with it).
    if (keep)
        claim["metadata"]["annotations"][kKeptAnnotation] = "true";
    else
        claim["metadata"]["annotations"][kRunOwnerAnnotation] = currentRunOwner(client.random());
    return client.create(sandboxClaims(), ns, claim);
}

std::optional<std::string> waitClaimedSandbox(kube::Client& client, const Clock& clock,
                                              const kube::CancelFlag* cancel, const std::string& ns,
                                              const json& created,
                                              std::chrono::milliseconds startTimeout) {
    const std::string claim = created.value("metadata", json::object()).value("name", "");
    // A warm sandbox's pod may have been refused long before this claim took it.
    const auto eventsSince = clock.now() - std::chrono::minutes(5);
    std::string sandbox, reason = "not reconciled yet";
    std::optional<std::string> refused;  // the claim's Ready is its Sandbox's, forwarded
    auto waited = waitForObjectUnlessBlocked(
        client, clock, sandboxClaims(), ns, claim, startTimeout, cancel,
        [&](const std::optional<json>& object) {
            if (!object) return false;
            sandbox = object->value("status", json::object())
                          .value("sandbox", json::object())
                          .value("name", "");
            if (auto ready = kube::findCondition(*object, "Ready"))
                reason = ready->value("reason", "") + ": " + ready->value("message", "");
            refused = model::workloadCreateFailure(*object);
            if (refused) refused = "its pod cannot be created: " + *refused;
            return refused || (!sandbox.empty() && kube::conditionTrue(*object, "Ready"));
        },
        [&]() -> std::optional<std::string> {
            if (sandbox.empty()) return std::nullopt;
            // The extensions and the core group they pair with share a version.
            const auto object =
                client.getIfExists(kube::resources::sandboxes(kExtensionsVersion), ns, sandbox);
            if (!object) return std::nullopt;
            return agentStartFailure(client, ns, model::WorkloadType::Sandbox, *object,
                                     eventsSince);
        },
        initialListOf(created));
    if (waited.wait.outcome == kube::WaitOutcome::Cancelled) return std::nullopt;
    if (!refused) refused = waited.blocker;
    if (refused)
        throw Error(fmt::format(
            "SandboxClaim {}: sandbox {} will not become ready: {}; see kubectl -n {} describe "
            "sandboxclaim {}",
            claim, sandbox.empty() ? "(none yet)" : sandbox, *refused, ns, claim));
    if (!waited.wait.satisfied())
        throw Error(fmt::format(
            "SandboxClaim {} got no Ready sandbox within {}s ({}); see kubectl -n {} describe "
            "sandboxclaim {}",
            claim, (startTimeout.count() + 999) / 1000, reason, ns, claim));
    return sandbox;
}

std::optional<std::string> warmPoolFillFailure(kube::Client& client, const std::string& ns,
                                               const json& pool,
                                               std::chrono::system_clock::time_point since) {
    const std::string poolUid = uidOf(pool);
    const auto sandboxes = kube::resources::sandboxes(kExtensionsVersion);
    const json list = client.list(sandboxes, ns, {});
    // One sandbox of the pool that is not ready stands for all: they share one template.
    for (const auto& sandbox : list.value("items", json::array())) {
        if (!ownedBy(sandbox, poolUid) || kube::conditionTrue(sandbox, "Ready")) continue;
        if (auto failure =
                agentStartFailure(client, ns, model::WorkloadType::Sandbox, sandbox, since))
            return fmt::format("sandbox {}: {}", sandbox["metadata"].value("name", ""), *failure);
        return std::nullopt;
    }
    return std::nullopt;
}

std::string warmPoolNotReadyReason(kube::Client& client, const std::string& ns, const json& pool) {
    const std::string poolUid = uidOf(pool);
    const json list = client.list(kube::resources::sandboxes(kExtensionsVersion), ns, {});
    for (const auto& sandbox : list.value("items", json::array())) {
        if (!ownedBy(sandbox, poolUid) || kube::conditionTrue(sandbox, "Ready")) continue;
        return fmt::format("sandbox {}: {}", sandbox["metadata"].value("name", ""),
                           describeConditions(sandbox));
    }
    return "";
}

void releaseClaim(kube::Client& client, const std::string& ns, const std::string& claim) {
    kube::DeleteOptions options;
    options.propagationPolicy = "Background";
    try {
        client.remove(sandboxClaims(), ns, claim, options);
    } catch (const kube::ApiError& error) {
        if (!error.isNotFound()) throw;
    }
}

}  // namespace rossoctl::app::run
