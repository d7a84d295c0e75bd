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

// What runs of hex digits (48 or more, an even number) in `value` decode to.
std::vector<std::string> hexDecodings(std::string_view value);

// A form of a value: the bytes, and the encodings taken off to reach them ("" for the value).
struct Decoded {
    std::string bytes;
    std::string encoding;  // "base64-encoded", "hex-encoded", "base64-encoded twice", ...
};
std::vector<Decoded> decodings(std::string_view value, const std::string& outer);

// visit(value, 0, ""), then each decoding (1) and each of theirs (2), until visit returns false.
template <typename Visit>
void forEachForm(const std::string& value, Visit&& visit) {
    if (!visit(value, 0, std::string())) return;
    for (const auto& once : decodings(value, "")) {
        if (!visit(once.bytes, 1, once.encoding)) return;
        for (const auto& twice : decodings(once.bytes, once.encoding))
            if (!visit(twice.bytes, 2, twice.encoding)) return;
    }
}

}  // namespace rossoctl::verify
