// The live halves of the four checks: the commands run in the pod (POSIX sh scripts taking
// their inputs as positional arguments, so nothing is ever quoted into them) and the parsers
// that turn what they printed into a verdict with evidence.
#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <sstream>

#include "rossoctl/errors.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

constexpr const char* kScriptName = "rossoctl-probe";  // $0 of every probe script
constexpr int kConnectSeconds = 5;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// The value after "KEY=" on the first line starting with it.
std::optional<std::string> marker(const std::string& text, const std::string& key) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
    }
    return std::nullopt;
}

// The last non-empty line of a stream, trimmed, for evidence.
std::string lastLine(const std::string& text) {
    std::istringstream lines(text);
    std::string last;
    for (std::string line; std::getline(lines, line);) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (!line.empty() && line.rfind("rossoctl-", 0) != 0) last = line;
    }
    return last.size() > 200 ? last.substr(0, 200) + "…" : last;
}

Finding unproven(std::string why, std::string probe = {}) {
    Finding finding;
    finding.verdict = Verdict::Unproven;
    finding.evidence.push_back(std::move(why));
    finding.probe = std::move(probe);
    return finding;
}

Finding notStarted(const ProbeOutput& output, const std::string& what) {
    return unproven(fmt::format("could not run {} in the container ({}): live part unproven", what,
                                output.failure.empty() ? "no reason given" : output.failure));
}

std::string formatBytes(long long bytes) {
    constexpr long long kMi = 1024LL * 1024;
    if (bytes % (1024 * kMi) == 0) return fmt::format("{}Gi", bytes / (1024 * kMi));
    if (bytes % kMi == 0) return fmt::format("{}Mi", bytes / kMi);
    return fmt::format("{} bytes", bytes);
}

}  // namespace

std::vector<std::string> tokenProbeCommand() {
    // The token itself never leaves the pod: cat writes to /dev/null, only its error shows.
    return {"sh", "-c", "cat \"$1\" >/dev/null && echo rossoctl-token=readable", kScriptName,
            kTokenPath};
}

Finding tokenLive(const ProbeOutput& output) {
    if (!output.started) return notStarted(output, "sh");
    Finding finding;
    const std::string error = lastLine(output.stderrText);
    if (marker(output.stdoutText, "rossoctl-token") == "readable") {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(fmt::format("cat {} succeeded: a token is mounted", kTokenPath));
    } else if (contains(output.stderrText, "No such file") ||
               contains(output.stderrText, "Not a directory")) {
        finding.verdict = Verdict::Pass;
        finding.evidence.push_back(error);
    } else if (contains(output.stderrText, "Permission denied")) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(fmt::format(
            "{} exists but this user may not read it ({}): a token is mounted", kTokenPath, error));
    } else if (output.exitCode == 126 || output.exitCode == 127) {
        return unproven(
            fmt::format("cat is not runnable in the image ({}): live part unproven",
                        error.empty() ? "exit " + std::to_string(output.exitCode) : error));
    } else {
        return unproven(fmt::format("cat {} exited {} ({}): cannot tell whether a token exists",
                                    kTokenPath, output.exitCode,
                                    error.empty() ? "no message" : error));
    }
    return finding;
}

std::optional<EgressTarget> parseEgressTarget(const std::string& url) {
    static const std::regex pattern(
        R"(^(https?)://([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:([0-9]{1,5}))?(/[^\s]*)?$)");
    std::smatch match;
    // std::regex recurses per character: bound the input before it can exhaust the stack.
    if (url.size() > 2048 || !std::regex_match(url, match, pattern)) return std::nullopt;
    EgressTarget target;
    target.url = url;
    target.scheme = match[1];
    target.host = match[2];
    if (target.host.front() == '[') target.host = target.host.substr(1, target.host.size() - 2);
    target.port = match[4].matched ? std::stoi(match[4]) : (target.scheme == "https" ? 443 : 80);
    if (target.port < 1 || target.port > 65535) return std::nullopt;
    return target;
}

std::vector<std::string> egressProbeOrder() {
    return {"curl", "wget", "python3", "bash"};
}

std::vector<std::string> egressProbeCommand(const EgressTarget& target) {
    std::string order;
    for (const auto& tool : egressProbeOrder()) order += (order.empty() ? "" : " ") + tool;
    // $1 URL, $2 host, $3 port, $4 seconds. Each branch prints rossoctl-* marker lines.
    const std::string script = fmt::format(R"SH(tool=none
for t in {order}; do if command -v "$t" >/dev/null 2>&1; then tool=$t; break; fi; done
echo "rossoctl-tool=$tool"
case $tool in
curl)
  curl -sS -o /dev/null --connect-timeout "$4" --max-time $(($4 + 5)) \
    -w 'rossoctl-curl=http:%{{http_code}} connect:%{{time_connect}} ip:%{{remote_ip}}\n' "$1"
  echo "rossoctl-exit=$?" ;;
wget)
  tries=; case "$(wget --help 2>&1)" in *--tries*) tries=--tries=1 ;; esac
  wget -S -O /dev/null -T "$4" $tries "$1"
  echo "rossoctl-exit=$?" ;;
python3)
  python3 -c 'import socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), int(sys.argv[3]))
    print("rossoctl-connect=connected " + str(s.getpeername()[0]))
except Exception as e:
    print("rossoctl-connect=failed " + type(e).__name__ + ": " + str(e))' "$2" "$3" "$4"
  echo "rossoctl-exit=$?" ;;
bash)
  bash -c 'exec 3<>"/dev/tcp/$0/$1" && echo rossoctl-connect=connected' "$2" "$3" &
  pid=$! i=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$i" -ge $(($4 * 10)) ]; then kill "$pid" 2>/dev/null; echo rossoctl-connect=timeout; break; fi
    if sleep 0.1 2>/dev/null; then i=$((i + 1)); else sleep 1; i=$((i + 10)); fi
  done
  wait "$pid"; echo "rossoctl-exit=$?" ;;
esac
)SH",
                                           fmt::arg("order", order));
    return {"sh",
            "-c",
            script,
            kScriptName,
            target.url,
            target.host,
            std::to_string(target.port),
            std::to_string(kConnectSeconds)};
}

namespace {

// Messages of curl, GNU wget, busybox wget, python and bash that mean "no connection".
bool saysNotConnected(const std::string& text) {
    for (const char* phrase :
         {"Connection refused", "timed out", "Timed out", "Network is unreachable",
          "No route to host", "unable to resolve", "Could not resolve", "bad address",
          "Name or service not known", "Temporary failure in name resolution",
          "Name does not resolve", "failed: Connection", "gaierror", "ConnectionRefusedError",
          "TimeoutError", "timeout", "OSError", "Operation not permitted"})
        if (contains(text, phrase)) return true;
    return false;
}

// The line that says why there was no connection (GNU wget ends with "Giving up."), else the
// last line.
std::string notConnectedLine(const std::string& text) {
    std::istringstream lines(text);
    std::string reason;
    for (std::string line; std::getline(lines, line);)
        if (saysNotConnected(line)) reason = line;
    if (reason.empty()) return lastLine(text);
    while (!reason.empty() && (reason.back() == '\r' || reason.back() == ' ')) reason.pop_back();
    return reason.size() > 200 ? reason.substr(0, 200) + "…" : reason;
}

}  // namespace

Finding egressLive(const ProbeOutput& output, const EgressTarget& target) {
    if (!output.started) return notStarted(output, "sh");
    const std::string tool = marker(output.stdoutText, "rossoctl-tool").value_or("");
    if (tool.empty())
        return unproven(fmt::format("the probe script did not run (exit {}: {})", output.exitCode,
                                    lastLine(output.stderrText)));
    if (tool == "none")
        return unproven(
            "the image has none of curl, wget, python3, bash: no egress probe "
            "can run, live part unproven");
    Finding finding;
    finding.probe = tool;
    const std::string exitText = marker(output.stdoutText, "rossoctl-exit").value_or("?");
    auto connected = [&](const std::string& detail) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(
            fmt::format("{} connected to {} ({}): egress is open", tool, target.url, detail));
        return finding;
    };
    auto refused = [&](const std::string& detail) {
        finding.verdict = Verdict::Pass;
        finding.evidence.push_back(fmt::format("{} could not connect to {} within {} s: {}", tool,
                                               target.url, kConnectSeconds, detail));
        return finding;
    };
    if (output.timedOut) return refused("the probe was still waiting when its time ran out");
    if (tool == "curl") {
        static const std::regex pattern(R"(http:(\d+) connect:([0-9.]+) ip:(\S*))");
        std::smatch match;
        const std::string line = marker(output.stdoutText, "rossoctl-curl").value_or("");
        if (line.size() <= 1024 && std::regex_search(line, match, pattern)) {
            const std::string status = match[1];
            if (status != "000") return connected("HTTP " + status + ", " + match[3].str());
            if (std::stod(match[2]) > 0) return connected("connected to " + match[3].str());
            return refused(
                fmt::format("exit {}, {}", exitText, notConnectedLine(output.stderrText)));
        }
    } else if (tool == "wget") {
        static const std::regex status(R"(HTTP/[0-9.]+ (\d{3}))");
        std::smatch match;
        if (std::regex_search(output.stderrText, match, status))
            return connected("HTTP " + match[1].str());
        if (exitText == "0") return connected("exit 0");
        if (exitText == "5")
            return connected("TLS handshake reached: " + lastLine(output.stderrText));
        if (saysNotConnected(output.stderrText))
            return refused(
                fmt::format("exit {}, {}", exitText, notConnectedLine(output.stderrText)));
    } else {
        const std::string result = marker(output.stdoutText, "rossoctl-connect").value_or("");
        if (result.rfind("connected", 0) == 0) return connected(result);
        if (result == "timeout") return refused("no connection (bash /dev/tcp)");
        const std::string detail = result.empty() ? lastLine(output.stderrText) : result;
        if (saysNotConnected(detail) || result.rfind("failed", 0) == 0)
            return refused(detail.rfind("failed ", 0) == 0 ? detail.substr(7) : detail);
    }
    return unproven(fmt::format("{} gave no clear answer (exit {}: {}): live part unproven", tool,
                                exitText, lastLine(output.stderrText)),
                    tool);
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

CanaryPlace canaryPlace(const json& pod, const json& container) {
    std::string workdir = container.value("workingDir", "");
    while (workdir.size() > 1 && workdir.back() == '/') workdir.pop_back();
    for (const auto& mount : container.value("volumeMounts", json::array())) {
        std::string path = mount.value("mountPath", "");
        while (path.size() > 1 && path.back() == '/') path.pop_back();
        if (workdir.empty() || path != workdir || mount.value("readOnly", false)) continue;
        const std::string volume = mount.value("name", "");
        std::string type = "volume";
        for (const auto& candidate : pod["spec"].value("volumes", json::array()))
            if (candidate.value("name", "") == volume)
                for (const auto& [key, value] : candidate.items())
                    if (key != "name") type = key;
        return {workdir, volume,
                fmt::format("the {} volume {} mounted at the working directory", type, volume)};
    }
    return {"/tmp", "",
            workdir.empty() ? "no working directory set: /tmp"
                            : "no writable volume at the working directory " + workdir + ": /tmp"};
}

std::vector<std::string> canaryWriteCommand(const std::string& path, const std::string& content) {
    return {"sh",        "-c", "umask 077 && printf '%s' \"$2\" > \"$1\" && cat \"$1\"",
            kScriptName, path, content};
}

std::vector<std::string> canaryReadCommand(const std::string& path) {
    return {"sh", "-c",
            "if [ -e \"$1\" ]; then echo rossoctl-canary=present; cat \"$1\"; "
            "else echo rossoctl-canary=absent; fi",
            kScriptName, path};
}

std::string canaryWriteProblem(const ProbeOutput& output, const std::string& content) {
    if (!output.started) return "could not run sh: " + output.failure;
    if (output.exitCode == 0 && output.stdoutText == content) return {};
    const std::string error = lastLine(output.stderrText);
    return fmt::format("exit {}{}", output.exitCode, error.empty() ? "" : ": " + error);
}

Finding canaryAfterRestart(const ProbeOutput& output, const std::string& path,
                           const std::string& content, const std::string& restartSummary) {
    if (!output.started) return notStarted(output, "sh");
    const auto state = marker(output.stdoutText, "rossoctl-canary");
    Finding finding;
    if (state == "absent") {
        finding.verdict = Verdict::Pass;
        finding.evidence.push_back(
            fmt::format("canary {} is gone after the restart ({})", path, restartSummary));
    } else if (state == "present") {
        finding.verdict = Verdict::Fail;
        const bool same = contains(output.stdoutText, content);
        finding.evidence.push_back(
            fmt::format("canary {} survived the restart{} ({}): data outlives the pod", path,
                        same ? " with its content" : "", restartSummary));
    } else {
        return unproven(fmt::format("reading the canary back gave no answer (exit {}: {})",
                                    output.exitCode, lastLine(output.stderrText)));
    }
    return finding;
}

}  // namespace rossoctl::verify
