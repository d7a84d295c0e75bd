// Credentials by their shape: a JWT and whose it is, a kubeconfig with a user's credentials,
// either of them base64-encoded. Evidence names what, never the value.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string_view>

#include "credential_forms.hpp"
#include "credential_text.hpp"
#include "json_access.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/json_depth.hpp"
#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

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

// Whether `key` (quoted either way or not) opens a line or follows '{' or ',' (spaces between),
// then a colon: a YAML or JSON mapping's key, as (^|\n|[{,])\s*("key"|key)\s*: matches it.
bool hasMappingKey(std::string_view text, std::string_view key) {
    auto keyAt = [&](size_t at) {
        size_t end = at;
        // \"key\": a JSON document kept inside a JSON string (Argo CD's cluster config).
        if (text.compare(at, 2, "\\\"") == 0 && text.compare(at + 2, key.size(), key) == 0 &&
            text.compare(at + 2 + key.size(), 2, "\\\"") == 0) {
            end = at + key.size() + 4;
        } else if (text.compare(at, key.size(), key) == 0) {
            end = at + key.size();
        } else if (at < text.size() && (text[at] == '"' || text[at] == '\'') &&
                   text.compare(at + 1, key.size(), key) == 0 &&
                   at + 1 + key.size() < text.size() && text[at + 1 + key.size()] == text[at]) {
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
        // A "\n" escape is a line break too: a kubeconfig kept as a JSON string (Terraform).
        if (c == '\n' || c == '{' || c == ',' || (c == 'n' && i > 0 && text[i - 1] == '\\'))
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
            if (text.compare(end, 2, "\\\"") == 0)
                end += 2;
            else if (end < text.size() && (text[end] == '"' || text[end] == '\''))
                ++end;
            while (end < text.size() && isSpace(text[end])) ++end;
            if (end < text.size() && text[end] == ':') return true;
        }
    }
    return false;
}

// An AWS access key id (AKIA, or ASIA for a session's), 20 characters standing alone: on
// EKS the IAM identity behind it may map to a cluster user.
bool hasAwsAccessKeyId(std::string_view text) {
    auto isKeyChar = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
    for (const std::string_view prefix : {"AKIA", "ASIA"})
        for (size_t at = text.find(prefix); at != std::string_view::npos;
             at = text.find(prefix, at + 1)) {
            if (at > 0 && isKeyChar(text[at - 1])) continue;
            size_t end = at + prefix.size();
            while (end < text.size() && end - at <= 20 && isKeyChar(text[end])) ++end;
            if (end - at == 20) return true;
        }
    return false;
}

// A bootstrap token, [a-z0-9]{6}\.[a-z0-9]{16} standing alone: the API server takes it when
// kube-system holds its Secret (kubeadm's join), and it is no JWT. Each '.' is looked at once.
std::string bootstrapTokenId(std::string_view text) {
    auto isTokenChar = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    auto before = [&](size_t dot) {  // token characters right before the dot
        size_t start = dot;
        while (start > 0 && isTokenChar(text[start - 1])) --start;
        return dot - start;
    };
    auto after = [&](size_t dot) {
        size_t end = dot + 1;
        while (end < text.size() && isTokenChar(text[end])) ++end;
        return end - dot - 1;
    };
    for (size_t dot = text.find('.'); dot != std::string_view::npos;
         dot = text.find('.', dot + 1)) {
        if (before(dot) != 6 || after(dot) != 16) continue;
        return std::string(text.substr(dot - 6, 6));
    }
    return "";
}

// A kubeconfig (YAML or JSON) whose users hold something that authenticates.
bool isKubeconfigWithCredentials(std::string_view value) {
    return hasMappingKey(value, "users") && hasMappingKey(value, "clusters") &&
           hasCredentialKey(value);
}

// A JWT or kubeconfig in `text` itself (no decoding).
CredentialShape shapeOfText(const std::string& value, const std::string& clusterIssuer) {
    CredentialShape shape;
    for (const auto payload : jwtPayloads(value)) {
        const json claims = jwtClaims(payload);
        if (!claims.is_object()) continue;
        shape = claimsShape(claims, clusterIssuer);
        if (shape.verdict == Verdict::Fail) return shape;
    }
    // A token's claims without its header (a token split over values, F3 of attack 53).
    if (shape.verdict == Verdict::Pass) shape = tokenPartShape(value, clusterIssuer);
    if (shape.verdict == Verdict::Fail) return shape;
    if (shape.verdict == Verdict::Pass && isKubeconfigWithCredentials(value))
        return {Verdict::Fail, "a kubeconfig with a user's credentials"};
    if (shape.verdict == Verdict::Pass)
        if (const std::string id = bootstrapTokenId(value); !id.empty())
            return {Verdict::Fail, fmt::format("a bootstrap token (id {}): kubeadm's API server "
                                               "accepts it for node joins",
                                               id)};
    if (shape.verdict == Verdict::Pass && hasAwsAccessKeyId(value))
        return {Verdict::Unproven,
                "an AWS access key id: whether its IAM identity maps to a user of this cluster "
                "(EKS) is not known"};
    return shape;
}

}  // namespace

std::vector<std::string> base64Decodings(std::string_view value) {
    static constexpr size_t kShortest = 24;
    auto isSymbol = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '/' ||
               c == '-' || c == '_';
    };
    std::vector<std::string> decodings;
    for (size_t at = 0; at < value.size();) {
        if (!isSymbol(value[at])) {
            ++at;
            continue;
        }
        std::string run;
        size_t end = at;
        while (end < value.size()) {
            const char c = value[end];
            if (isSymbol(c)) {
                run += c == '-' ? '+' : c == '_' ? '/' : c;
            } else if (c == '\n' || c == '\r') {
                // A wrapped line (base64 -w 76) goes on, indented too (a YAML block scalar).
                size_t next = end + 1;
                while (next < value.size() && (value[next] == ' ' || value[next] == '\t')) ++next;
                if (next == value.size() ||
                    !(isSymbol(value[next]) || value[next] == '\n' || value[next] == '\r'))
                    break;
                end = next;
                continue;
            } else {
                break;
            }
            ++end;
        }
        while (end < value.size() && value[end] == '=') ++end;
        at = end;
        if (run.size() < kShortest) continue;
        // A word after the block (the next YAML key) runs on into it: what decodes before it
        // still reads, so a lone symbol left over is dropped rather than failing the whole run.
        if (run.size() % 4 == 1) run.pop_back();
        while (run.size() % 4 != 0) run += '=';
        if (auto decoded = kube::base64Decode(run)) decodings.push_back(std::move(*decoded));
    }
    return decodings;
}

std::vector<std::string> hexDecodings(std::string_view value) {
    static constexpr size_t kShortest = 40;  // a bootstrap token is 46
    auto digit = [](char c) {
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
    };
    std::vector<std::string> decodings;
    for (size_t at = 0; at < value.size();) {
        size_t end = at;
        while (end < value.size() && digit(value[end]) >= 0) ++end;
        if (end - at >= kShortest) {
            // An odd run is read from whichever of its first two digits starts text: a label's
            // tag ("h0" before a hostname's hex) is one digit the pod drops (attack 54, T1).
            auto printable = [&](size_t from) {
                int count = 0;
                for (size_t i = from; i + 1 < end && i < from + 64; i += 2) {
                    const int byte = digit(value[i]) * 16 + digit(value[i + 1]);
                    count += byte >= 0x20 && byte < 0x7f ? 1 : 0;
                }
                return count;
            };
            const size_t from =
                (end - at) % 2 == 1 && printable(at + 1) > printable(at) ? at + 1 : at;
            std::string bytes;
            for (size_t i = from; i + 1 < end; i += 2)
                bytes += static_cast<char>(digit(value[i]) * 16 + digit(value[i + 1]));
            decodings.push_back(std::move(bytes));
        }
        at = end == at ? at + 1 : end;
    }
    return decodings;
}

std::vector<std::string> decimalDecodings(std::string_view value, size_t& unread, size_t& budget) {
    static constexpr size_t kShortest = 40;
    std::vector<std::string> decodings;
    for (size_t at = 0; at < value.size();) {
        size_t end = at;
        while (end < value.size() && value[end] >= '0' && value[end] <= '9') ++end;
        const size_t length = end - at;
        const size_t work = std::max(length, length * length / 512);
        if (length > kLongestDecimalRun || (length >= kShortest && work > budget)) {
            ++unread;
        } else if (length >= kShortest) {
            budget -= work;
            // The number in base 2^32, least significant word first, nine digits at a time.
            std::vector<uint32_t> words;
            for (size_t chunk = at; chunk < end; chunk += 9) {
                const size_t digits = std::min<size_t>(9, end - chunk);
                uint64_t scale = 1, carry = 0;
                for (size_t i = 0; i < digits; ++i) {
                    scale *= 10;
                    carry = carry * 10 + static_cast<uint64_t>(value[chunk + i] - '0');
                }
                for (auto& word : words) {
                    const uint64_t next = static_cast<uint64_t>(word) * scale + carry;
                    word = static_cast<uint32_t>(next);
                    carry = next >> 32;
                }
                if (carry != 0) words.push_back(static_cast<uint32_t>(carry));
            }
            std::string bytes;
            for (auto word = words.rbegin(); word != words.rend(); ++word)
                for (int shift = 24; shift >= 0; shift -= 8)
                    if (const auto byte = static_cast<char>((*word >> shift) & 0xff);
                        !bytes.empty() || byte != 0)
                        bytes += byte;
            decodings.push_back(std::move(bytes));
        }
        at = end == at ? at + 1 : end;
    }
    return decodings;
}

std::vector<std::string> base32Decodings(std::string_view value) {
    static constexpr size_t kShortest = 40;
    // RFC 4648's alphabet, upper or lower case (a run is one or the other), '=' padding after.
    auto symbol = [](char c, bool upper) {
        if (c >= '2' && c <= '7') return c - '2' + 26;
        if (upper && c >= 'A' && c <= 'Z') return c - 'A';
        if (!upper && c >= 'a' && c <= 'z') return c - 'a';
        return -1;
    };
    std::vector<std::string> decodings;
    for (size_t at = 0; at < value.size();) {
        size_t end = at;
        bool upper = true;
        while (end < value.size() && symbol(value[end], upper) >= 0) ++end;
        if (end == at) {
            upper = false;
            while (end < value.size() && symbol(value[end], upper) >= 0) ++end;
        }
        auto decode = [&](size_t until) {
            std::string bytes;
            uint32_t bits = 0;
            int held = 0;
            for (size_t i = at; i < until; ++i) {
                bits = (bits << 5) | static_cast<uint32_t>(symbol(value[i], upper));
                if ((held += 5) >= 8) bytes += static_cast<char>((bits >> (held -= 8)) & 0xFF);
            }
            return bytes;
        };
        // Only a run whose start decodes to text (a token, a kubeconfig): a long run of capitals
        // that is none (1 MiB of 'A' inflated, review 44) costs nothing more than this look.
        if (end - at >= kShortest) {
            const std::string start = decode(at + kShortest);
            const bool text = std::all_of(start.begin(), start.end(), [](char c) {
                const auto byte = static_cast<unsigned char>(c);
                return (byte >= 0x20 && byte < 0x7f) || byte == '\n' || byte == '\t';
            });
            if (text) decodings.push_back(decode(end));
        }
        at = end == at ? at + 1 : end;
    }
    return decodings;
}

CredentialShape credentialShape(const std::string& value, const std::string& clusterIssuer) {
    size_t alone = kInflatedPerValue;
    return credentialShape(value, clusterIssuer, alone);
}

CredentialShape credentialShape(const std::string& value, const std::string& clusterIssuer,
                                size_t& inflateBudget) {
    CredentialShape worst;
    bool partial = false;
    forEachForm(
        value,
        [&](const Decoded& form) {
            partial = partial || form.partial;
            const std::string& encoding = form.encoding;
            CredentialShape shape = shapeOfText(form.bytes, clusterIssuer);
            if (shape.verdict == Verdict::Pass ||
                worstOf(worst.verdict, shape.verdict) == worst.verdict)
                return true;
            if (!encoding.empty()) shape.what += ", " + encoding;
            worst = std::move(shape);
            return worst.verdict != Verdict::Fail;
        },
        inflateBudget);
    if (partial && worst.verdict == Verdict::Pass)
        return {Verdict::Unproven,
                fmt::format("a zstd or lz4 stream, or a compressed stream (gzip, xz, lzma, bzip2, "
                            "zlib) that is damaged, cut short, nested past {} layers or inflates "
                            "past {} MiB, or streams past {} MiB a value or {} MiB in all, or text "
                            "still encoded past {} base64 or hex layers: what lies past that is "
                            "not read",
                            kGzipLayers, kLongestInflated >> 20, kInflatedPerValue >> 20,
                            kInflatedPerPod >> 20, kTextLayers)};
    return worst;
}

}  // namespace rossoctl::verify
