// Credentials by their shape, wherever the pod can read them: a token copied into an ordinary
// Secret or ConfigMap works as well as a mounted one. Evidence names where, never the value.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/json_depth.hpp"
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
json jwtClaims(std::string_view payload) {
    std::string standard(payload);
    std::replace(standard.begin(), standard.end(), '-', '+');
    std::replace(standard.begin(), standard.end(), '_', '/');
    while (standard.size() % 4 != 0) standard += '=';
    const auto decoded = kube::base64Decode(standard);
    if (!decoded || kube::nestsDeeperThan(*decoded)) return nullptr;
    json claims = json::parse(*decoded, nullptr, false);
    return claims.is_object() ? std::move(claims) : json();
}

// The scanners below are plain loops, linear in the value, not std::regex: its recursion per
// character overflowed the stack ("eyJ" and 50,000 letters), and a value the pod controls must
// be scanned whole, never cut, or a token past the cut would pass.

bool isBase64Url(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}
bool isSpace(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}
size_t base64UrlRunEnd(std::string_view text, size_t from) {
    while (from < text.size() && isBase64Url(text[from])) ++from;
    return from;
}

// The claims part of each JWT-shaped run in `text`, left to right, as the search
// eyJ[A-Za-z0-9_-]+\.(eyJ[A-Za-z0-9_-]+)\.[A-Za-z0-9_-]* finds them.
std::vector<std::string_view> jwtPayloads(std::string_view text) {
    std::vector<std::string_view> payloads;
    for (size_t at = text.find("eyJ"); at != std::string_view::npos; at = text.find("eyJ", at)) {
        const size_t headerEnd = base64UrlRunEnd(text, at + 3);
        // Every start inside the header's run ends at the same place, so fails the same way.
        if (headerEnd == at + 3 || headerEnd >= text.size() || text[headerEnd] != '.') {
            at = std::max(at + 1, headerEnd);
            continue;
        }
        const size_t claims = headerEnd + 1;
        const size_t claimsEnd =
            text.compare(claims, 3, "eyJ") == 0 ? base64UrlRunEnd(text, claims + 3) : claims;
        if (claimsEnd == claims || claimsEnd == claims + 3 || claimsEnd >= text.size() ||
            text[claimsEnd] != '.') {
            at = claims;  // the claims part may itself start a token
            continue;
        }
        payloads.push_back(text.substr(claims, claimsEnd - claims));
        at = base64UrlRunEnd(text, claimsEnd + 1);
    }
    return payloads;
}

// Whether `key` (quoted or not) opens a line or follows '{' or ',' (spaces between), then
// a colon: a YAML or JSON mapping's key, as (^|\n|[{,])\s*("key"|key)\s*: matches it.
bool hasMappingKey(std::string_view text, std::string_view key) {
    auto keyAt = [&](size_t at) {
        size_t end = at;
        if (text.compare(at, key.size(), key) == 0) {
            end = at + key.size();
        } else if (at < text.size() && text[at] == '"' &&
                   text.compare(at + 1, key.size(), key) == 0 &&
                   text.compare(at + 1 + key.size(), 1, "\"") == 0) {
            end = at + key.size() + 2;
        } else {
            return false;
        }
        while (end < text.size() && isSpace(text[end])) ++end;
        return end < text.size() && text[end] == ':';
    };
    bool afterAnchor = true;  // the start of the text, a line, or '{' / ',' with spaces after
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (afterAnchor && !isSpace(c) && keyAt(i)) return true;
        if (c == '\n' || c == '{' || c == ',')
            afterAnchor = true;
        else if (!isSpace(c))
            afterAnchor = false;
    }
    return false;
}

// Whether a word that names a credential in a kubeconfig's user is followed by a colon
// (a closing quote and spaces between), anywhere: ("?)(token|...)("?)\s*: as a search.
bool hasCredentialKey(std::string_view text) {
    static constexpr std::string_view kWords[] = {
        "token", "tokenFile", "client-key", "client-key-data", "password", "exec", "auth-provider"};
    for (size_t i = 0; i < text.size(); ++i) {
        for (const auto word : kWords) {
            if (text.compare(i, word.size(), word) != 0) continue;
            size_t end = i + word.size();
            if (end < text.size() && text[end] == '"') ++end;
            while (end < text.size() && isSpace(text[end])) ++end;
            if (end < text.size() && text[end] == ':') return true;
        }
    }
    return false;
}

// A kubeconfig (YAML or JSON) whose users hold something that authenticates.
bool isKubeconfigWithCredentials(std::string_view value) {
    return hasMappingKey(value, "users") && hasMappingKey(value, "clusters") &&
           hasCredentialKey(value);
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
    CredentialShape shape;
    for (const auto payload : jwtPayloads(value)) {
        const json claims = jwtClaims(payload);
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
