// The live halves of the four checks: the commands run in the pod (POSIX sh scripts taking
// their inputs as positional arguments, so nothing is ever quoted into them) and the parsers
// that turn what they printed into a verdict with evidence.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "json_access.hpp"
#include "probe_text.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace probe_text;

std::vector<std::string> tokenProbeCommand() {
    // The token itself never leaves the pod: the shell's own redirection opens it (no cat from
    // a path the pod may have written) and reads nothing; only the error shows.
    return {"/bin/sh", "-c",
            "if (: < \"$1\") 2>/dev/null; then echo rossoctl-token-exit=0; exit 0; fi\n"
            "err=$( (: < \"$1\") 2>&1 )\n"
            "echo \"rossoctl-token-exit=1\"\necho \"rossoctl-token-error=$err\"",
            kScriptName, kTokenPath};
}

Finding tokenLive(const ProbeOutput& output) {
    if (!output.started) return notStarted(output, "sh");
    if (output.timedOut)
        return unproven("reading the token path ran out of time: live part unproven");
    const auto exitText = marker(output.stdoutText, "rossoctl-token-exit");
    const std::string error =
        cleanLine(marker(output.stdoutText, "rossoctl-token-error").value_or(""));
    if (!exitText)
        return unproven(
            fmt::format("the token probe gave no answer (exit {}: {}): live part unproven",
                        output.exitCode, lastLine(output.stderrText)));
    Finding finding;
    // Only the shell's message about the token path counts (dash, ash and bash all name it).
    const bool aboutPath = contains(error, kTokenPath);
    // busybox's ash says "no such file", dash "No such file": the case is the shell's.
    std::string lower = error;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (*exitText == "0") {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(fmt::format("{} opened: a token is mounted", kTokenPath));
    } else if (aboutPath &&
               (contains(lower, "no such file") || contains(lower, "not a directory"))) {
        finding.verdict = Verdict::Pass;
        finding.evidence.push_back(fmt::format("opening the token path failed: {}", error));
    } else if (aboutPath && contains(lower, "permission denied")) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(fmt::format(
            "{} exists but this user may not read it ({}): a token is mounted", kTokenPath, error));
    } else {
        return unproven(fmt::format("opening {} failed ({}): cannot tell whether a token exists",
                                    kTokenPath, error.empty() ? "no message" : error));
    }
    return finding;
}

std::vector<std::string> cgroupProbeCommand() {
    // Shell builtins only (read, echo): no tool from a path the pod may have written.
    return {"/bin/sh", "-c",
            "for f in /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes; do\n"
            "  if [ -r \"$f\" ] && read -r v < \"$f\"; then echo \"rossoctl-file=$f\"; "
            "echo \"rossoctl-value=$v\"; break; fi\n"
            "done\n"
            "[ -n \"$v\" ] || echo rossoctl-file=none\n"
            // cgroup v1 charges socket buffers to a counter of their own, unbounded unless set.
            "if [ \"$f\" = /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then\n"
            "  if read -r t < /sys/fs/cgroup/memory/memory.kmem.tcp.limit_in_bytes; then\n"
            "    echo \"rossoctl-tcp=$t\"; else echo rossoctl-tcp=none; fi 2>/dev/null\n"
            "fi\n"
            "if [ -r /sys/fs/cgroup/cpu.max ] && read -r q p < /sys/fs/cgroup/cpu.max; then\n"
            "  echo \"rossoctl-cpu=/sys/fs/cgroup/cpu.max $q $p\"\n"
            "elif read -r q < /sys/fs/cgroup/cpu/cpu.cfs_quota_us && "
            "read -r p < /sys/fs/cgroup/cpu/cpu.cfs_period_us; then\n"
            "  echo \"rossoctl-cpu=/sys/fs/cgroup/cpu/cpu.cfs_quota_us $q $p\"\n"
            "else echo rossoctl-cpu=none; fi 2>/dev/null\n"
            // A kernel of the pod's own (gVisor) is sized to the container's memory limit.
            "if [ -r /proc/meminfo ]; then while read -r k v u; do\n"
            "  if [ \"$k\" = MemTotal: ]; then echo \"rossoctl-memtotal=$v $u\"; break; fi\n"
            "done < /proc/meminfo; fi",
            kScriptName};
}

std::optional<long long> cpuLimitMillis(const json& container) {
    const json& limits = json_access::at(json_access::at(container, "resources"), "limits");
    if (!json_access::at(limits, "cpu").is_string()) return std::nullopt;
    try {
        const auto millis =
            std::llround(model::parseQuantity(limits["cpu"].get<std::string>(), "cpu") * 1000);
        if (millis > 0) return millis;
    } catch (const Error&) {
    }
    return std::nullopt;
}

Finding cpuLimitLive(const ProbeOutput& output, std::optional<long long> expectedMillis) {
    if (!output.started) return notStarted(output, "sh");
    const std::string line = marker(output.stdoutText, "rossoctl-cpu").value_or("none");
    std::istringstream words(line);
    std::string file, quota, period;
    words >> file >> quota >> period;
    if (file == "none" || period.empty())
        return unproven(
            "neither /sys/fs/cgroup/cpu.max (cgroup v2) nor cpu.cfs_quota_us (v1) is readable in "
            "the container: the cpu limit is not proven live");
    Finding finding;
    finding.verdict = Verdict::Fail;
    long long quotaUs = -1, periodUs = 0;
    try {
        if (quota != "max") quotaUs = std::stoll(quota);
        periodUs = std::stoll(period);
    } catch (...) {
        return unproven(fmt::format("{} holds '{} {}', not numbers: cpu limit unproven",
                                    cleanLine(file), cleanLine(quota), cleanLine(period)));
    }
    if (quotaUs <= 0 || periodUs <= 0) {
        finding.evidence.push_back(
            fmt::format("{} = {}: the cgroup has no cpu limit", file, cleanLine(quota)));
        return finding;
    }
    const long long millis = quotaUs * 1000 / periodUs;
    // The kubelet sets quota = millicores * period / 1000, at least 1 ms per period.
    const long long wantUs =
        expectedMillis ? std::max(1000LL, *expectedMillis * periodUs / 1000) : 0;
    if (!expectedMillis) {
        finding.evidence.push_back(
            fmt::format("{} = {} per {} us ({}m) but the container declares no cpu limit", file,
                        quotaUs, periodUs, millis));
    } else if (std::llabs(quotaUs - wantUs) <= periodUs / 1000) {
        finding.verdict = Verdict::Pass;
        finding.evidence.push_back(fmt::format("{} = {} per {} us ({}m), the container's cpu limit",
                                               file, quotaUs, periodUs, millis));
    } else {
        finding.evidence.push_back(
            fmt::format("{} = {} per {} us ({}m) but the container's cpu "
                        "limit is {}m",
                        file, quotaUs, periodUs, millis, *expectedMillis));
    }
    return finding;
}

std::optional<long long> memoryLimitBytes(const json& container) {
    const json& limits = json_access::at(json_access::at(container, "resources"), "limits");
    if (!json_access::at(limits, "memory").is_string()) return std::nullopt;
    try {
        const auto bytes =
            std::llround(model::parseQuantity(limits["memory"].get<std::string>(), "memory"));
        if (bytes > 0) return bytes;  // "0" sets no limit
    } catch (const Error&) {
    }
    return std::nullopt;
}

namespace {

constexpr const char* kMemoryLimitV1 = "/sys/fs/cgroup/memory/memory.limit_in_bytes";
// cgroup v1 reports "no limit" as a page-aligned LONG_MAX.
constexpr long long kUnlimitedV1 = 0x7FFFFFFFFFFFF000LL;

// On cgroup v1 a socket's buffers are charged to memory.kmem.tcp, never to the memory limit:
// without a bound there a container limited to 64Mi pinned 2.2 GiB of the node's memory in
// TCP buffers, the node's whole tcp_mem (attack 65 L1). v2 charges them to memory.max.
Finding socketBuffersV1(const ProbeOutput& output, long long limitBytes) {
    const std::string value = marker(output.stdoutText, "rossoctl-tcp").value_or("none");
    long long bytes = -1;
    try {
        // All digits, or it is not the kernel's: stoll takes "0 garbage" as 0.
        if (!value.empty() && value.size() <= 19 &&
            std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
            bytes = std::stoll(value);
    } catch (...) {
    }
    const char* file = "/sys/fs/cgroup/memory/memory.kmem.tcp.limit_in_bytes";
    if (bytes < 0)
        return probe_text::unproven(fmt::format(
            "{} is not readable ('{}'): on cgroup v1 socket buffers are charged there, not to "
            "the memory limit, so what the container may pin in them is not known",
            file, cleanLine(value)));
    if (bytes >= kUnlimitedV1 || bytes > limitBytes)
        return probe_text::unproven(fmt::format(
            "{} = {}: on cgroup v1 socket buffers are charged there, not to the memory limit, "
            "so the container may pin {} of the node's memory in them (up to the node's "
            "net.ipv4.tcp_mem, every pod's TCP stalls then); cgroup v2 charges them to "
            "memory.max (attack 65 L1)",
            file, bytes >= kUnlimitedV1 ? "unlimited" : formatBytes(bytes),
            bytes >= kUnlimitedV1 ? "any amount" : "more than its limit"));
    Finding bounded;
    bounded.verdict = Verdict::Pass;
    // Review 66 L2: said, as the bound is apart from the limit and a quota counts neither.
    bounded.evidence.push_back(fmt::format(
        "{} = {} ({}): cgroup v1 socket buffers are bounded too, apart from the memory limit: "
        "the container may hold up to its limit in them besides",
        file, bytes, formatBytes(bytes)));
    return bounded;
}

}  // namespace

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
        if (file == kMemoryLimitV1) absorb(finding, socketBuffersV1(output, bytes));
    } else {
        finding.evidence.push_back(fmt::format("{} = {} but the container's memory limit is {}",
                                               file, formatBytes(bytes),
                                               formatBytes(*expectedBytes)));
    }
    return finding;
}

}  // namespace rossoctl::verify
