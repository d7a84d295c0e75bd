#include "env_expansion.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "json_access.hpp"
#include "rossoctl/kube/base64.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

// Linux refuses an env string or argument longer than 128 KiB (MAX_ARG_STRLEN): a longer
// expansion never runs, so what lies past this bound is never in the process.
constexpr size_t kLongestExpansion = 128 * 1024;
// Nor does a process start whose env and arguments together pass ARG_MAX (a quarter of the
// 8 MiB stack limit): past twice that, expanding stops, and the pod's spec cannot make it grow.
constexpr size_t kAllExpansions = 4 * 1024 * 1024;

// The value the kubelet reads for `key` of a Secret or ConfigMap, if verify read it.
std::optional<std::string> keyOf(const std::vector<CredentialSource>& sources,
                                 const std::string& kind, const std::string& name,
                                 const std::string& key) {
    for (const auto& source : sources) {
        if (source.kind != kind || source.name != name || !source.object) continue;
        for (const char* field : {"data", "binaryData"}) {
            const json& value = at(at(*source.object, field), key.c_str());
            if (!value.is_string()) continue;
            if (kind == "configmap" && std::string(field) == "data")
                return value.get<std::string>();
            return kube::base64Decode(value.get<std::string>());
        }
    }
    return std::nullopt;
}

// The kubelet's expansion: $(NAME) becomes NAME's value when defined before, $$ a '$', and
// anything else stays as written.
std::string expand(const std::string& text, const std::map<std::string, std::string>& defined) {
    std::string out;
    for (size_t at = 0; at < text.size() && out.size() < kLongestExpansion;) {
        if (text[at] != '$' || at + 1 == text.size()) {
            out += text[at++];
        } else if (text[at + 1] == '$') {
            out += '$';
            at += 2;
        } else if (text[at + 1] == '(') {
            const size_t close = text.find(')', at + 2);
            const auto found = close == std::string::npos
                                   ? defined.end()
                                   : defined.find(text.substr(at + 2, close - at - 2));
            if (found == defined.end()) {
                out += text[at++];
                continue;
            }
            out += found->second;
            at = close + 1;
        } else {
            out += text[at++];
        }
    }
    if (out.size() > kLongestExpansion) out.resize(kLongestExpansion);
    return out;
}

bool references(const std::string& text) {
    return text.find("$(") != std::string::npos;
}

}  // namespace

std::vector<ReadableValue> expandedValues(const json& container, const std::string& where,
                                          const std::vector<CredentialSource>& sources) {
    std::vector<ReadableValue> values;
    std::map<std::string, std::string> defined;
    size_t expandedBytes = 0;
    // envFrom first, then env in order, each expanded against what came before it.
    for (const auto& from : arrayAt(container, "envFrom")) {
        const std::string prefix = stringAt(from, "prefix");
        for (const auto& [field, kind] :
             {std::pair{"secretRef", "secret"}, std::pair{"configMapRef", "configmap"}}) {
            const std::string name = stringAt(at(from, field), "name");
            for (const auto& source : sources) {
                if (source.kind != kind || source.name != name || !source.object) continue;
                for (const char* data : {"data", "binaryData"})
                    if (at(*source.object, data).is_object())
                        for (const auto& [key, ignored] : (*source.object)[data].items())
                            if (auto value = keyOf(sources, kind, name, key))
                                defined[prefix + key] = std::move(*value);
            }
        }
    }
    for (const auto& env : arrayAt(container, "env")) {
        const std::string name = stringAt(env, "name");
        const json& from = at(env, "valueFrom");
        std::optional<std::string> value;
        if (at(env, "value").is_string()) {
            const std::string written = env["value"].get<std::string>();
            if (references(written) && expandedBytes > kAllExpansions) break;
            value = expand(written, defined);
            expandedBytes += value->size();
            if (references(written) && *value != written)
                values.push_back({fmt::format("{} env {} (as expanded)", where, name), *value});
        } else if (const json& secret = at(from, "secretKeyRef"); !secret.is_null()) {
            value = keyOf(sources, "secret", stringAt(secret, "name"), stringAt(secret, "key"));
        } else if (const json& map = at(from, "configMapKeyRef"); !map.is_null()) {
            value = keyOf(sources, "configmap", stringAt(map, "name"), stringAt(map, "key"));
        }
        if (value) defined[name] = std::move(*value);
    }
    for (const char* words : {"command", "args"}) {
        std::string all;
        bool referenced = false;
        for (const auto& word : arrayAt(container, words)) {
            if (!word.is_string() || expandedBytes > kAllExpansions) continue;
            referenced = referenced || references(word.get<std::string>());
            const std::string expanded = expand(word.get<std::string>(), defined);
            expandedBytes += expanded.size();
            all += expanded + '\n';
        }
        if (referenced) values.push_back({fmt::format("{} {} (as expanded)", where, words), all});
    }
    return values;
}

}  // namespace rossoctl::verify
