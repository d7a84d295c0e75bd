#pragma once
// Standard base64 (RFC 4648) as kubeconfig *-data fields and Basic auth use it.
#include <optional>
#include <string>
#include <string_view>

namespace rossoctl::kube {

std::string base64Encode(std::string_view bytes);
// Ignores whitespace and accepts missing padding; nullopt on any other invalid input.
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace rossoctl::kube
