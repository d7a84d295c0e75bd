#pragma once
// A value and what base64 runs in it decode to: shared by the shape checks and the key scan.
#include <string>
#include <string_view>
#include <vector>

namespace rossoctl::verify {

// What base64 runs of `value` decode to (24 characters or more; standard or URL alphabet, line
// breaks inside): a kubeconfig or token is often kept encoded (KUBECONFIG_B64), and an
// encoding must not hide it. Linear: the decoded runs are shorter than the value.
std::vector<std::string> base64Decodings(std::string_view value);

// What runs of hex digits (40 or more) in `value` decode to.
std::vector<std::string> hexDecodings(std::string_view value);

// A form of a value: the bytes, and the encodings taken off to reach them ("" for the value).
struct Decoded {
    std::string bytes;
    std::string encoding;  // "base64-encoded", "hex-encoded", "base64-encoded twice", ...
    bool partial = false;  // a gzip stream inflated past the bound: the rest is not read
};
// What a gzip stream (a Helm release, a .gz key) inflates to at most.
inline constexpr size_t kLongestInflated = 1024 * 1024;
std::vector<Decoded> decodings(std::string_view value, const std::string& outer);

// visit(the value), then each decoding and each of theirs, until visit returns false.
template <typename Visit>
void forEachForm(const std::string& value, Visit&& visit) {
    if (!visit(Decoded{value, "", false})) return;
    for (const auto& once : decodings(value, "")) {
        if (!visit(once)) return;
        for (const auto& twice : decodings(once.bytes, once.encoding))
            if (!visit(twice)) return;
    }
}

}  // namespace rossoctl::verify
