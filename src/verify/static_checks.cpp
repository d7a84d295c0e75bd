// The static half of "no service-account token" and what every check shares; the others are in
// egress_check.cpp, limits_static.cpp and survives_static.cpp.
#include <fmt/format.h>

#include <algorithm>

#include "json_access.hpp"
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

Verdict worstOf(Verdict a, Verdict b) {
    if (a == Verdict::Fail || b == Verdict::Fail) return Verdict::Fail;
    if (a == Verdict::Unproven || b == Verdict::Unproven) return Verdict::Unproven;
    return Verdict::Pass;
}

void absorb(Finding& into, const Finding& part, const std::string& prefix) {
    into.verdict = worstOf(into.verdict, part.verdict);
    for (const auto& line : part.evidence) into.evidence.push_back(prefix + line);
    into.forgeable = into.forgeable || part.forgeable;
    if (into.probe.empty()) into.probe = part.probe;
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

using namespace json_access;

namespace {

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

}  // namespace rossoctl::verify
