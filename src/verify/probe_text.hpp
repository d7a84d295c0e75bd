#pragma once
// Reading what a probe printed: marker lines, the last line for evidence (made safe for a
// terminal: the pod wrote it), and the common "unproven" findings.
#include <fmt/format.h>

#include <optional>
#include <sstream>
#include <string>

#include "rossoctl/ui/terminal_text.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify::probe_text {

inline constexpr const char* kScriptName = "rossoctl-probe";  // $0 of every probe script

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Trailing blanks and CRs off, control characters escaped, at most 200 bytes.
inline std::string cleanLine(std::string line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.size() > 200) line = line.substr(0, 200) + "...";
    return ui::escapeForTerminal(line);
}

// The value after "KEY=" on the first line starting with it.
inline std::optional<std::string> marker(const std::string& text, const std::string& key) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
    return std::nullopt;
}

// The last non-empty line of a stream that is not a marker, for evidence.
inline std::string lastLine(const std::string& text) {
    std::istringstream lines(text);
    std::string last;
    for (std::string line; std::getline(lines, line);) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (!line.empty() && line.rfind("rossoctl-", 0) != 0) last = line;
    }
    return cleanLine(last);
}

// 268435456 as "256Mi", as a limit is written.
inline std::string formatBytes(long long bytes) {
    constexpr long long kMi = 1024LL * 1024;
    if (bytes % (1024 * kMi) == 0) return fmt::format("{}Gi", bytes / (1024 * kMi));
    if (bytes % kMi == 0) return fmt::format("{}Mi", bytes / kMi);
    return fmt::format("{} bytes", bytes);
}

inline Finding unproven(std::string why, std::string probe = {}) {
    Finding finding;
    finding.verdict = Verdict::Unproven;
    finding.evidence.push_back(std::move(why));
    finding.probe = std::move(probe);
    return finding;
}

inline Finding notStarted(const ProbeOutput& output, const std::string& what) {
    return unproven(
        fmt::format("could not run {} in the container ({}): live part unproven", what,
                    output.failure.empty() ? "no reason given" : cleanLine(output.failure)));
}

}  // namespace rossoctl::verify::probe_text
