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

// visit(value, 0), then each decoding (1) and each of theirs (2), until visit returns false.
template <typename Visit>
void forEachForm(const std::string& value, Visit&& visit) {
    if (!visit(value, 0)) return;
    for (const auto& once : base64Decodings(value)) {
        if (!visit(once, 1)) return;
        for (const auto& twice : base64Decodings(once))
            if (!visit(twice, 2)) return;
    }
}

}  // namespace rossoctl::verify
