// The live halves of the four checks: the commands run in the pod (POSIX sh scripts taking
// their inputs as positional arguments, so nothing is ever quoted into them) and the parsers
// that turn what they printed into a verdict with evidence.
#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "probe_text.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace probe_text;

namespace {

std::string formatBytes(long long bytes) {
    constexpr long long kMi = 1024LL * 1024;
    if (bytes % (1024 * kMi) == 0) return fmt::format("{}Gi", bytes / (1024 * kMi));
    if (bytes % kMi == 0) return fmt::format("{}Mi", bytes / kMi);
    return fmt::format("{} bytes", bytes);
}

}  // namespace

std::vector<std::string> tokenProbeCommand() {
    // The token itself never leaves the pod: cat writes to /dev/null, only its error shows.
    // cat must be a tool that runs: "command -v" first, then its own exit status.
    return {"sh", "-c",
            "command -v cat >/dev/null 2>&1 || { echo rossoctl-token=no-cat; exit 127; }\n"
            "cat \"$1\" >/dev/null\necho \"rossoctl-token-exit=$?\"",
            kScriptName, kTokenPath};
}

Finding tokenLive(const ProbeOutput& output) {
    if (!output.started) return notStarted(output, "sh");
    if (output.timedOut)
        return unproven("reading the token path ran out of time: live part unproven");
    const std::string error = lastLine(output.stderrText);
    const auto exitText = marker(output.stdoutText, "rossoctl-token-exit");
    if (marker(output.stdoutText, "rossoctl-token") == "no-cat" || !exitText ||
        output.exitCode == 126 || output.exitCode == 127 || *exitText == "126" ||
        *exitText == "127" || contains(output.stderrText, "not found"))
        return unproven(
            fmt::format("cat is not runnable in the image ({}): live part unproven",
                        error.empty() ? "exit " + std::to_string(output.exitCode) : error));
    Finding finding;
    // Only cat's own message about the token path counts.
    // (fmt, not operator+: GCC 12 warns falsely on string + literal here.)
    const bool aboutPath =
        contains(output.stderrText, fmt::format("cat: {}:", kTokenPath)) ||
        contains(output.stderrText, fmt::format("cat: can't open '{}'", kTokenPath));
    if (*exitText == "0") {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(fmt::format("cat {} succeeded: a token is mounted", kTokenPath));
    } else if (aboutPath && (contains(output.stderrText, "No such file") ||
                             contains(output.stderrText, "Not a directory"))) {
        finding.verdict = Verdict::Pass;
        finding.evidence.push_back(fmt::format("cat exited {}: {}", *exitText, error));
    } else if (aboutPath && contains(output.stderrText, "Permission denied")) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(fmt::format(
            "{} exists but this user may not read it ({}): a token is mounted", kTokenPath, error));
    } else {
        return unproven(fmt::format("cat {} exited {} ({}): cannot tell whether a token exists",
                                    kTokenPath, *exitText, error.empty() ? "no message" : error));
    }
    return finding;
}

std::vector<std::string> cgroupProbeCommand() {
    return {"sh", "-c",
            "for f in /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes; do\n"
            "  if [ -r \"$f\" ]; then echo \"rossoctl-file=$f\"; "
            "echo \"rossoctl-value=$(cat \"$f\")\"; exit 0; fi\n"
            "done\n"
            "echo rossoctl-file=none",
            kScriptName};
}

std::optional<long long> memoryLimitBytes(const json& container) {
    if (!container.is_object() || !container.contains("resources")) return std::nullopt;
    const json limits = container["resources"].value("limits", json::object());
    if (!limits.contains("memory") || !limits["memory"].is_string()) return std::nullopt;
    try {
        return std::llround(model::parseQuantity(limits["memory"].get<std::string>(), "memory"));
    } catch (const Error&) {
        return std::nullopt;
    }
}

Finding limitsLive(const ProbeOutput& output, std::optional<long long> expectedBytes) {
    if (!output.started) return notStarted(output, "sh");
    const std::string file = marker(output.stdoutText, "rossoctl-file").value_or("none");
    if (file == "none")
        return unproven(
            "neither /sys/fs/cgroup/memory.max (cgroup v2) nor "
            "/sys/fs/cgroup/memory/memory.limit_in_bytes (v1) is readable in the container: "
            "the live part is unproven; the static limits stand alone");
    const std::string value = marker(output.stdoutText, "rossoctl-value").value_or("");
    Finding finding;
    finding.verdict = Verdict::Fail;
    // cgroup v1 reports "no limit" as a page-aligned LONG_MAX.
    constexpr long long kUnlimitedV1 = 0x7FFFFFFFFFFFF000LL;
    long long bytes = -1;
    try {
        if (value != "max") bytes = std::stoll(value);
    } catch (...) {
        return unproven(
            fmt::format("{} holds '{}', not a number: live part unproven", file, value));
    }
    if (bytes < 0 || bytes >= kUnlimitedV1) {
        finding.evidence.push_back(
            fmt::format("{} = {}: the cgroup has no memory limit", file, value));
    } else if (!expectedBytes) {
        finding.evidence.push_back(fmt::format("{} = {} but the container declares no memory limit",
                                               file, formatBytes(bytes)));
    } else if (std::llabs(bytes - *expectedBytes) < 4096) {
        // The kernel rounds a limit down to whole pages.
        finding.verdict = Verdict::Pass;
        finding.evidence.push_back(fmt::format("{} = {} ({}), the container's memory limit", file,
                                               bytes, formatBytes(bytes)));
    } else {
        finding.evidence.push_back(fmt::format("{} = {} but the container's memory limit is {}",
                                               file, formatBytes(bytes),
                                               formatBytes(*expectedBytes)));
    }
    return finding;
}

}  // namespace rossoctl::verify
