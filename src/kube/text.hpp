#pragma once
// Small text helpers shared by the kube layer's sources (not part of its interface).
#include <string>

namespace rossoctl::kube::text {

inline std::string trimmed(const std::string& text) {
    const char* space = " \t\r\n";
    auto begin = text.find_first_not_of(space);
    if (begin == std::string::npos) return {};
    return text.substr(begin, text.find_last_not_of(space) - begin + 1);
}

inline std::string inQuotes(const std::string& text) {
    return "\"" + text + "\"";
}

}  // namespace rossoctl::kube::text
