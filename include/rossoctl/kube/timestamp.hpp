#pragma once
// RFC 3339 timestamps as the API writes them (2026-11-29T09:00:00Z).
#include <chrono>
#include <optional>
#include <string>

namespace rossoctl::kube {

std::optional<std::chrono::system_clock::time_point> parseTimestamp(const std::string& text);
std::string formatTimestamp(std::chrono::system_clock::time_point when);

}  // namespace rossoctl::kube
