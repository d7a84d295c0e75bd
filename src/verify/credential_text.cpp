// String escapes undone and token parts found by their claims (attack 53: F3, F4). Plain loops,
// linear in the text, as the scanners of credential_shape.cpp are.
#include "credential_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "json_access.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/json_depth.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

int hexDigit(char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

bool readHex(std::string_view text, size_t at, size_t digits, uint32_t& value) {
    if (at + digits > text.size()) return false;
    value = 0;
    for (size_t i = at; i < at + digits; ++i) {
        const int digit = hexDigit(text[i]);
        if (digit < 0) return false;
        value = value * 16 + static_cast<uint32_t>(digit);
    }
    return true;
}

// UTF-8 of a code point (a lone surrogate as its three bytes, as a lenient decoder keeps it).
void appendUtf8(std::string& out, uint32_t code) {
    auto byte = [&](uint32_t bits) { out += static_cast<char>(bits); };
    if (code < 0x80) {
        byte(code);
    } else if (code < 0x800) {
        byte(0xC0 | (code >> 6));
        byte(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        byte(0xE0 | (code >> 12));
        byte(0x80 | ((code >> 6) & 0x3F));
        byte(0x80 | (code & 0x3F));
    } else {
        byte(0xF0 | (code >> 18));
        byte(0x80 | ((code >> 12) & 0x3F));
        byte(0x80 | ((code >> 6) & 0x3F));
        byte(0x80 | (code & 0x3F));
    }
}

// The one-character escapes JSON and YAML share or add; each is no longer than what it undoes.
const char* singleEscape(char c) {
    switch (c) {
        case 'n':
            return "\n";
        case 't':
            return "\t";
        case 'r':
            return "\r";
        case 'b':
            return "\b";
        case 'f':
            return "\f";
        case 'a':
            return "\a";
        case 'v':
            return "\v";
        case 'e':
            return "\x1b";
        case '/':
            return "/";
        case '\\':
            return "\\";
        case '"':
            return "\"";
        case ' ':
            return " ";
        case '\t':
            return "\t";
        default:
            return nullptr;
    }
}

bool isTokenCharacter(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// Claims a JWT carries: who issued it or whom it names, and for when or whom it holds.
bool hasJwtClaims(const json& claims) {
    if (!claims.is_object()) return false;
    if (claims.contains("kubernetes.io") ||
        stringAt(claims, "sub").rfind("system:serviceaccount:", 0) == 0)
        return true;
    const bool names = claims.contains("iss") || claims.contains("sub");
    return names && (claims.contains("exp") || claims.contains("iat") || claims.contains("nbf") ||
                     claims.contains("aud"));
}

CredentialShape partShape(const json& claims, const std::string& clusterIssuer) {
    if (!hasJwtClaims(claims)) return {};
    CredentialShape shape = claimsShape(claims, clusterIssuer, "the claims of ");
    shape.what += " (a token's part: its header or signature may be elsewhere)";
    return shape;
}

// Whether "iss" is followed by this cluster's issuer as its value, at `at` ("iss" opens there).
bool namesIssuerAt(std::string_view text, size_t at, const std::string& issuer) {
    size_t end = at + 5;
    auto blanks = [&] {
        while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    };
    blanks();
    if (end >= text.size() || text[end] != ':') return false;
    ++end;
    blanks();
    return text.compare(end, 1, "\"") == 0 && text.compare(end + 1, issuer.size(), issuer) == 0 &&
           text.compare(end + 1 + issuer.size(), 1, "\"") == 0;
}

// The start of a service-account token's claims, cut anywhere after it (a payload split into
// parts, attack 54): `{"aud":` or another claim opening the text, another claim after it, and
// a name only such claims hold. A cut JSON object never parses, so this reads the text as it is.
CredentialShape claimsFragmentShape(std::string_view text, const std::string& clusterIssuer) {
    static constexpr std::string_view kClaims[] = {"aud", "exp", "iat", "iss",
                                                   "jti", "nbf", "sub", "kubernetes.io"};
    static constexpr std::string_view kMarkers[] = {"kubernetes.default.svc",
                                                    "system:serviceaccount:", "\"kubernetes.io\":"};
    for (size_t open = text.find("{\""); open != std::string_view::npos;
         open = text.find("{\"", open + 2)) {
        const std::string_view rest = text.substr(open + 2);
        const bool opensClaims =
            std::any_of(std::begin(kClaims), std::end(kClaims), [&](auto claim) {
                return rest.compare(0, claim.size(), claim) == 0 &&
                       rest.compare(claim.size(), 2, "\":") == 0;
            });
        if (!opensClaims) continue;
        // A second claim after it: `"iss": "https://kubernetes.default.svc` alone is a string.
        const bool twoClaims = std::any_of(std::begin(kClaims), std::end(kClaims), [&](auto claim) {
            for (size_t at = rest.find(",\""); at != std::string_view::npos;
                 at = rest.find(",\"", at + 2))
                if (rest.compare(at + 2, claim.size(), claim) == 0 &&
                    rest.compare(at + 2 + claim.size(), 2, "\":") == 0)
                    return true;
            return false;
        });
        const bool names =
            twoClaims &&
            (std::any_of(
                 std::begin(kMarkers), std::end(kMarkers),
                 [&](auto marker) { return rest.find(marker) != std::string_view::npos; }) ||
             (!clusterIssuer.empty() && rest.find(clusterIssuer) != std::string_view::npos));
        if (names)
            return {Verdict::Fail,
                    "the start of a Kubernetes service-account token's claims (a token's part: "
                    "the rest may be elsewhere)"};
        return {};  // the markers are searched to the text's end: once is enough
    }
    return {};
}

// A base64url run's longest prefix that decodes (a multiple of 4), decoded: a fragment cut
// anywhere, or run on into the signature (the dots left out).
std::string decodedPrefix(std::string_view run) {
    std::string standard(run.substr(0, run.size() - run.size() % 4));
    std::replace(standard.begin(), standard.end(), '-', '+');
    std::replace(standard.begin(), standard.end(), '_', '/');
    return kube::base64Decode(standard).value_or("");
}

}  // namespace

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

std::optional<std::string> unescaped(std::string_view text) {
    if (text.find('\\') == std::string_view::npos && text.find('%') == std::string_view::npos)
        return std::nullopt;
    std::string out;
    out.reserve(text.size());
    bool changed = false;
    for (size_t i = 0; i < text.size();) {
        const char c = text[i];
        uint32_t code = 0, low = 0;
        if (c == '%' && readHex(text, i + 1, 2, code)) {  // a URL's %2E
            out += static_cast<char>(code);
            i += 3;
        } else if (c != '\\' || i + 1 == text.size()) {
            out += c;
            ++i;
            continue;
        } else if (const char e = text[i + 1]; e == 'u' && readHex(text, i + 2, 4, code)) {
            i += 6;
            if (code >= 0xD800 && code < 0xDC00 && text.compare(i, 2, "\\u") == 0 &&
                readHex(text, i + 2, 4, low) && low >= 0xDC00 && low < 0xE000) {
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                i += 6;
            }
            appendUtf8(out, code);
        } else if (e == 'U' && readHex(text, i + 2, 8, code) && code <= 0x10FFFF) {
            appendUtf8(out, code);
            i += 10;
        } else if (e == 'x' && readHex(text, i + 2, 2, code)) {
            appendUtf8(out, code);
            i += 4;
        } else if (e == '\n' || e == '\r') {
            // YAML's escaped line break joins the lines, the next one's indentation dropped.
            i += 2;
            if (e == '\r' && i < text.size() && text[i] == '\n') ++i;
            while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        } else if (const char* plain = singleEscape(e)) {
            out += plain;
            i += 2;
        } else if (e == '0') {
            out += '\0';
            i += 2;
        } else {
            out += c;
            ++i;
            continue;
        }
        changed = true;
    }
    if (!changed) return std::nullopt;
    return out;
}

CredentialShape claimsShape(const json& claims, const std::string& clusterIssuer,
                            std::string_view prefix) {
    const std::string issuer = stringAt(claims, "iss");
    const std::string subject = stringAt(claims, "sub");
    if (!clusterIssuer.empty() && issuer == clusterIssuer)
        return {Verdict::Fail, fmt::format("{}a JWT issued by this cluster (iss {}, sub {})",
                                           prefix, issuer, subject.empty() ? "?" : subject)};
    if (claims.contains("kubernetes.io") || subject.rfind("system:serviceaccount:", 0) == 0 ||
        issuer == "kubernetes/serviceaccount")
        return {Verdict::Fail,
                fmt::format("{}a Kubernetes service-account token (iss {}, sub {})", prefix,
                            issuer.empty() ? "?" : issuer, subject.empty() ? "?" : subject)};
    return {Verdict::Unproven,
            fmt::format("{}a JWT of issuer {}: whether this cluster accepts it (OIDC) is not known",
                        prefix, issuer.empty() ? "(none)" : issuer)};
}

CredentialShape tokenPartShape(std::string_view text, const std::string& clusterIssuer) {
    CredentialShape worst;
    auto note = [&](CredentialShape shape) {
        if (worstOf(worst.verdict, shape.verdict) != worst.verdict) worst = std::move(shape);
    };
    // Each base64url run from an "eyJ" on, decoded once: the runs do not overlap.
    for (size_t at = text.find("eyJ");
         at != std::string_view::npos && worst.verdict != Verdict::Fail;
         at = text.find("eyJ", at)) {
        size_t end = at + 3;
        while (end < text.size() && isTokenCharacter(text[end])) ++end;
        // A header run straight into its claims (the dot left out) decodes to neither: the next
        // few "eyJ" inside the run are tried too, a constant number of decodings per run.
        for (size_t from = at, tries = 0; from < end && tries < 4 && worst.verdict != Verdict::Fail;
             from = text.substr(0, end).find("eyJ", from + 3), ++tries)
            if (end - from > 8) {
                const std::string_view run = text.substr(from, end - from);
                const json claims = jwtClaims(run);
                if (claims.is_object())
                    note(partShape(claims, clusterIssuer));
                else
                    note(claimsFragmentShape(decodedPrefix(run), clusterIssuer));
            }
        at = end;
    }
    // A JSON object of claims, the text's own or inside it from its first '{' to its last '}'.
    const size_t open = text.find('{'), close = text.rfind('}');
    if (worst.verdict != Verdict::Fail && open != std::string_view::npos && close > open &&
        (text.find("\"iss\"") != std::string_view::npos ||
         text.find("\"sub\"") != std::string_view::npos)) {
        const std::string_view object = text.substr(open, close - open + 1);
        if (!kube::nestsDeeperThan(object))
            note(partShape(json::parse(object, nullptr, false), clusterIssuer));
    }
    // Claims cut short, written as they are (a base64 run decoded to them, or plain).
    if (worst.verdict != Verdict::Fail) note(claimsFragmentShape(text, clusterIssuer));
    // "iss": "<this cluster's issuer>" anywhere: claims of this cluster's tokens.
    if (worst.verdict != Verdict::Fail && !clusterIssuer.empty())
        for (size_t at = text.find("\"iss\""); at != std::string_view::npos;
             at = text.find("\"iss\"", at + 5))
            if (namesIssuerAt(text, at, clusterIssuer))
                return {Verdict::Fail,
                        fmt::format("JWT claims naming this cluster's issuer ({}): a token's part",
                                    clusterIssuer)};
    return worst;
}

}  // namespace rossoctl::verify
