// Credentials wherever the pod can read them: a token copied into an ordinary Secret or
// ConfigMap, an annotation the downward API shows, a command line, works as well as a mounted
// one. Evidence names where, never the value.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string_view>

#include "credential_forms.hpp"
#include "credential_places.hpp"
#include "credential_sources.hpp"
#include "env_expansion.hpp"
#include "json_access.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/x509.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "rossoctl/verify/volume_claims.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

const char* kPodContainerKinds[] = {"initContainers", "containers", "ephemeralContainers"};

std::string joined(const json& words) {
    std::string all;
    if (!words.is_array()) return all;
    for (const auto& word : words)
        if (word.is_string()) all += word.get<std::string>() + '\n';
    return all;
}

// The pod's annotation or label values a downward-API fieldPath shows it, as (key, value).
std::vector<std::pair<std::string, std::string>> downwardValues(const json& pod,
                                                                const std::string& fieldPath) {
    std::vector<std::pair<std::string, std::string>> values;
    for (const std::string field : {"annotation", "label"}) {
        const std::string prefix = "metadata." + field + "s";
        if (fieldPath.rfind(prefix, 0) != 0) continue;
        const json& map = at(at(pod, "metadata"), (field + "s").c_str());
        if (!map.is_object()) return values;
        const std::string rest = fieldPath.substr(prefix.size());
        // metadata.annotations['key']; any other form is read as the whole map.
        std::string key;
        if (rest.size() >= 4 && rest.rfind("['", 0) == 0 && rest.substr(rest.size() - 2) == "']")
            key = rest.substr(2, rest.size() - 4);
        size_t index = 0;
        for (const auto& [name, value] : map.items()) {
            if ((key.empty() || name == key) && value.is_string())
                values.emplace_back(fmt::format("the pod's {} {}", field, name),
                                    value.get<std::string>());
            // The whole map is a file of `key="value"` lines: the keys are read too (attack 57,
            // T6); named by their place, as a key may be the credential.
            if (key.empty())
                values.emplace_back(fmt::format("the pod's {} key {}", field, ++index), name);
        }
        return values;
    }
    return values;
}

void addDownwardItems(const json& pod, const json& downwardApi, const std::string& where,
                      std::vector<ReadableValue>& values) {
    for (const auto& item : arrayAt(downwardApi, "items"))
        for (auto& [what, value] : downwardValues(pod, stringAt(at(item, "fieldRef"), "fieldPath")))
            values.push_back({fmt::format("{} (through {})", what, where), std::move(value)});
}

// What the kubelet sends the pod's own server for an HTTP probe or hook: its path (query
// included) and headers reach the pod as plainly as an env value.
void addHttpGet(const json& handler, const std::string& where, std::vector<ReadableValue>& values) {
    const json& request = at(handler, "httpGet");
    if (at(request, "path").is_string())
        values.push_back({fmt::format("{} path", where), request["path"].get<std::string>()});
    for (const auto& header : arrayAt(request, "httpHeaders"))
        if (at(header, "value").is_string())
            values.push_back({fmt::format("{} header {}", where, stringAt(header, "name")),
                              header["value"].get<std::string>()});
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
    const json& spec = at(pod, "spec");
    for (const auto& volume : arrayAt(spec, "volumes")) {
        add("secret", stringAt(at(volume, "secret"), "secretName"));
        add("configmap", stringAt(at(volume, "configMap"), "name"));
        for (const auto& source : arrayAt(at(volume, "projected"), "sources")) {
            add("secret", stringAt(at(source, "secret"), "name"));
            add("configmap", stringAt(at(source, "configMap"), "name"));
        }
    }
    for (const char* kind : kPodContainerKinds) {
        for (const auto& container : arrayAt(spec, kind)) {
            for (const auto& env : arrayAt(container, "env")) {
                const json& from = at(env, "valueFrom");
                add("secret", stringAt(at(from, "secretKeyRef"), "name"));
                add("configmap", stringAt(at(from, "configMapKeyRef"), "name"));
            }
            for (const auto& from : arrayAt(container, "envFrom")) {
                add("secret", stringAt(at(from, "secretRef"), "name"));
                add("configmap", stringAt(at(from, "configMapRef"), "name"));
            }
        }
    }
    return sources;
}

std::vector<ReadableValue> readableValues(const json& pod,
                                          const std::vector<CredentialSource>& sources) {
    std::vector<ReadableValue> values;
    const json& spec = at(pod, "spec");
    for (const char* kind : kPodContainerKinds) {
        for (const auto& container : arrayAt(spec, kind)) {
            const std::string name = fmt::format("container {}", stringAt(container, "name"));
            std::map<std::string, std::string> fieldValues;  // for $(VAR) expansion
            for (const auto& env : arrayAt(container, "env")) {
                const std::string where = fmt::format("{} env {}", name, stringAt(env, "name"));
                if (at(env, "value").is_string())
                    values.push_back({where, env["value"].get<std::string>()});
                const std::string field =
                    stringAt(at(at(env, "valueFrom"), "fieldRef"), "fieldPath");
                for (auto& [what, value] : downwardValues(pod, field)) {
                    fieldValues[stringAt(env, "name")] = value;
                    values.push_back({fmt::format("{} (through {})", what, where), value});
                }
            }
            // What a container runs is in its /proc/PID/cmdline, for it to read.
            for (const char* words : {"command", "args"})
                if (const std::string all = joined(at(container, words)); !all.empty())
                    values.push_back({fmt::format("{} {}", name, words), all});
            for (auto& expanded : expandedValues(container, name, sources, fieldValues))
                values.push_back(std::move(expanded));
            for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
                const json& handler = at(container, probe);
                const std::string where = fmt::format("{} {}", name, probe);
                values.push_back({where, joined(at(at(handler, "exec"), "command"))});
                addHttpGet(handler, where, values);
            }
            for (const char* hook : {"postStart", "preStop"}) {
                const json& handler = at(at(container, "lifecycle"), hook);
                const std::string where = fmt::format("{} {} hook", name, hook);
                values.push_back({where, joined(at(at(handler, "exec"), "command"))});
                addHttpGet(handler, where, values);
            }
        }
    }
    for (const auto& volume : arrayAt(spec, "volumes")) {
        const std::string where = fmt::format("volume {}", stringAt(volume, "name"));
        addDownwardItems(pod, at(volume, "downwardAPI"), where, values);
        for (const auto& source : arrayAt(at(volume, "projected"), "sources"))
            addDownwardItems(pod, at(source, "downwardAPI"), where, values);
    }
    for (const auto& source : sources) {
        if (!source.object) continue;
        const bool secret = source.kind == "secret";
        for (const char* field : {"data", "binaryData"}) {
            const json& data = at(*source.object, field);
            if (!data.is_object()) continue;
            for (const auto& [key, value] : data.items()) {
                if (!value.is_string()) continue;
                std::string plain = value.get<std::string>();
                if (secret || std::string(field) == "binaryData") {
                    auto decoded = kube::base64Decode(plain);
                    if (!decoded) continue;
                    plain = std::move(*decoded);
                }
                values.push_back(
                    {fmt::format("{}/{} key {}", source.kind, source.name, key), std::move(plain)});
            }
        }
    }
    // Every other string of the spec a container sees (env names, /etc/hosts, mount paths...)
    // and the key names of the sources (attack 54, T1).
    for (auto& value : specStrings(pod, sources)) values.push_back(std::move(value));
    std::erase_if(values, [](const ReadableValue& value) { return value.value.empty(); });
    return values;
}

bool holdsPrivateKey(const json& pod, const std::vector<CredentialSource>& sources) {
    size_t inflateBudget = kInflatedPerPod;
    for (const auto& readable : readableValues(pod, sources)) {
        bool found = false;
        forEachForm(
            readable.value,
            [&](const Decoded& form) {
                found = kube::holdsPrivateKeyMaterial(form.bytes);
                return !found;
            },
            inflateBudget);
        if (found) return true;
    }
    return false;
}

namespace {

// What of the pod's values that may hold a key (PEM, DER) is read for keys at most.
constexpr size_t kKeyScanBytes = 64 * 1024 * 1024;

// Private keys among what the pod reads: a key beside a certificate that the cluster's client
// CA signed is a credential; a key whose standing cannot be known is unproven.
void judgePrivateKeys(const std::vector<ReadableValue>& values,
                      const std::optional<std::string>& clientAuthorities, Finding& finding) {
    std::vector<std::string> texts;
    std::vector<size_t> owner;  // texts[i] came from values[owner[i]]
    size_t held = 0;
    bool overHeld = false;
    size_t inflateBudget = kInflatedPerPod;
    for (size_t i = 0; i < values.size() && !overHeld; ++i)
        forEachForm(
            values[i].value,
            [&](const Decoded& form) {
                if (form.bytes.find("-----BEGIN ") != std::string::npos ||
                    (!form.bytes.empty() && static_cast<unsigned char>(form.bytes[0]) == 0x30)) {
                    // Every value's forms held at once: bounded in all, not only per value.
                    if ((held += form.bytes.size()) > kKeyScanBytes) return !(overHeld = true);
                    texts.push_back(form.bytes);
                    owner.push_back(i);
                }
                return true;
            },
            inflateBudget);
    auto note = [&](Verdict verdict, std::string line) {
        finding.verdict = worstOf(finding.verdict, verdict);
        finding.evidence.push_back(std::move(line));
    };
    if (overHeld)
        note(Verdict::Unproven,
             fmt::format("what may hold keys or certificates comes to more than the {} MiB read: "
                         "not all judged",
                         kKeyScanBytes >> 20));
    if (texts.empty()) return;
    const auto scan = kube::scanPrivateKeys(texts, clientAuthorities.value_or(""));
    if (scan.overLimit)
        note(Verdict::Unproven, "more PEM keys or certificates than are read: not all judged");
    for (const auto& key : scan.keys) {
        const std::string where = redactedCredentials(values[owner[key.text]].where);
        if (key.signedByAuthority)
            note(Verdict::Fail,
                 fmt::format("{} holds a private key whose client certificate ({}) this "
                             "cluster's client CA signed",
                             where, key.subject));
        else if (!key.readable)
            note(Verdict::Unproven,
                 fmt::format("{} holds a private key that could not be read (encrypted, or "
                             "OpenSSH's format): what it opens is not known",
                             where));
        else if (!clientAuthorities)
            note(Verdict::Unproven,
                 fmt::format("{} holds a private key, and this cluster's client CA could not be "
                             "read: whether it signed a certificate of it is not known",
                             where));
        else if (key.unjudged)
            note(Verdict::Unproven,
                 fmt::format("{} holds a private key with more certificates beside it than are "
                             "checked: whether this cluster's client CA signed one is not known",
                             where));
        else if (!key.hasCertificate)
            note(Verdict::Unproven,
                 fmt::format("{} holds a private key with no certificate beside it: whether this "
                             "cluster trusts it (a signing key) is not known",
                             where));
        else
            finding.evidence.push_back(
                fmt::format("{} holds a key pair whose certificate ({}) this cluster's client "
                            "CA did not sign",
                            where, key.subject));
    }
}

// Adjacent literal env values of one container, both orders, joined with and without '.': a
// token split at any point over two values is whole again in `$T1$T2` (attack 53, F3). Parts
// longer than a token ever is are not joined, so this stays a few times the env's size.
std::vector<JoinedValues> joinedEnvValues(const json& pod) {
    constexpr size_t kLongestPart = 64 * 1024;
    std::vector<JoinedValues> pairs;
    for (const char* kind : kPodContainerKinds)
        for (const auto& container : arrayAt(at(pod, "spec"), kind)) {
            std::vector<std::pair<std::string, std::string>> literal;  // (name, value)
            for (const auto& env : arrayAt(container, "env"))
                if (at(env, "value").is_string() && !env["value"].get<std::string>().empty())
                    literal.emplace_back(stringAt(env, "name"), env["value"].get<std::string>());
            const std::string name = fmt::format("container {}", stringAt(container, "name"));
            for (size_t i = 0; i + 1 < literal.size(); ++i) {
                const auto& [a, aValue] = literal[i];
                const auto& [b, bValue] = literal[i + 1];
                if (aValue.size() > kLongestPart || bValue.size() > kLongestPart) continue;
                pairs.push_back(
                    {fmt::format("{} env {} and {} joined", name, a, b),
                     {fmt::format("{} env {}", name, a), fmt::format("{} env {}", name, b)},
                     {aValue + bValue, bValue + aValue, aValue + "." + bValue,
                      bValue + "." + aValue}});
            }
        }
    return pairs;
}

}  // namespace

namespace {

size_t addressBytes(const std::string& address) {
    return address.find(':') == std::string::npos ? 4 : 16;
}

// File modes a volume's files show (`stat`): 9 bits each.
size_t modeCount(const json& source) {
    size_t modes = at(source, "defaultMode").is_number() ? 1 : 0;
    for (const auto& item : arrayAt(source, "items"))
        if (at(item, "mode").is_number()) ++modes;
    return modes;
}

// What a resource quantity ("512Mi", "500m", "1125899906842624") can carry beyond a setting:
// its significant digits (decimal) or bits (a binary multiple), the fewer, and a few bits for
// its scale. A round limit carries about a byte; an arbitrary one its whole width (attack 59 T2).
double quantityBits(const json& value) {
    std::string text = value.is_string()   ? value.get<std::string>()
                       : value.is_number() ? value.dump()
                                           : "";
    size_t end = 0;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) ||
                                 text[end] == '.' || text[end] == '+' || text[end] == '-'))
        ++end;
    const std::string suffix = text.substr(end);
    std::string digits;
    for (char c : text.substr(0, end))
        if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
    const auto first = digits.find_first_not_of('0');
    if (first == std::string::npos) return 6;  // zero
    digits = digits.substr(first);
    std::string significant = digits.substr(0, digits.find_last_not_of('0') + 1);
    double bits = 3.33 * static_cast<double>(significant.size());
    const bool binary = suffix.empty() || (suffix.size() == 2 && suffix[1] == 'i');
    if (binary && text.find('.') == std::string::npos && digits.size() <= 19) {
        unsigned long long number = std::stoull(digits);
        int width = 0, zeros = 0;
        for (unsigned long long v = number; v; v >>= 1) ++width;
        while (!(number & 1ULL)) number >>= 1, ++zeros;
        bits = std::min(bits, static_cast<double>(width - zeros));
    }
    // Exponents, odd suffixes: what they may hold beyond the digits.
    return bits + 6 + (suffix.size() > 2 ? 8.0 * static_cast<double>(suffix.size()) : 0.0);
}

}  // namespace

std::vector<std::pair<std::string, size_t>> specNumberChannels(const json& pod) {
    const json& spec = at(pod, "spec");
    std::vector<std::pair<std::string, size_t>> channels;  // where, bytes
    const size_t groups = arrayAt(at(spec, "securityContext"), "supplementalGroups").size();
    if (groups > 0)
        channels.emplace_back(fmt::format("{} supplementalGroups (id -G)", groups), groups * 4);
    size_t aliasBytes = 0, aliases = 0;
    for (const auto& alias : arrayAt(spec, "hostAliases")) {
        aliasBytes += addressBytes(stringAt(alias, "ip", ""));
        ++aliases;
    }
    if (aliases > 0)
        channels.emplace_back(fmt::format("{} hostAliases addresses (/etc/hosts)", aliases),
                              aliasBytes);
    size_t serverBytes = 0, servers = 0;
    for (const auto& server : arrayAt(at(spec, "dnsConfig"), "nameservers"))
        if (server.is_string()) serverBytes += addressBytes(server.get<std::string>()), ++servers;
    if (servers > 0)
        channels.emplace_back(fmt::format("{} dnsConfig nameservers (/etc/resolv.conf)", servers),
                              serverBytes);
    size_t modes = 0;
    for (const auto& volume : arrayAt(spec, "volumes")) {
        for (const char* kind : {"configMap", "secret", "downwardAPI"})
            modes += modeCount(at(volume, kind));
        const json& projected = at(volume, "projected");
        modes += at(projected, "defaultMode").is_number() ? 1 : 0;
        for (const auto& source : arrayAt(projected, "sources"))
            for (const char* kind : {"configMap", "secret", "downwardAPI"})
                modes += modeCount(at(source, kind));
    }
    if (modes > 0)
        channels.emplace_back(fmt::format("{} volume file modes (stat)", modes),
                              (modes * 9 + 7) / 8);
    // User and group ids (`id`, file owners): a uid and a gid are a pod's settings; each other
    // distinct id is four bytes (attack 59 T3).
    std::set<long long> ids;
    auto addIds = [&](const json& context, std::initializer_list<const char*> fields) {
        for (const char* field : fields)
            if (const json& id = at(context, field); id.is_number_integer())
                ids.insert(id.get<long long>());
    };
    addIds(at(spec, "securityContext"), {"runAsUser", "runAsGroup", "fsGroup"});
    for (const char* list : {"initContainers", "containers", "ephemeralContainers"})
        for (const auto& container : arrayAt(spec, list))
            addIds(at(container, "securityContext"), {"runAsUser", "runAsGroup"});
    if (ids.size() > 2)
        channels.emplace_back(fmt::format("{} distinct user and group ids (id)", ids.size()),
                              4 * (ids.size() - 2));
    // Each container's limits and requests: its own in its cgroup files, any container's
    // through the downward API's resourceFieldRef (attack 59 T2).
    double resourceBits = 0;
    size_t quantities = 0;
    std::vector<const json*> holders{&spec};
    for (const char* list : {"initContainers", "containers", "ephemeralContainers"})
        for (const auto& container : arrayAt(spec, list)) holders.push_back(&container);
    for (const json* holder : holders)
        for (const char* kind : {"limits", "requests"}) {
            const json& values = at(at(*holder, "resources"), kind);
            if (!values.is_object()) continue;
            for (const auto& [name, value] : values.items()) {
                resourceBits += quantityBits(value);
                ++quantities;
            }
        }
    // A pod's few round limits are its settings (a hardened sandbox's eight, with its gate's,
    // carry about eight bytes); the allowance is fixed, so more containers buy no more room
    // (review of attack 59 T2).
    constexpr size_t kResourceSettingsBytes = 16;
    if (const auto bytes = static_cast<size_t>(resourceBits / 8); bytes > kResourceSettingsBytes)
        channels.emplace_back(fmt::format("{} resource quantities beyond round values (cgroup "
                                          "files, the downward API)",
                                          quantities),
                              bytes - kResourceSettingsBytes);
    return channels;
}

namespace {

void judgeNumberChannels(const json& pod, Finding& finding) {
    const auto channels = specNumberChannels(pod);
    size_t total = 0;
    for (const auto& [where, bytes] : channels) total += bytes;
    if (total <= kMostNumberBytes) return;
    std::string listed;
    for (const auto& [where, bytes] : channels)
        listed += (listed.empty() ? "" : ", ") + fmt::format("{} bytes in {}", bytes, where);
    finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
    finding.evidence.push_back(fmt::format(
        "the numbers of the pod's spec the agent reads back come to {} bytes ({}): more than the "
        "{} a pod's settings need, and numbers are not searched for a credential",
        total, listed, kMostNumberBytes));
}

}  // namespace

Finding credentialsStatic(const json& pod, const std::vector<CredentialSource>& sources,
                          const std::string& clusterIssuer,
                          const std::optional<std::string>& clientAuthorities,
                          const VolumeBindings& volumes) {
    Finding finding;
    finding.verdict = Verdict::Pass;
    judgeSources(pod, sources, volumes, finding);
    judgeNumberChannels(pod, finding);
    const auto values = readableValues(pod, sources);
    size_t inflateBudget = kInflatedPerPod;
    std::set<std::string> judged;  // where a value is already not a pass
    for (const auto& readable : values) {
        const auto shape = credentialShape(readable.value, clusterIssuer, inflateBudget);
        if (shape.verdict == Verdict::Pass) continue;
        judged.insert(readable.where);
        finding.verdict = worstOf(finding.verdict, shape.verdict);
        finding.evidence.push_back(
            fmt::format("{} holds {}", redactedCredentials(readable.where), shape.what));
    }
    auto joined = joinedEnvValues(pod);
    for (auto& place : joinedPlaces(pod, sources)) joined.push_back(std::move(place));
    for (const auto& pair : joined) {
        if (std::any_of(pair.pieces.begin(), pair.pieces.end(),
                        [&](const std::string& piece) { return judged.contains(piece); }))
            continue;
        CredentialShape worst;
        for (const auto& join : pair.joins) {
            auto shape = credentialShape(join, clusterIssuer, inflateBudget);
            if (worstOf(worst.verdict, shape.verdict) != worst.verdict) worst = std::move(shape);
        }
        if (worst.verdict == Verdict::Pass) continue;
        finding.verdict = worstOf(finding.verdict, worst.verdict);
        finding.evidence.push_back(
            fmt::format("{} hold {}", redactedCredentials(pair.where), worst.what));
    }
    judgePrivateKeys(values, clientAuthorities, finding);
    if (finding.verdict == Verdict::Pass)
        finding.evidence.push_back(fmt::format(
            "no credential by shape (a JWT, its claims or their start, a kubeconfig, a client "
            "key, encoded, escaped, reversed or not, two adjacent env values, a mount path's "
            "segments, a source's key names, hostnames' labels joined) in {} value{} the pod can "
            "read (env values and names, command, probes, downward API, every other string of "
            "its spec: dnsConfig, hostAliases, mount paths; keys and key names of {} "
            "Secret{}/ConfigMap{})",
            values.size(), values.size() == 1 ? "" : "s", sources.size(),
            sources.size() == 1 ? "" : "s", sources.size() == 1 ? "" : "s"));
    return finding;
}

Finding credentialsStatic(const json& pod, const std::vector<CredentialSource>& sources,
                          const std::string& clusterIssuer,
                          const std::optional<std::string>& clientAuthorities) {
    return credentialsStatic(pod, sources, clusterIssuer, clientAuthorities, VolumeBindings());
}

}  // namespace rossoctl::verify
