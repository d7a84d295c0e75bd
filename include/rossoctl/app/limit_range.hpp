#pragma once
// Whether a container's cpu/memory fit the namespace's LimitRanges, checked before writing:
// a pod the LimitRange refuses is never created, and the workload only says "not ready".
#include <nlohmann/json.hpp>
#include <string>

namespace rossoctl::app {

// What a container asking for cpu and memory (as request and limit) breaks in limitRanges (a
// LimitRangeList): "--cpu 10 is more than the most a container may have in namespace team1
// (max cpu 2, LimitRange sandbox-limits)"; empty when it fits.
std::string limitRangeViolation(const nlohmann::json& limitRanges, const std::string& ns,
                                const std::string& cpu, const std::string& memory);

}  // namespace rossoctl::app
