// What verify prints from the pod's spec (mount paths, names, keys) without a credential in it
// (attack 54, X1): a token verify did not recognise as one must not reach a CI log either.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>
#include <vector>

#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

namespace {

// The characters a token, its parts and its encodings are written in; anything else ('/', ' ',
// ',', ':') separates pieces.
bool runChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '+' ||
           c == '=' || c == '.' || c == '%' || c == '~';
}

bool looksLikeCredential(const std::string& text) {
    return credentialShape(text, "").verdict != Verdict::Pass;
}

// Each run of `text`, as [begin, end).
std::vector<std::pair<size_t, size_t>> runsOf(std::string_view text) {
    std::vector<std::pair<size_t, size_t>> runs;
    for (size_t at = 0; at < text.size();) {
        size_t end = at;
        while (end < text.size() && runChar(text[end])) ++end;
        if (end > at) runs.emplace_back(at, end);
        at = end == at ? at + 1 : end;
    }
    return runs;
}

}  // namespace

std::string redactedCredentialRuns(std::string_view text) {
    static constexpr size_t kShortest = 16;  // no credential is shorter; a name mostly is
    std::string out;
    size_t copied = 0;
    for (const auto& [begin, end] : runsOf(text)) {
        if (end - begin < kShortest) continue;
        if (!looksLikeCredential(std::string(text.substr(begin, end - begin)))) continue;
        out.append(text.substr(copied, begin - copied));
        out += kRedactedCredential;
        copied = end;
    }
    out.append(text.substr(copied));
    return out;
}

std::string redactedCredentials(std::string_view text) {
    static constexpr size_t kPiece = 8;  // a tag ("tmp", "h0", "1.") stays, a part goes
    const auto runs = runsOf(text);
    std::string bare, dotted;
    for (const auto& [begin, end] : runs) {
        bare.append(text.substr(begin, end - begin));
        dotted += (dotted.empty() ? "" : ".") + std::string(text.substr(begin, end - begin));
    }
    if (runs.size() > 1 ? looksLikeCredential(std::string(text)) || looksLikeCredential(bare) ||
                              looksLikeCredential(dotted)
                        : looksLikeCredential(std::string(text))) {
        // Pieces of a token joined: every piece from the first long one to the last goes, so
        // no part (a signature's, alone unrecognisable) is left.
        size_t first = text.size(), last = 0;
        for (const auto& [begin, end] : runs)
            if (end - begin >= kPiece) first = std::min(first, begin), last = end;
        if (first >= last) return kRedactedCredential;
        return std::string(text.substr(0, first)) + kRedactedCredential +
               std::string(text.substr(last));
    }
    return redactedCredentialRuns(text);
}

std::string redactedWithin(std::string text, std::vector<std::string> userStrings) {
    static constexpr size_t kShortest = 16;
    // The longest first: a mount path holds its parent's.
    std::sort(userStrings.begin(), userStrings.end(),
              [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const auto& user : userStrings) {
        if (user.size() < kShortest || text.find(user) == std::string::npos) continue;
        const std::string redacted = redactedCredentials(user);
        if (redacted == user) continue;
        for (size_t at = text.find(user); at != std::string::npos;
             at = text.find(user, at + redacted.size()))
            text.replace(at, user.size(), redacted);
    }
    return redactedCredentialRuns(text);
}

}  // namespace rossoctl::verify
