#pragma once
// A value and what base64 runs in it decode to: shared by the shape checks and the key scan.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rossoctl::verify {

// What base64 runs of `value` decode to (24 characters or more; standard or URL alphabet, line
// breaks inside): a kubeconfig or token is often kept encoded (KUBECONFIG_B64), and an
// encoding must not hide it. Linear: the decoded runs are shorter than the value.
std::vector<std::string> base64Decodings(std::string_view value);

// What runs of hex digits (40 or more) in `value` decode to (an odd run from both alignments).
std::vector<std::string> hexDecodings(std::string_view value);

// What base32 runs (RFC 4648, 40 symbols or more, upper or lower case) decode to.
std::vector<std::string> base32Decodings(std::string_view value);

// What runs of decimal digits (40 or more) decode to, each read as one number written out as its
// bytes (attack 65 T2: a token as Python's int.from_bytes, 1,623 digits). A run longer than
// kLongestDecimalRun is not converted (the work grows as its square) and counts in `unread`;
// so does one whose work (its length squared over 512, as bytes) `budget` has no room left for,
// the pod's inflation budget: MiBs of digits cost a pod no more than its inflation (review 67 L1).
inline constexpr size_t kLongestDecimalRun = 64 * 1024;
std::vector<std::string> decimalDecodings(std::string_view value, size_t& unread, size_t& budget);

// A form of a value: the bytes, and the encodings taken off to reach them ("" for the value).
struct Decoded {
    std::string bytes;
    std::string encoding;    // "base64-encoded", "hex-encoded", "reversed", "base64-encoded twice"
    bool partial = false;    // a compressed stream not read whole, or text encoded past the layers
    bool inflated = false;   // the last layer taken off was a compression (gzip, xz, ...)
    bool unescaped = false;  // the last layer taken off was string escapes
};
// What a compressed stream (a Helm release's gzip, a .xz key) decompresses to at most.
inline constexpr size_t kLongestInflated = 1024 * 1024;
// What all the compressed streams of one value give at most, in one walk of its forms: a value
// can hold hundreds of streams, and each form read is held while it is visited.
inline constexpr size_t kInflatedPerValue = 8 * 1024 * 1024;
// The decodings of `value` (credential_decodings.cpp): base64, base32 and hex runs, reversal
// and letters rotated when `decode`; its gzip, xz, lzma, bzip2, zlib or raw deflate stream when
// `inflate` (taking what it gives from `inflateBudget`; past it, or not `inflate`, a partial
// form, as is a zstd or lz4 stream); the text with its string escapes undone when `unescape`.
std::vector<Decoded> decodings(std::string_view value, const std::string& outer, bool decode,
                               bool inflate, bool unescape, size_t& inflateBudget);

// How a form reached by taking `encoding` off one reached by `outer` is named.
std::string layerName(const std::string& outer, const char* encoding);

// Bytes a further layer could hide a credential in: mostly printable text (a kubeconfig, a
// token, yet another encoding) or a compressed stream. Random bytes (a key encoded once) are
// neither: about 37% of them print, so three in four is a bar binary never reaches and padding a
// kubeconfig with a tenth of non-text bytes does not slip under.
bool readsOn(const std::string& bytes);

// visit(the value), then its decodings depth-first, until visit returns false: three base64 or
// hex layers, and up to two compressed layers besides, which do not count against those (a Helm
// release is base64, then gzip, then JSON whose Secret holds base64, maybe of base64); a
// compressed layer past those, or text past the third that still decodes to text or a compressed
// stream, is a partial form. Two layers of string escapes besides (a kubeconfig kept as a JSON
// string in JSON): they only shorten the text, and past them nothing is partial, as escaped text
// reads as it is.
inline constexpr int kTextLayers = 3;  // base64 or hex: a Helm release's chart Secret's _B64 value
inline constexpr int kGzipLayers = 2;
inline constexpr int kEscapeLayers = 2;
// What the gzip streams of all the values one walk of a pod's values reads inflate to at most:
// a small value can inflate its whole 8 MiB, and a pod reads 256 Secrets.
inline constexpr size_t kInflatedPerPod = 32 * 1024 * 1024;

// Numbers a writer chooses and the agent reads back (attack 58 T9, T10, T7; review 58 T10b, T11,
// T12): a few are settings; more are a channel for a credential in an encoding of the writer's
// choosing that no shape search reads. A token's claims (kid, jti, uid, times) can be written
// down openly as shapeless values; its signature cannot be guessed, and the smallest is ES256's
// 64 bytes (attack 59 T1: exactly 64 bytes of IPv6 aliases carried one). So past 48 bytes they
// are unproven rather than searched.
inline constexpr size_t kMostNumberBytes = 48;

// forEachForm, taking what it inflates from `allValues` too (and at most kInflatedPerValue).
template <typename Visit>
void forEachForm(const std::string& value, Visit&& visit, size_t& allValues) {
    constexpr int kEncodings = kTextLayers, kInflations = kGzipLayers;
    size_t budget = std::min(kInflatedPerValue, allValues);
    const size_t given = budget;
    auto walk = [&](auto& self, const Decoded& form, int encodings, int inflations,
                    int escapes) -> bool {
        if (!visit(form)) return false;
        const bool decode = encodings < kEncodings, inflate = inflations < kInflations;
        for (const auto& next :
             decodings(form.bytes, form.encoding, decode, inflate, escapes < kEscapeLayers, budget))
            if (!self(self, next, encodings + (next.inflated || next.unescaped ? 0 : 1),
                      inflations + (next.inflated ? 1 : 0), escapes + (next.unescaped ? 1 : 0)))
                return false;
        return true;
    };
    walk(walk, Decoded{value, "", false, false}, 0, 0, 0);
    allValues -= given - budget;
}

template <typename Visit>
void forEachForm(const std::string& value, Visit&& visit) {
    size_t alone = kInflatedPerValue;
    forEachForm(value, std::forward<Visit>(visit), alone);
}

}  // namespace rossoctl::verify
