// Limits, live, where the pod runs on a kernel of its own (gVisor): the cgroup files a container
// sees are that kernel's and show no limit, while the runtime sizes that kernel's view of each
// container to the container's memory limit: its MemTotal. The node's cgroup that holds the
// limit is not visible from inside, so anything but a match is unproven, never a fail.
#include <fmt/format.h>

#include <cstdlib>

#include "probe_text.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

using namespace probe_text;

Finding limitsLiveOwnKernel(const ProbeOutput& output, std::optional<long long> expectedBytes) {
    if (!output.started) return notStarted(output, "sh");
    const std::string unseen =
        "the node's cgroup that holds the limit is not visible from inside: live part unproven";
    const std::string line = marker(output.stdoutText, "rossoctl-memtotal").value_or("");
    // "262144 kB": anything else is not read.
    char* end = nullptr;
    const long long kib = std::strtoll(line.c_str(), &end, 10);
    if (line.empty() || end == line.c_str() || std::string(end) != " kB" || kib <= 0)
        return unproven("its kernel's /proc/meminfo has no MemTotal in kB; " + unseen);
    const long long total = kib * 1024;
    if (!expectedBytes)
        return unproven(
            fmt::format("its kernel shows MemTotal {} and the container declares no "
                        "memory limit; {}",
                        formatBytes(total), unseen));
    if (total > *expectedBytes)
        return unproven(
            fmt::format("its kernel shows MemTotal {}, more than the container's "
                        "memory limit {}: the runtime did not size it to the limit; {}",
                        formatBytes(total), formatBytes(*expectedBytes), unseen));
    Finding finding;
    finding.verdict = Verdict::Pass;
    finding.evidence.push_back(
        fmt::format("its kernel shows MemTotal {}, no more than the container's memory limit {}",
                    formatBytes(total), formatBytes(*expectedBytes)));
    return finding;
}

}  // namespace rossoctl::verify
