// maskSecrets and maskHeaderValue: what -v 7/8 output must never show.
#include <fmt/format.h>
#include <strings.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>

#include "rossoctl/kube/json_depth.hpp"
#include "rossoctl/kube/trace.hpp"

namespace rossoctl::kube {

namespace {

constexpr std::string_view kMask = "***";

bool isKeyChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

// Keys compared without case, '-' or '_' so "client-key-data" and "clientKeyData" both match.
bool isSecretKey(std::string_view key) {
    static constexpr std::array<std::string_view, 10> kSecretKeys = {
        "token",    "accesstoken",   "idtoken",      "refreshtoken",  "bearertoken",
        "password", "clientkeydata", "clientsecret", "authorization", "privatekey"};
    std::string normalized;
    for (char c : key) {
        if (c == '-' || c == '_') continue;
        normalized += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return std::find(kSecretKeys.begin(), kSecretKeys.end(), normalized) != kSecretKeys.end();
}

bool equalsNoCase(std::string_view a, std::string_view b) {
    return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

bool startsWithNoCase(std::string_view text, size_t pos, std::string_view prefix) {
    return text.size() - pos >= prefix.size() &&
           strncasecmp(text.data() + pos, prefix.data(), prefix.size()) == 0;
}

// -----BEGIN ... PRIVATE KEY----- blocks keep their armour lines, lose their content; a block
// cut off by truncation is masked to the end.
std::string maskPemKeys(std::string_view text) {
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t begin = text.find("-----BEGIN ", pos);
        if (begin == std::string_view::npos) break;
        size_t labelStart = begin + 11;
        size_t labelEnd = text.find("-----", labelStart);
        if (labelEnd == std::string_view::npos) break;
        std::string_view label = text.substr(labelStart, labelEnd - labelStart);
        size_t headerEnd = labelEnd + 5;
        out.append(text.substr(pos, headerEnd - pos));
        if (label.find("PRIVATE KEY") == std::string_view::npos) {
            pos = headerEnd;
            continue;
        }
        out.append(kMask);
        size_t footer = text.find("-----END ", headerEnd);
        pos = footer == std::string_view::npos ? text.size() : footer;
    }
    out.append(text.substr(std::min(pos, text.size())));
    return out;
}

// JSON "key": "value" pairs, also when the JSON sits escaped inside another string
// (\"token\":\"...\"), as in last-applied-configuration.
std::string maskJsonValues(std::string_view text) {
    std::string out;
    size_t pos = 0;
    size_t copied = 0;
    while ((pos = text.find('"', pos)) != std::string_view::npos) {
        const bool escaped = pos > 0 && text[pos - 1] == '\\';
        const std::string_view quote = escaped ? "\\\"" : "\"";
        size_t keyStart = pos + 1;
        size_t keyEnd = keyStart;
        while (keyEnd < text.size() && isKeyChar(text[keyEnd])) ++keyEnd;
        size_t cursor = keyEnd;
        if (escaped && cursor < text.size() && text[cursor] == '\\') ++cursor;
        if (cursor >= text.size() || text[cursor] != '"' || keyEnd == keyStart) {
            pos = keyEnd > keyStart ? keyEnd : pos + 1;
            continue;
        }
        std::string_view key = text.substr(keyStart, keyEnd - keyStart);
        ++cursor;
        while (cursor < text.size() && (text[cursor] == ' ' || text[cursor] == '\t')) ++cursor;
        if (cursor >= text.size() || text[cursor] != ':' || !isSecretKey(key)) {
            pos = cursor;
            continue;
        }
        ++cursor;
        while (cursor < text.size() && (text[cursor] == ' ' || text[cursor] == '\t')) ++cursor;
        if (text.substr(cursor, quote.size()) != quote) {
            pos = cursor;
            continue;
        }
        size_t valueStart = cursor + quote.size();
        size_t valueEnd = valueStart;
        while (valueEnd < text.size()) {
            if (text[valueEnd] == '\\' && !escaped) {
                valueEnd += 2;
                continue;
            }
            if (text.substr(valueEnd, quote.size()) == quote) break;
            ++valueEnd;
        }
        valueEnd = std::min(valueEnd, text.size());
        out.append(text.substr(copied, valueStart - copied));
        out.append(kMask);
        copied = valueEnd;
        pos = valueEnd + quote.size();
    }
    out.append(text.substr(std::min(copied, text.size())));
    return out;
}

size_t leadingSpaces(std::string_view line) {
    size_t spaces = 0;
    while (spaces < line.size() && line[spaces] == ' ') ++spaces;
    return spaces;
}

// YAML "key: value" lines (kubeconfig, apply bodies written as YAML): a secret key's value, a
// block scalar (| or >) under one, and every value of an env: list, flow style included.
std::string maskYamlValues(std::string_view text) {
    std::string out;
    // Columns, or kNone: inside the env: block whose key is there; masking a block scalar's
    // lines indented past there. (Not std::optional: GCC 12 warns it falsely uninitialized.)
    constexpr size_t kNone = std::string_view::npos;
    size_t envColumn = kNone;
    size_t blockColumn = kNone;
    size_t lineStart = 0;
    while (lineStart <= text.size()) {
        size_t lineEnd = text.find('\n', lineStart);
        if (lineEnd == std::string_view::npos) lineEnd = text.size();
        std::string_view line = text.substr(lineStart, lineEnd - lineStart);
        const size_t indent = leadingSpaces(line);
        const bool blank = line.find_first_not_of(" \t\r") == std::string_view::npos;
        size_t keyStart = 0;
        while (keyStart < line.size() && (line[keyStart] == ' ' || line[keyStart] == '-')) {
            ++keyStart;
        }
        size_t keyEnd = keyStart;
        while (keyEnd < line.size() && isKeyChar(line[keyEnd])) ++keyEnd;
        const bool keyLine =
            keyEnd > keyStart && keyEnd < line.size() && line[keyEnd] == ':' &&
            (keyEnd + 1 == line.size() || line[keyEnd + 1] == ' ' || line[keyEnd + 1] == '\r');
        if (blockColumn != kNone && !blank && indent <= blockColumn) blockColumn = kNone;
        // An env list's items sit deeper than its key, or at its column behind "- ".
        if (envColumn != kNone && !blank && indent <= envColumn &&
            !(indent == envColumn && indent < line.size() && line[indent] == '-'))
            envColumn = kNone;
        const std::string_view key =
            keyLine ? line.substr(keyStart, keyEnd - keyStart) : std::string_view{};
        const std::string_view value = keyLine ? line.substr(keyEnd + 1) : std::string_view{};
        const bool hasValue = value.find_first_not_of(" \r") != std::string_view::npos;
        const bool secret = keyLine && (isSecretKey(key) || (envColumn != kNone && key == "value"));
        if (blockColumn != kNone && !blank) {
            out.append(line.substr(0, indent));
            out.append(kMask);
        } else if (secret && hasValue) {
            const size_t valueStart = value.find_first_not_of(' ');
            if (value[valueStart] == '|' || value[valueStart] == '>') blockColumn = keyStart;
            out.append(line.substr(0, keyEnd + 2));
            out.append(kMask);
        } else if (keyLine && key == "env") {
            // env: [{name: A, value: B}] is masked whole; env: opens a block.
            if (hasValue) {
                out.append(line.substr(0, keyEnd + 2));
                out.append(kMask);
            } else {
                out.append(line);
                envColumn = keyStart;
            }
        } else {
            out.append(line);
        }
        if (lineEnd == text.size()) break;
        out += '\n';
        lineStart = lineEnd + 1;
    }
    return out;
}

bool isTokenChar(char c) {
    return c != '"' && c != '\'' && c != '\\' && c != ',' &&
           !std::isspace(static_cast<unsigned char>(c));
}

// "Bearer <anything>" wherever it appears, and bare JWTs (eyJ...x.y.z).
std::string maskBearerAndJwt(std::string_view text) {
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
        if (startsWithNoCase(text, pos, "bearer ") && pos + 7 < text.size() &&
            isTokenChar(text[pos + 7]) && text.substr(pos + 7, kMask.size()) != kMask) {
            out.append(text.substr(pos, 7));
            out.append(kMask);
            pos += 7;
            while (pos < text.size() && isTokenChar(text[pos])) ++pos;
            continue;
        }
        if (text.compare(pos, 3, "eyJ") == 0) {
            size_t end = pos;
            int dots = 0;
            while (end < text.size() && (isKeyChar(text[end]) || text[end] == '.')) {
                dots += text[end] == '.';
                ++end;
            }
            if (dots >= 2 && end - pos >= 20) {
                out.append(kMask);
                pos = end;
                continue;
            }
        }
        out += text[pos++];
    }
    return out;
}

// JSON in a string in JSON (last-applied-configuration) is masked to this many levels; a string
// nested deeper, or nesting deeper than a Kubernetes object does, is masked whole.
constexpr int kMaxEmbeddedLevels = 4;
constexpr size_t kMaxEmbeddedDepth = 64;

bool containsNoCase(std::string_view text, std::string_view word) {
    for (size_t pos = 0; pos + word.size() <= text.size(); ++pos)
        if (startsWithNoCase(text, pos, word)) return true;
    return false;
}

// A ConfigMap entry that reads like a credential (a kubeconfig, a token file, a .env with a
// password): masked whole, as Secret data is. When unsure, masked.
bool looksLikeCredential(std::string_view key, std::string_view content) {
    static constexpr std::array<std::string_view, 13> kWords = {
        "token",   "password", "passwd",     "secret", "credential", "apikey", "api_key",
        "api-key", "private",  "client-key", "auth",   "kubeconfig", "bearer"};
    for (std::string_view word : kWords)
        if (containsNoCase(key, word) || containsNoCase(content, word)) return true;
    return false;
}

void maskStructured(nlohmann::json& value, int level, std::string_view itemKind = {});

// A string of a parsed body: JSON in it is masked by the same rules (it may hold an env list,
// as last-applied-configuration does); YAML in it by the line masks, which cannot see its lines
// once they are escaped as \n in the dump.
void maskEmbedded(nlohmann::json& value, int level) {
    const std::string& text = value.get_ref<const std::string&>();
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
        if (level >= kMaxEmbeddedLevels || measureJson(text, kMaxEmbeddedDepth).tooDeep) {
            value = kMask;
            return;
        }
        auto inner = nlohmann::json::parse(text, nullptr, false);
        if (!inner.is_discarded() && (inner.is_object() || inner.is_array())) {
            const nlohmann::json before = inner;
            maskStructured(inner, level + 1);
            // Unchanged JSON is shown as the server wrote it.
            if (inner != before)
                value = inner.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            return;
        }
        // Looks like JSON but is none (cut short, two documents): env values may hide in it.
        if (text.find("value") != std::string::npos) {
            value = kMask;
            return;
        }
    }
    if (text.find('\n') != std::string::npos) {
        std::string masked = maskYamlValues(text);
        if (masked != text) value = std::move(masked);
    }
}

// Walks a parsed body: env values, Secret contents and ConfigMap entries that read like
// credentials become "***" (json, so nested copies in a list, a watch event or a string holding
// JSON are found too).
void maskStructured(nlohmann::json& value, int level, std::string_view itemKind) {
    if (value.is_string()) {
        maskEmbedded(value, level);
        return;
    }
    if (value.is_array()) {
        for (auto& item : value) maskStructured(item, level, itemKind);
        return;
    }
    if (!value.is_object()) return;
    // A list's items often carry no kind of their own: the list's says what they are.
    std::string kind = value.contains("kind") && value["kind"].is_string()
                           ? value["kind"].get<std::string>()
                           : std::string();
    if (kind.empty()) kind = itemKind;
    if (kind == "Secret") {
        for (const char* key : {"data", "stringData"})
            if (value.contains(key) && value[key].is_object())
                for (auto& [name, content] : value[key].items()) content = kMask;
    }
    if (kind == "ConfigMap") {
        // binaryData is opaque: no telling a key file from a logo.
        if (value.contains("binaryData") && value["binaryData"].is_object())
            for (auto& [name, content] : value["binaryData"].items()) content = kMask;
        if (value.contains("data") && value["data"].is_object())
            for (auto& [name, content] : value["data"].items())
                if (!content.is_string() ||
                    looksLikeCredential(name, content.get_ref<const std::string&>()))
                    content = kMask;
    }
    for (auto& [key, member] : value.items()) {
        if (key == "env" && member.is_array()) {
            for (auto& variable : member)
                if (variable.is_object() && variable.contains("value")) variable["value"] = kMask;
            continue;
        }
        if (isSecretKey(key) && member.is_string()) {
            member = kMask;
            continue;
        }
        std::string_view items;
        if (key == "items" && kind == "SecretList") items = "Secret";
        if (key == "items" && kind == "ConfigMapList") items = "ConfigMap";
        maskStructured(member, level, items);
    }
}

}  // namespace

std::string maskSecretsInBody(std::string_view body) {
    // Masking walks the parsed value: a body too deep to walk, or too big to parse, is not
    // shown at all (the text masker cannot find env values; the client refuses it anyway).
    // Past 1 MiB a trace shows a cut anyway: not parsed and copied just for that.
    constexpr size_t kMaxMaskedBody = 1 << 20;
    const JsonShape shape = measureJson(body);
    if (shape.tooDeep || body.size() > kMaxMaskedBody)
        return fmt::format("<{} bytes not shown: too deep or too large to mask>", body.size());
    auto parsed = nlohmann::json::parse(body, nullptr, false);
    if (parsed.is_discarded() || !(parsed.is_object() || parsed.is_array())) {
        // Broken JSON (trailing junk, two documents, cut short) may still carry env values the
        // text masks cannot find: only text with no object and no "value" is shown.
        if (body.find('{') != std::string_view::npos ||
            body.find("value") != std::string_view::npos)
            return fmt::format("<{} bytes not shown: not JSON, so not masked>", body.size());
        return maskSecrets(body);
    }
    maskStructured(parsed, 0);
    return maskSecrets(parsed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string maskSecrets(std::string_view text) {
    return maskBearerAndJwt(maskYamlValues(maskJsonValues(maskPemKeys(text))));
}

std::string maskHeaderValue(std::string_view name, std::string_view value) {
    if (equalsNoCase(name, "authorization") || equalsNoCase(name, "proxy-authorization")) {
        size_t space = value.find(' ');
        if (space == std::string_view::npos) return "<masked>";
        return std::string(value.substr(0, space)) + " <masked>";
    }
    if (equalsNoCase(name, "cookie") || equalsNoCase(name, "set-cookie")) return "<masked>";
    return maskSecrets(value);
}

}  // namespace rossoctl::kube
