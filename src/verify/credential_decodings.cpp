// The layers a credential hides under and how each is taken off: encodings (credential_shape.cpp
// decodes the runs), compression (gzip, xz, lzma, bzip2, zlib, raw deflate) with a bound on what
// it gives, string escapes, reversal and letters rotated (attack 56 T3).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "credential_forms.hpp"
#include "credential_text.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/decompress.hpp"
#include "rossoctl/kube/gzip.hpp"

namespace rossoctl::verify {

namespace {

bool isLower(char c) {
    return c >= 'a' && c <= 'z';
}
bool isUpper(char c) {
    return c >= 'A' && c <= 'Z';
}
bool isTokenSymbol(char c) {
    return isLower(c) || isUpper(c) || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

// `text` with lower-case letters moved back by `lower` and upper-case ones by `upper`.
std::string rotatedBack(std::string_view text, int lower, int upper) {
    std::string out(text);
    for (char& c : out) {
        if (isLower(c)) c = static_cast<char>('a' + (c - 'a' + 26 - lower) % 26);
        if (isUpper(c)) c = static_cast<char>('A' + (c - 'A' + 26 - upper) % 26);
    }
    return out;
}

// Whether a base64url run opens with what a JWT's part opens with: `{"` and printable text.
bool opensJson(const std::string& run) {
    if (run.size() < 12) return false;
    std::string standard = run.substr(0, 12);
    std::replace(standard.begin(), standard.end(), '-', '+');
    std::replace(standard.begin(), standard.end(), '_', '/');
    const auto decoded = kube::base64Decode(standard);
    return decoded && decoded->compare(0, 2, "{\"") == 0 &&
           std::all_of(decoded->begin(), decoded->end(),
                       [](char c) { return c >= 0x20 && c < 0x7f; });
}

// What rotated token runs give back: a run of the JWT alphabet opening with three letters that a
// rotation of each case (rot13, any Caesar shift, the cases apart as tr allows) takes from
// "eyJ", and that then opens as a JWT's JSON does. A run is read from there up to 64 KiB; past
// kMostRotations such runs a value is partial.
constexpr size_t kMostRotations = 64;
constexpr size_t kLongestRotatedRun = 64 * 1024;

void addRotatedRuns(std::string_view value, const std::string& outer, std::vector<Decoded>& all) {
    size_t found = 0;
    for (size_t at = 0; at + 2 < value.size(); ++at) {
        const char e = value[at], y = value[at + 1], j = value[at + 2];
        if (!isLower(e) || !isLower(y) || !isUpper(j) || (y - e + 26) % 26 != 'y' - 'e') continue;
        const int lower = (e - 'e' + 26) % 26, upper = (j - 'J' + 26) % 26;
        if (lower == 0 && upper == 0) continue;  // "eyJ" itself: read as it is
        size_t end = at;
        while (end < value.size() && end - at < kLongestRotatedRun && isTokenSymbol(value[end]))
            ++end;
        std::string run = rotatedBack(value.substr(at, end - at), lower, upper);
        if (!opensJson(run)) continue;
        if (++found > kMostRotations) {
            all.push_back({"", layerName(outer, "with letters rotated"), /*partial=*/true});
            return;
        }
        const std::string how =
            lower == upper
                ? fmt::format("with letters rotated by {}", lower)
                : fmt::format("with letters rotated (lower case by {}, upper case by {})", lower,
                              upper);
        all.push_back({std::move(run), layerName(outer, how.c_str())});
        at += 2;  // a token's claims start a run of their own: rotated alike, read again
    }
}

// rot13 of a kubeconfig: its "users:" and "clusters:" keys are there rotated.
void addRot13Kubeconfig(std::string_view value, const std::string& outer,
                        std::vector<Decoded>& all) {
    if (value.find("hfref") == std::string_view::npos ||
        value.find("pyhfgref") == std::string_view::npos)
        return;
    all.push_back({rotatedBack(value, 13, 13), layerName(outer, "with letters rotated by 13")});
}

// The compressed formats verify does not decode, by their magic numbers.
struct Unread {
    std::string_view magic;
    const char* name;
};
constexpr std::array<Unread, 2> kUnreadFormats{
    {{"\x28\xb5\x2f\xfd", "zstd-compressed"}, {"\x04\x22\x4d\x18", "lz4-compressed"}}};

// What raw deflate, which has no header, is read to: a token or kubeconfig is far shorter.
constexpr size_t kLongestRawInflated = 256 * 1024;

// One compressed layer off `value`, from `budget`: a form, a partial one past the layers or the
// budget, or nothing when it is no compressed stream.
void addDecompressed(std::string_view value, const std::string& outer, bool inflate, size_t& budget,
                     std::vector<Decoded>& all) {
    for (const auto& unread : kUnreadFormats)
        if (value.substr(0, unread.magic.size()) == unread.magic) {
            all.push_back({"", layerName(outer, unread.name), /*partial=*/true, /*inflated=*/true});
            return;
        }
    const kube::Compression format = kube::compressionOf(value);
    const bool gzip = kube::isGzip(value), zlib = kube::isZlib(value);
    const bool marked = gzip || zlib || format != kube::Compression::None;
    // Raw deflate has no header: binary bytes that are nothing else are tried.
    const bool maybeDeflate = !marked && value.size() >= 16 && !readsOn(std::string(value));
    if (!marked && !maybeDeflate) return;
    const std::string name = gzip   ? "gzip-compressed"
                             : zlib ? "zlib-compressed"
                             : !marked
                                 ? "deflate-compressed"
                                 : fmt::format("{}-compressed", kube::compressionName(format));
    // A layer past those read, or past the budget: unread, so never a pass. Bytes that may be
    // raw deflate are no known stream: left as they are.
    // Past the pod's budget, bytes that may be raw deflate are not told from a token either
    // (review 68 H4: values that drained it hid a raw-deflated token after them).
    const size_t bound = marked ? kLongestInflated : kLongestRawInflated;
    if (!inflate || budget == 0) {
        if (marked || inflate)
            all.push_back(
                {"", layerName(outer, name.c_str()), /*partial=*/true, /*inflated=*/true});
        return;
    }
    const bool budgetShort = budget < bound;
    const size_t most = std::min(bound, budget);
    std::optional<kube::Inflated> out;
    try {
        out = gzip     ? kube::gunzip(value, most)
              : zlib   ? kube::inflateZlib(value, most)
              : marked ? std::optional(kube::decompress(value, format, most))
                       : kube::inflateRaw(value, most);
    } catch (const Error&) {
        // Its library is not installed: the stream is not read.
        all.push_back({"", layerName(outer, name.c_str()), /*partial=*/true, /*inflated=*/true});
        return;
    }
    if (!out) return;
    budget -= out->bytes.size();  // charged whether or not it reads as anything: the work done
    // Binary bytes inflate as raw deflate into garbage, long and printable at times (0xAA...):
    // what they give is read, but a raw stream cut short or past the bound is not told from it.
    if (!marked && out->truncated && !readsOn(out->bytes)) {
        if (budgetShort)
            all.push_back(
                {"", layerName(outer, name.c_str()), /*partial=*/true, /*inflated=*/true});
        return;
    }
    all.push_back({std::move(out->bytes), layerName(outer, name.c_str()),
                   (marked || budgetShort) && out->truncated,
                   /*inflated=*/true});
}

}  // namespace

std::string layerName(const std::string& outer, const char* encoding) {
    if (outer.empty()) return encoding;
    if (outer == encoding) return outer + " twice";
    return outer + ", then " + encoding;
}

bool readsOn(const std::string& bytes) {
    static constexpr size_t kShortestText = 16;
    if (kube::isGzip(bytes) || kube::isZlib(bytes) ||
        kube::compressionOf(bytes) != kube::Compression::None)
        return true;
    if (bytes.size() < kShortestText) return false;
    const auto printable = std::count_if(bytes.begin(), bytes.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return (byte >= 0x20 && byte < 0x7f) || byte == '\n' || byte == '\r' || byte == '\t';
    });
    return static_cast<size_t>(printable) * 4 >= bytes.size() * 3;  // 75%
}

std::vector<Decoded> decodings(std::string_view value, const std::string& outer, bool decode,
                               bool inflate, bool unescape, size_t& inflateBudget) {
    auto named = [&](const char* encoding) { return layerName(outer, encoding); };
    std::vector<Decoded> all;
    if (unescape)
        if (auto plain = unescaped(value))
            all.push_back({std::move(*plain), named("written with string escapes"),
                           /*partial=*/false, /*inflated=*/false, /*unescaped=*/true});
    if (decode) {
        for (auto& bytes : base64Decodings(value))
            all.push_back({std::move(bytes), named("base64-encoded")});
        for (auto& bytes : hexDecodings(value))
            all.push_back({std::move(bytes), named("hex-encoded")});
        for (auto& bytes : base32Decodings(value))
            all.push_back({std::move(bytes), named("base32-encoded")});
        size_t unread = 0;
        for (auto& bytes : decimalDecodings(value, unread, inflateBudget))
            all.push_back({std::move(bytes), named("written as one decimal number")});
        if (unread > 0)
            all.push_back({"", named("written as one decimal number too long to convert"),
                           /*partial=*/true});
        // Reversed (attack 54, T3): only text a reversed token's header ("eyJ" backwards) or a
        // reversed kubeconfig's key is in, so the cost stays with such values.
        if (value.find("Jye") != std::string_view::npos ||
            value.find(":sresu") != std::string_view::npos)
            all.push_back({std::string(value.rbegin(), value.rend()), named("reversed")});
        addRotatedRuns(value, outer, all);
        addRot13Kubeconfig(value, outer, all);
    } else {
        // Past the layers read, text that still decodes to text is unread, so never a pass.
        auto more = base64Decodings(value);
        for (auto& bytes : hexDecodings(value)) more.push_back(std::move(bytes));
        size_t unread = 0;
        for (auto& bytes : decimalDecodings(value, unread, inflateBudget))
            more.push_back(std::move(bytes));
        if (unread > 0 || std::any_of(more.begin(), more.end(), readsOn))
            all.push_back({"", named("encoded again"), /*partial=*/true, /*inflated=*/false});
    }
    addDecompressed(value, outer, inflate, inflateBudget, all);
    return all;
}

}  // namespace rossoctl::verify
