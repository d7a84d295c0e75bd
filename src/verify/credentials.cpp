// Credentials by their shape, wherever the pod can read them: a token copied into an ordinary
// Secret or ConfigMap works as well as a mounted one. Evidence names where, never the value.
#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "rossoctl/kube/base64.hpp"
#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

const json& member(const json& object, const char* key) {
    static const json none;
    if (!object.is_object()) return none;
    auto it = object.find(key);
    return it == object.end() ? none : *it;
}
std::string text(const json& object, const char* key) {
    const json& value = member(object, key);
    return value.is_string() ? value.get<std::string>() : "";
}
const json& items(const json& object, const char* key) {
    static const json empty = json::array();
    const json& value = member(object, key);
    return value.is_array() ? value : empty;
}

const char* kContainerKinds[] = {"initContainers", "containers", "ephemeralContainers"};

// A JWT's claims (its middle part, base64url without padding), or null.
json jwtClaims(const std::string& payload) {
    std::string standard = payload;
    std::replace(standard.begin(), standard.end(), '-', '+');
    std::replace(standard.begin(), standard.end(), '_', '/');
    while (standard.size() % 4 != 0) standard += '=';
    const auto decoded = kube::base64Decode(standard);
    if (!decoded) return nullptr;
    json claims = json::parse(*decoded, nullptr, false);
    return claims.is_object() ? claims : json();
}

// A kubeconfig (YAML or JSON) whose users hold something that authenticates.
bool isKubeconfigWithCredentials(const std::string& value) {
    static const std::regex users(R"((^|\n|[{,])\s*("users"|users)\s*:)");
    static const std::regex clusters(R"((^|\n|[{,])\s*("clusters"|clusters)\s*:)");
    static const std::regex secret(
        R"(("?)(token|tokenFile|client-key|client-key-data|password|exec|auth-provider)("?)\s*:)");
    return std::regex_search(value, users) && std::regex_search(value, clusters) &&
           std::regex_search(value, secret);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> referencedSources(const json& pod) {
    std::vector<std::pair<std::string, std::string>> sources;
    auto add = [&](const std::string& kind, const std::string& name) {
        if (name.empty()) return;
        const std::pair<std::string, std::string> source{kind, name};
        if (std::find(sources.begin(), sources.end(), source) == sources.end())
            sources.push_back(source);
    };
    const json& spec = member(pod, "spec");
    for (const auto& volume : items(spec, "volumes")) {
        add("secret", text(member(volume, "secret"), "secretName"));
        add("configmap", text(member(volume, "configMap"), "name"));
        for (const auto& source : items(member(volume, "projected"), "sources")) {
            add("secret", text(member(source, "secret"), "name"));
            add("configmap", text(member(source, "configMap"), "name"));
        }
    }
    for (const char* kind : kContainerKinds) {
        for (const auto& container : items(spec, kind)) {
            for (const auto& env : items(container, "env")) {
                const json& from = member(env, "valueFrom");
                add("secret", text(member(from, "secretKeyRef"), "name"));
                add("configmap", text(member(from, "configMapKeyRef"), "name"));
            }
            for (const auto& from : items(container, "envFrom")) {
                add("secret", text(member(from, "secretRef"), "name"));
                add("configmap", text(member(from, "configMapRef"), "name"));
            }
        }
    }
    return sources;
}

CredentialShape credentialShape(const std::string& value, const std::string& clusterIssuer) {
    static const std::regex jwt(R"(eyJ[A-Za-z0-9_-]+\.(eyJ[A-Za-z0-9_-]+)\.[A-Za-z0-9_-]*)");
    CredentialShape shape;
    for (std::sregex_iterator it(value.begin(), value.end(), jwt), end; it != end; ++it) {
        const json claims = jwtClaims((*it)[1].str());
        if (!claims.is_object()) continue;
        const std::string issuer = text(claims, "iss");
        const std::string subject = text(claims, "sub");
        if (!clusterIssuer.empty() && issuer == clusterIssuer)
            return {Verdict::Fail, fmt::format("a JWT issued by this cluster (iss {}, sub {})",
                                               issuer, subject.empty() ? "?" : subject)};
        if (claims.contains("kubernetes.io") || subject.rfind("system:serviceaccount:", 0) == 0 ||
            issuer == "kubernetes/serviceaccount")
            return {Verdict::Fail,
                    fmt::format("a Kubernetes service-account token (iss {}, sub {})",
                                issuer.empty() ? "?" : issuer, subject.empty() ? "?" : subject)};
        shape = {Verdict::Unproven,
                 fmt::format("a JWT of issuer {}: whether this cluster accepts it (OIDC) is not "
                             "known",
                             issuer.empty() ? "(none)" : issuer)};
    }
    if (shape.verdict == Verdict::Pass && isKubeconfigWithCredentials(value))
        return {Verdict::Fail, "a kubeconfig with a user's credentials"};
    return shape;
}

Finding credentialsStatic(const json& pod, const std::vector<CredentialSource>& sources,
                          const std::string& clusterIssuer) {
    Finding finding;
    finding.verdict = Verdict::Pass;
    size_t values = 0;
    auto judge = [&](const std::string& value, const std::string& where) {
        ++values;
        const auto shape = credentialShape(value, clusterIssuer);
        if (shape.verdict == Verdict::Pass) return;
        finding.verdict = worstOf(finding.verdict, shape.verdict);
        finding.evidence.push_back(fmt::format("{} holds {}", where, shape.what));
    };
    for (const char* kind : kContainerKinds)
        for (const auto& container : items(member(pod, "spec"), kind))
            for (const auto& env : items(container, "env"))
                if (member(env, "value").is_string())
                    judge(env["value"].get<std::string>(),
                          fmt::format("container {} env {}", text(container, "name"),
                                      text(env, "name")));
    for (const auto& source : sources) {
        const std::string name = source.kind + "/" + source.name;
        if (!source.object) {
            if (source.problem == "not found") {
                finding.evidence.push_back(name + " does not exist: nothing of it is mounted");
                continue;
            }
            finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
            finding.evidence.push_back(fmt::format(
                "{} could not be read ({}): the pod can read what it holds, so no credential in "
                "it is ruled out",
                name, source.problem));
            continue;
        }
        const bool secret = source.kind == "secret";
        for (const char* field : {"data", "binaryData"}) {
            const json& data = member(*source.object, field);
            if (!data.is_object()) continue;
            for (const auto& [key, value] : data.items()) {
                if (!value.is_string()) continue;
                std::string plain = value.get<std::string>();
                if (secret || std::string(field) == "binaryData") {
                    const auto decoded = kube::base64Decode(plain);
                    if (!decoded) continue;
                    plain = *decoded;
                }
                judge(plain, fmt::format("{} key {}", name, key));
            }
        }
    }
    if (finding.verdict == Verdict::Pass)
        finding.evidence.push_back(fmt::format(
            "no credential by shape (a JWT, a kubeconfig) in {} env values and keys of {} "
            "Secrets/ConfigMaps the pod can read",
            values, sources.size()));
    return finding;
}

}  // namespace rossoctl::verify
