// The static halves of the four checks: pure functions of the pod, its ServiceAccount, the
// namespace's NetworkPolicies and ResourceQuotas, and the Sandbox.
#include <fmt/format.h>

#include <algorithm>

#include "rossoctl/model/egress.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;

std::string verdictName(Verdict verdict) {
    switch (verdict) {
        case Verdict::Pass:
            return "pass";
        case Verdict::Fail:
            return "fail";
        case Verdict::Unproven:
            return "unproven";
    }
    return "unproven";
}

Verdict combine(Verdict staticVerdict, Verdict liveVerdict) {
    if (staticVerdict == Verdict::Fail || liveVerdict == Verdict::Fail) return Verdict::Fail;
    if (staticVerdict == Verdict::Pass && liveVerdict == Verdict::Pass) return Verdict::Pass;
    return Verdict::Unproven;
}

std::string checkId(CheckKind kind) {
    switch (kind) {
        case CheckKind::ServiceAccountToken:
            return "service-account-token";
        case CheckKind::Egress:
            return "egress";
        case CheckKind::Limits:
            return "limits";
        case CheckKind::NothingSurvives:
            return "nothing-survives";
        case CheckKind::HostIsolation:
            return "host-isolation";
        case CheckKind::KernelIsolation:
            return "kernel-isolation";
        case CheckKind::ImageProvenance:
            return "image-provenance";
    }
    return "";
}

std::string checkTitle(CheckKind kind) {
    switch (kind) {
        case CheckKind::ServiceAccountToken:
            return "no service-account token";
        case CheckKind::Egress:
            return "egress denied";
        case CheckKind::Limits:
            return "limits enforced";
        case CheckKind::NothingSurvives:
            return "nothing survives";
        case CheckKind::HostIsolation:
            return "no way to the host";
        case CheckKind::KernelIsolation:
            return "kernel isolation";
        case CheckKind::ImageProvenance:
            return "image provenance";
    }
    return "";
}

namespace {

const json& nullJson() {
    static const json value;
    return value;
}
const json& emptyArray() {
    static const json value = json::array();
    return value;
}

// The member `key` of object, or null.
const json& at(const json& object, const char* key) {
    if (!object.is_object()) return nullJson();
    auto it = object.find(key);
    return it == object.end() ? nullJson() : *it;
}
const json& arrayAt(const json& object, const char* key) {
    const json& value = at(object, key);
    return value.is_array() ? value : emptyArray();
}
std::string stringAt(const json& object, const char* key, const std::string& fallback = "") {
    const json& value = at(object, key);
    return value.is_string() ? value.get<std::string>() : fallback;
}

const json& podSpec(const json& pod) {
    return at(pod, "spec");
}
std::string podName(const json& pod) {
    return stringAt(at(pod, "metadata"), "name", "?");
}

std::vector<json> allContainers(const json& pod) {
    std::vector<json> out;
    for (const char* key : {"initContainers", "containers"})
        for (const auto& container : arrayAt(podSpec(pod), key)) out.push_back(container);
    return out;
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator = ", ") {
    std::string out;
    for (const auto& part : parts) out += (out.empty() ? "" : separator) + part;
    return out;
}

// Secrets of type kubernetes.io/service-account-token reachable from the pod: a secret
// volume, a projected secret source, env secretKeyRef or envFrom, in any container.
Verdict legacyTokenSecrets(const json& pod, const std::optional<std::vector<std::string>>& tokens,
                           std::vector<std::string>& evidence) {
    std::vector<std::pair<std::string, std::string>> uses;  // secret, where
    for (const auto& volume : arrayAt(podSpec(pod), "volumes")) {
        const std::string name = stringAt(volume, "name", "?");
        if (at(volume, "secret").is_object())
            uses.push_back({stringAt(volume["secret"], "secretName"), "volume " + name});
        for (const auto& source : arrayAt(at(volume, "projected"), "sources"))
            if (at(source, "secret").is_object())
                uses.push_back({stringAt(source["secret"], "name"), "projected volume " + name});
    }
    for (const char* key : {"initContainers", "containers", "ephemeralContainers"}) {
        for (const auto& container : arrayAt(podSpec(pod), key)) {
            const std::string where = "container " + stringAt(container, "name", "?");
            for (const auto& env : arrayAt(container, "env")) {
                const json& ref = at(at(env, "valueFrom"), "secretKeyRef");
                if (ref.is_object())
                    uses.push_back(
                        {stringAt(ref, "name"),
                         where + " env " + stringAt(env, "name", "?") + " (secretKeyRef)"});
            }
            for (const auto& from : arrayAt(container, "envFrom"))
                if (at(from, "secretRef").is_object())
                    uses.push_back({stringAt(from["secretRef"], "name"), where + " envFrom"});
        }
    }
    Verdict verdict = Verdict::Pass;
    for (const auto& [secret, where] : uses) {
        if (!tokens) {
            evidence.push_back(fmt::format(
                "{} uses secret/{}, and the namespace's token Secrets could not be listed: it may "
                "hold a service-account token",
                where, secret));
            if (verdict == Verdict::Pass) verdict = Verdict::Unproven;
        } else if (std::find(tokens->begin(), tokens->end(), secret) != tokens->end()) {
            evidence.push_back(fmt::format(
                "{} exposes secret/{} of type kubernetes.io/service-account-token: a legacy "
                "token",
                where, secret));
            verdict = Verdict::Fail;
        }
    }
    if (verdict == Verdict::Pass)
        evidence.push_back(uses.empty() ? "no Secret mounted or in env"
                                        : "no Secret the pod uses is a service-account token");
    return verdict;
}

}  // namespace

Finding tokenStatic(const json& pod, const std::optional<json>& serviceAccount,
                    const std::optional<std::vector<std::string>>& tokenSecrets) {
    Finding finding;
    bool holds = true;
    const json& podSetting = at(podSpec(pod), "automountServiceAccountToken");
    const std::string accountName = stringAt(podSpec(pod), "serviceAccountName", "default");
    if (podSetting.is_boolean()) {
        holds = !podSetting.get<bool>();
        finding.evidence.push_back(fmt::format("pod {} sets automountServiceAccountToken: {}",
                                               podName(pod), podSetting.get<bool>()));
    } else if (!serviceAccount) {
        holds = false;
        finding.evidence.push_back(fmt::format(
            "pod leaves automountServiceAccountToken unset and serviceaccount/{} was not found "
            "(the default is to automount)",
            accountName));
    } else {
        const json& accountSetting = at(*serviceAccount, "automountServiceAccountToken");
        holds = accountSetting.is_boolean() && !accountSetting.get<bool>();
        finding.evidence.push_back(
            accountSetting.is_boolean()
                ? fmt::format("pod leaves automountServiceAccountToken unset; serviceaccount/{} "
                              "sets it to {}",
                              accountName, accountSetting.get<bool>())
                : fmt::format("automountServiceAccountToken is unset on the pod and on "
                              "serviceaccount/{}: the token is automounted by default",
                              accountName));
    }
    bool projected = false;
    for (const auto& volume : arrayAt(podSpec(pod), "volumes")) {
        for (const auto& source : arrayAt(at(volume, "projected"), "sources")) {
            if (!at(source, "serviceAccountToken").is_object()) continue;
            projected = true;
            finding.evidence.push_back(fmt::format(
                "volume {} projects a serviceAccountToken (path {})", stringAt(volume, "name", "?"),
                stringAt(source["serviceAccountToken"], "path", "?")));
        }
    }
    if (!projected) finding.evidence.push_back("no projected serviceAccountToken volume");
    const Verdict legacy = legacyTokenSecrets(pod, tokenSecrets, finding.evidence);
    finding.verdict = !holds || projected || legacy == Verdict::Fail ? Verdict::Fail : legacy;
    return finding;
}

bool labelSelectorMatches(const json& selector, const json& labels) {
    return model::labelSelectorMatches(selector, labels);
}

Finding limitsStatic(const json& pod, const json& sandbox, const json& resourceQuotas) {
    Finding finding;
    bool holds = true;
    for (const auto& container : allContainers(pod)) {
        const json& limits = at(at(container, "resources"), "limits");
        std::vector<std::string> missing;
        for (const char* resource : {"cpu", "memory"})
            if (!at(limits, resource).is_string() && !at(limits, resource).is_number())
                missing.push_back(resource);
        const std::string name = stringAt(container, "name", "?");
        if (missing.empty()) {
            finding.evidence.push_back(
                fmt::format("container {}: limits cpu={} memory={}", name,
                            stringAt(limits, "cpu", limits["cpu"].dump()),
                            stringAt(limits, "memory", limits["memory"].dump())));
        } else {
            holds = false;
            finding.evidence.push_back(
                fmt::format("container {} has no {} limit", name, joined(missing, " or ")));
        }
    }
    const json& deadline = at(podSpec(pod), "activeDeadlineSeconds");
    std::string shutdown = stringAt(at(sandbox, "spec"), "shutdownTime");
    if (shutdown.empty()) shutdown = stringAt(at(at(sandbox, "spec"), "lifecycle"), "shutdownTime");
    if (deadline.is_number())
        finding.evidence.push_back(fmt::format("pod activeDeadlineSeconds: {}", deadline.dump()));
    if (!shutdown.empty()) finding.evidence.push_back("sandbox shutdownTime: " + shutdown);
    if (!deadline.is_number() && shutdown.empty()) {
        holds = false;
        finding.evidence.push_back(
            "no deadline: neither pod activeDeadlineSeconds nor the Sandbox's shutdownTime is set");
    }
    int quotas = 0;
    for (const auto& quota : resourceQuotas.is_array() ? resourceQuotas : emptyArray()) {
        const json& hard = at(at(quota, "spec"), "hard");
        if (!hard.is_object() || hard.empty()) continue;
        ++quotas;
        std::vector<std::string> limits;
        for (const auto& [resource, value] : hard.items())
            limits.push_back(resource + "=" +
                             (value.is_string() ? value.get<std::string>() : value.dump()));
        std::vector<std::string> scopes;
        for (const auto& scope : arrayAt(at(quota, "spec"), "scopes"))
            scopes.push_back(scope.get<std::string>());
        finding.evidence.push_back(
            fmt::format("resourcequota/{}: {}{}", stringAt(at(quota, "metadata"), "name", "?"),
                        joined(limits), scopes.empty() ? "" : " (scopes " + joined(scopes) + ")"));
    }
    if (quotas == 0) {
        holds = false;
        finding.evidence.push_back("no ResourceQuota with hard limits in the namespace");
    }
    finding.verdict = holds ? Verdict::Pass : Verdict::Fail;
    return finding;
}

Finding nothingSurvivesStatic(const json& pod, const json& sandbox) {
    // Volume types whose data lives outside the pod, and those that die with it.
    static const std::vector<std::string> persistent = {"persistentVolumeClaim",
                                                        "hostPath",
                                                        "nfs",
                                                        "iscsi",
                                                        "cephfs",
                                                        "rbd",
                                                        "glusterfs",
                                                        "awsElasticBlockStore",
                                                        "gcePersistentDisk",
                                                        "azureDisk",
                                                        "azureFile",
                                                        "fc",
                                                        "flocker",
                                                        "portworxVolume",
                                                        "quobyte",
                                                        "scaleIO",
                                                        "storageos",
                                                        "vsphereVolume",
                                                        "photonPersistentDisk",
                                                        "cinder",
                                                        "flexVolume"};
    static const std::vector<std::string> ephemeralTypes = {
        "emptyDir", "configMap", "secret", "downwardAPI", "projected", "ephemeral", "image"};
    auto listed = [](const std::vector<std::string>& list, const std::string& type) {
        return std::find(list.begin(), list.end(), type) != list.end();
    };
    Finding finding;
    finding.verdict = Verdict::Pass;
    std::vector<std::string> ephemeral;
    for (const auto& volume : arrayAt(podSpec(pod), "volumes")) {
        const std::string name = stringAt(volume, "name", "?");
        std::string type = "unknown";
        for (const auto& [key, value] : volume.items())
            if (key != "name") type = key;
        if (listed(persistent, type)) {
            finding.verdict = Verdict::Fail;
            std::string detail = volume[type].is_object() ? volume[type].dump() : "";
            if (type == "persistentVolumeClaim") detail = stringAt(volume[type], "claimName", "?");
            if (type == "hostPath") detail = stringAt(volume[type], "path", "?");
            finding.evidence.push_back(
                fmt::format("volume {} is {} {}: its data outlives the pod", name, type, detail));
        } else if (type == "csi") {
            if (finding.verdict == Verdict::Pass) finding.verdict = Verdict::Unproven;
            finding.evidence.push_back(fmt::format(
                "volume {} is csi driver {}: the driver decides whether data outlives the pod",
                name, stringAt(volume["csi"], "driver", "?")));
        } else if (listed(ephemeralTypes, type)) {
            ephemeral.push_back(fmt::format("{} ({})", name, type));
        } else {
            if (finding.verdict == Verdict::Pass) finding.verdict = Verdict::Unproven;
            finding.evidence.push_back(
                fmt::format("volume {} is of type {}, not known to die with the pod", name, type));
        }
    }
    const json& spec = at(sandbox, "spec");
    const json& claims = arrayAt(spec, "volumeClaimTemplates");
    for (const auto& claim : claims) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(
            fmt::format("the Sandbox's volumeClaimTemplates has {}: a PVC that outlives every pod",
                        stringAt(at(claim, "metadata"), "name", "?")));
    }
    const std::string policy = stringAt(spec, "shutdownPolicy", "Retain");
    if (!claims.empty() && policy == "Retain")
        finding.evidence.push_back(
            "shutdownPolicy Retain: the Sandbox and its claims are kept after shutdownTime");
    if (finding.verdict == Verdict::Pass)
        finding.evidence.push_back(
            ephemeral.empty() ? "no volumes that outlive the pod; no volumes"
                              : "no volumes that outlive the pod; volumes: " + joined(ephemeral));
    return finding;
}

}  // namespace rossoctl::verify
