// The live half of "egress denied": a connection attempt from the pod to the same address the
// positive control reached from outside, and the strict reading of what the tool printed.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <sstream>

#include "json_access.hpp"
#include "probe_text.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

using namespace probe_text;
using std::chrono::milliseconds;

// The control connects from this machine: a target it cannot reach (example.com on a cluster
// without outside DNS) leaves egress unproven until one it can is named.
constexpr const char* kDeadTargetAdvice =
    "name a URL this machine can reach with --egress-target URL";

std::optional<EgressTarget> parseEgressTarget(const std::string& url) {
    static const std::regex pattern(
        R"(^(https?)://([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:([0-9]{1,5}))?(/[^\s]*)?$)");
    std::smatch match;
    if (!std::regex_match(url, match, pattern)) return std::nullopt;
    EgressTarget target;
    target.url = url;
    target.scheme = match[1];
    target.host = match[2];
    if (target.host.front() == '[') target.host = target.host.substr(1, target.host.size() - 2);
    target.port = match[4].matched ? std::stoi(match[4]) : (target.scheme == "https" ? 443 : 80);
    if (target.port < 1 || target.port > 65535) return std::nullopt;
    return target;
}

milliseconds probeConnectTimeout(const ControlResult& control) {
    // Forty round trips leave room for a slower path from the pod; a lost SYN is resent after
    // 1 s, and the resent one's answer must still arrive in time (a lost SYN is no denial).
    const auto scaled = std::chrono::duration_cast<milliseconds>(control.roundTrip * 40);
    return std::clamp(scaled + milliseconds(1300), milliseconds(1300), milliseconds(5000));
}

// A tool path the agent can write: under a writable volume mount, or anywhere when the root
// filesystem is writable. "" when it is on the image's read-only root filesystem.
std::string writableToolPlace(const std::string& path, const nlohmann::json& container) {
    if (path.empty() || path.front() != '/') return "its path is not known";
    const auto under = [](const std::string& inner, const std::string& outer) {
        return inner == outer || inner.rfind(outer == "/" ? outer : outer + "/", 0) == 0;
    };
    const std::string tool = json_access::cleanedPath(path);
    for (const auto& [at, writable] : json_access::mountedPaths(container)) {
        if (writable && under(tool, at))
            return fmt::format("it is under the writable mount {}",
                               json_access::shortened(at, 120));
        // What a tool runs and loads (its link's target, the loader, libc, ld.so's files) lies
        // in these, by names verify does not follow; a read-only mount's volume may be written
        // where it is mounted again (attack 67 H1: a file mounted over /bin/dash). Of /etc,
        // only what the loader reads (a CA bundle there is no tool's code: review 68 L4).
        for (const char* system :
             {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr/bin", "/usr/sbin",
              "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32", "/usr/libexec", "/usr/local",
              "/etc/ld.so.preload", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d"})
            if (under(at, system) || under(system, at))
                return fmt::format(
                    "a volume is mounted at {}, over what the image's tools run and load",
                    json_access::shortened(at, 120));
    }
    const auto context = container.value("securityContext", nlohmann::json::object());
    if (!context.value("readOnlyRootFilesystem", false))
        return "the container's root filesystem is writable (readOnlyRootFilesystem is not true)";
    return "";
}

Finding withoutWritableTool(Finding live, const ProbeOutput& output,
                            const nlohmann::json& container) {
    // A connection fails whatever the tool; a tool that never ran has no path.
    const std::string tool = marker(output.stdoutText, "rossoctl-tool").value_or("none");
    if (live.verdict == Verdict::Fail || tool == "none") return live;
    const std::string path = marker(output.stdoutText, "rossoctl-tool-path").value_or("");
    const std::string place = writableToolPlace(path, container);
    if (place.empty()) {
        if (live.verdict != Verdict::Pass) return live;
        live.evidence.push_back(fmt::format("{} is {}, on the image's read-only root filesystem",
                                            live.probe, cleanLine(path)));
        return live;
    }
    live.verdict = Verdict::Unproven;
    live.evidence.push_back(
        fmt::format("{} at {} may have been replaced by the pod ({}): what it said is not proof",
                    live.probe, path.empty() ? "an unknown path" : cleanLine(path), place));
    return live;
}

std::vector<std::string> egressProbeOrder() {
    return {"curl", "wget", "python3", "bash"};
}

std::vector<std::string> egressProbeCommand(const EgressTarget& target, const std::string& address,
                                            milliseconds connectTimeout) {
    std::string order;
    for (const auto& tool : egressProbeOrder()) order += (order.empty() ? "" : " ") + tool;
    const std::string ip = address.empty() ? target.host : address;
    const bool v6 = ip.find(':') != std::string::npos;
    const std::string bracketed = v6 ? "[" + ip + "]" : ip;
    // wget has no --resolve: it gets the address in the URL (TLS may then fail, after connect).
    const std::string addressUrl =
        address.empty() ? target.url
                        : fmt::format("{}://{}:{}/", target.scheme, bracketed, target.port);
    const std::string resolve =
        address.empty() ? "" : fmt::format("{}:{}:{}", target.host, target.port, bracketed);
    const double seconds = static_cast<double>(connectTimeout.count()) / 1000.0;
    // $1 URL, $2 address, $3 port, $4 seconds (decimal), $5 whole seconds, $6 tenths,
    // $7 curl --resolve, $8 the URL with the address. Each branch prints rossoctl-* markers.
    const std::string script = fmt::format(
        R"SH(# in_time PID TENTHS: 0 when PID ended in time, 1 when the time ran out first, 2 when
# there is no sleep to count time with.
# Tenths at first (a refusal comes back at once), then half seconds: each sleep is a process,
# and a pod with a tenth of a CPU pays for every one.
in_time() {{
  i=0
  while kill -0 "$1" 2>/dev/null; do
    if [ "$i" -ge "$2" ]; then return 1; fi
    step=1; if [ "$i" -ge 3 ]; then step=5; fi
    if [ $((i + step)) -gt "$2" ]; then step=$(($2 - i)); fi
    if [ "$step" -gt 9 ]; then step=9; fi
    if sleep "0.$step" 2>/dev/null; then i=$((i + step)); elif sleep 1 2>/dev/null; then i=$((i + 10)); else return 2; fi
  done
}}
# tcp_state PID IPV4 PORT: the TCP state of PID's own socket towards IPV4:PORT (01 ESTABLISHED,
# 02 SYN_SENT), none without one, unknown for IPv6; another process's sockets never count.
tcp_state() {{
  inodes=" "
  for fd in /proc/"$1"/fd/*; do
    link=$(readlink "$fd" 2>/dev/null) || continue
    case $link in socket:\[*\]) link=${{link#socket:[}}; inodes="$inodes${{link%]}} " ;; esac
  done
  case $2 in *:*) echo unknown; return ;; esac
  saved=$IFS; IFS=.; set -- $2 $3; IFS=$saved
  want=$(printf '%02X%02X%02X%02X:%04X' "$4" "$3" "$2" "$1" "$5")
  while read -r _ _ remote st _ _ _ _ _ inode _; do
    [ "$remote" = "$want" ] || continue
    case $inodes in *" $inode "*) echo "$st"; return ;; esac
  done </proc/net/tcp
  echo none
}}
# A proxy from the pod's environment or a tool's rc file would be what the tool connects to;
# PYTHONPATH, BASH_ENV or a preloaded library would run the pod's code in place of the probe's.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY BASH_ENV ENV \
  LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT
export LC_ALL=C
# The image's own directories, never the pod's PATH (it may name a directory the agent writes).
PATH={path}; export PATH
if [ -s /etc/ld.so.preload ]; then echo rossoctl-preload=/etc/ld.so.preload; fi
tool=none
for t in {order}; do if p=$(command -v "$t" 2>/dev/null); then tool=$t; break; fi; done
echo "rossoctl-tool=$tool"
if [ "$tool" != none ]; then echo "rossoctl-tool-path=$(readlink -f "$p" 2>/dev/null || echo "$p")"; fi
case $tool in
curl)
  curl -q -sS -v --noproxy '*' -o /dev/null --connect-timeout "$4" --max-time $(($5 + 3)) ${{7:+--resolve}} ${{7:+"$7"}} \
    -w 'rossoctl-curl=http:%{{http_code}} connect:%{{time_connect}} ip:%{{remote_ip}}\n' "$1"
  echo "rossoctl-exit=$?" ;;
wget)
  help=$(wget --help 2>&1); opts=
  case "$help" in *--tries*) opts=--tries=1 ;; esac
  case "$help" in *--no-config*) opts="$opts --no-config" ;; esac
  case "$help" in *--no-proxy*) opts="$opts --no-proxy" ;; esac
  case "$help" in *check-certificate*) opts="$opts --no-check-certificate" ;; esac
  case "$help" in *--timeout*|*"-T SEC"*) opts="$opts -T $5" ;; esac
  wget -S -O /dev/null $opts "$8" &
  pid=$!
  # Some wget builds (Debian's busybox) have no time-out: at the deadline the socket's state
  # tells a connection never answered from one that was made and then stalled.
  in_time "$pid" "$6"; clock=$?
  if [ "$clock" = 1 ]; then
    state=$(tcp_state "$pid" "$2" "$3")
    # Unanswered 0.3 s longer: not a SYN sent a moment before the deadline.
    if [ "$state" = 02 ]; then in_time "$pid" 3; state=$(tcp_state "$pid" "$2" "$3"); fi
    echo "rossoctl-socket=$state"
  fi
  if [ "$clock" = 2 ]; then echo rossoctl-clock=none; fi
  kill "$pid" 2>/dev/null; wait "$pid"; echo "rossoctl-exit=$?" ;;
python3)
  python3 -I -S -c 'import socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), float(sys.argv[3]))
    print("rossoctl-connect=connected " + str(s.getpeername()[0]))
except socket.timeout:
    print("rossoctl-connect=failed timeout")
except OSError as e:
    print("rossoctl-connect=failed errno " + str(e.errno) + " " + str(e.strerror))' "$2" "$3" "$4"
  echo "rossoctl-exit=$?" ;;
bash)
  bash -c 'exec 3<>"/dev/tcp/$0/$1" && echo rossoctl-connect=connected' "$2" "$3" &
  pid=$!
  in_time "$pid" "$6"; clock=$?
  if [ "$clock" = 1 ]; then echo rossoctl-connect=timeout; fi
  if [ "$clock" = 2 ]; then echo rossoctl-clock=none; fi
  kill "$pid" 2>/dev/null; wait "$pid"; echo "rossoctl-exit=$?" ;;
esac
)SH",
        fmt::arg("order", order), fmt::arg("path", kImageToolPath));
    return {"/bin/sh",
            "-c",
            script,
            kScriptName,
            target.url,
            ip,
            std::to_string(target.port),
            fmt::format("{:.1f}", std::ceil(seconds * 10) / 10),
            std::to_string(static_cast<long>(std::ceil(seconds))),
            std::to_string(static_cast<long>(std::ceil(seconds * 10))),
            resolve,
            addressUrl};
}

namespace {

// Messages that say the tool tried to connect and the network refused or dropped it: the only
// texts that count as denial. "Network is unreachable" is the pod's own routing (an address
// family it has no route for), and busybox's "can't connect" alone may be a local failure
// (no free port): neither is the network's answer.
bool saysConnectFailed(const std::string& tool, const std::string& text) {
    static const char* socketPhrases[] = {"Connection refused", "No route to host",
                                          "Connection timed out"};
    auto hasSocketPhrase = [&](const std::string& line) {
        return std::any_of(std::begin(socketPhrases), std::end(socketPhrases),
                           [&](const char* phrase) { return contains(line, phrase); });
    };
    if (tool != "wget") return hasSocketPhrase(text);
    static const char* gnuPhrases[] = {"failed: Connection refused", "failed: Connection timed out",
                                       "failed: No route to host"};
    // Only wget's own lines: with -S it echoes what the server sent, indented, and a server
    // that answers with wget's own words is a connection (attack 55 E5a).
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("Connecting to ", 0) == 0 &&
            std::any_of(std::begin(gnuPhrases), std::end(gnuPhrases),
                        [&](const char* phrase) { return contains(line, phrase); }))
            return true;
        if (line.rfind("wget: can't connect to remote host", 0) == 0 && hasSocketPhrase(line))
            return true;
    }
    return false;
}

// A refusal the network sent back: a reset (refused) or an ICMP unreachable/prohibited.
bool saysNetworkAnswered(const std::string& text) {
    return contains(text, "Connection refused") || contains(text, "No route to host");
}

// The line that says why there was no connection, else the last line.
std::string reasonLine(const std::string& tool, const std::string& text) {
    std::istringstream lines(text);
    std::string reason;
    for (std::string line; std::getline(lines, line);)
        if (saysConnectFailed(tool, line)) reason = line;
    return reason.empty() ? lastLine(text) : cleanLine(reason);
}

}  // namespace

Finding egressLive(const ProbeOutput& output, const EgressTarget& target,
                   const ControlResult& control) {
    if (!output.started) return notStarted(output, "sh");
    if (output.timedOut)
        return unproven(
            "the probe was still running when its time ran out: a time-out is not "
            "a denial, live part unproven");
    const std::string tool = marker(output.stdoutText, "rossoctl-tool").value_or("");
    if (tool.empty())
        return unproven(fmt::format("the probe script did not run (exit {}: {})", output.exitCode,
                                    lastLine(output.stderrText)));
    if (tool == "none")
        return unproven(
            "the image has none of curl, wget, python3, bash: no egress probe "
            "can run, live part unproven");
    const std::string where = control.address.empty() ? target.url
                                                      : fmt::format("{} ({}:{})", target.url,
                                                                    control.address, target.port);
    Finding finding;
    finding.probe = tool;
    const std::string exitText = marker(output.stdoutText, "rossoctl-exit").value_or("?");
    // Asked only before a denial: a connection is a fail whatever else is true.
    auto toolsUntrusted = [&]() -> std::optional<Finding> {
        if (auto preload = marker(output.stdoutText, "rossoctl-preload"))
            return unproven(fmt::format("the image preloads a library into every program ({}): "
                                        "what {} says cannot be trusted, live part unproven",
                                        cleanLine(*preload), tool),
                            tool);
        if (marker(output.stdoutText, "rossoctl-clock"))
            return unproven(fmt::format("the image has no sleep to time {} with: live part "
                                        "unproven",
                                        tool),
                            tool);
        return std::nullopt;
    };
    auto connected = [&](const std::string& detail) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(
            fmt::format("{} connected to {} ({}): egress is open", tool, where, cleanLine(detail)));
        return finding;
    };
    // answered: the network said no (RST, ICMP); else the SYN went unanswered, which counts only
    // because the control's SYN to the same address was answered far sooner.
    auto denied = [&](const std::string& detail, bool answered) {
        if (auto why = toolsUntrusted()) return *why;
        if (!control.reached) {
            return unproven(fmt::format(
                "{} could not connect to {} ({}), but the positive control could not reach it "
                "either ({}): a dead target proves nothing, live part unproven; {}",
                tool, where, detail, control.detail.empty() ? "no control" : control.detail,
                kDeadTargetAdvice));
        }
        finding.verdict = Verdict::Pass;
        finding.evidence.push_back(fmt::format(
            "{} could not connect to {}: {}; {}; the positive control from {} reached it in "
            "{:.1f} ms",
            tool, where, detail,
            answered ? "an answer from the network (a reset or an ICMP refusal)"
                     : "its SYN went unanswered, and the control's was answered far sooner",
            control.vantage, static_cast<double>(control.roundTrip.count()) / 1000.0));
        return finding;
    };
    if (exitText == "126" || exitText == "127")
        return unproven(fmt::format("{} could not be run (exit {}: {}): live part unproven", tool,
                                    exitText, lastLine(output.stderrText)),
                        tool);
    if (tool == "curl") {
        static const std::regex pattern(R"(http:(\d+) connect:([0-9.]+) ip:(\S*))");
        std::smatch match;
        const std::string line = marker(output.stdoutText, "rossoctl-curl").value_or("");
        if (std::regex_search(line, match, pattern)) {
            const std::string status = match[1];
            if (status != "000") return connected("HTTP " + status + ", " + match[3].str());
            if (std::stod(match[2]) > 0) return connected("TCP connected to " + match[3].str());
            // 7 with the network's answer in -v's lines (not a local failure such as no free
            // port); 28 with no connect time: the connect timed out.
            if ((exitText == "7" && saysConnectFailed(tool, output.stderrText)) || exitText == "28")
                return denied(
                    fmt::format("exit {}, {}", exitText, reasonLine(tool, output.stderrText)),
                    exitText == "7" && saysNetworkAnswered(output.stderrText));
        }
    } else if (tool == "wget") {
        static const std::regex status(R"(HTTP/[0-9.]+ (\d{3}))");
        std::smatch match;
        if (contains(output.stderrText, "connected.")) return connected("wget said connected.");
        // -S echoes each line of the server's answer indented: whatever it says, one came.
        {
            std::istringstream lines(output.stderrText);
            for (std::string line; std::getline(lines, line);)
                if (line.size() > 2 && line.rfind("  ", 0) == 0 && line[2] != ' ')
                    return connected("wget printed a line of the server's answer");
        }
        if (std::regex_search(output.stderrText, match, status))
            return connected("HTTP " + match[1].str());
        if (exitText == "0") return connected("exit 0");
        const std::string socket = marker(output.stdoutText, "rossoctl-socket").value_or("");
        if (socket == "01")
            return connected(
                "its TCP connection was ESTABLISHED when the connect time-out ran "
                "out, with no answer yet");
        if (socket == "02")
            return denied(
                "no answer to its connection request within the connect time-out "
                "(the socket was still SYN_SENT)",
                false);
        if (saysConnectFailed(tool, output.stderrText))
            return denied(fmt::format("exit {}, {}", exitText, reasonLine(tool, output.stderrText)),
                          saysNetworkAnswered(output.stderrText));
    } else {
        const std::string result = marker(output.stdoutText, "rossoctl-connect").value_or("");
        if (result.rfind("connected", 0) == 0) return connected(result);
        if (result == "timeout" || result == "failed timeout")
            return denied("no connection within the connect time-out", false);
        const std::string detail = result.empty() ? lastLine(output.stderrText) : result;
        if (saysConnectFailed(tool, detail + "\n" + output.stderrText))
            return denied(cleanLine(detail.rfind("failed ", 0) == 0 ? detail.substr(7) : detail),
                          saysNetworkAnswered(detail + "\n" + output.stderrText));
    }
    if (!control.reached)
        return unproven(
            fmt::format("{} did not connect to {} (exit {}: {}), and the positive "
                        "control could not reach it either ({}): a dead target proves "
                        "nothing, live part unproven; {}",
                        tool, where, exitText, lastLine(output.stderrText),
                        control.detail.empty() ? "no control" : control.detail, kDeadTargetAdvice),
            tool);
    return unproven(fmt::format("{} gave no answer known to mean \"could not connect\" (exit {}: "
                                "{}): live part unproven",
                                tool, exitText, lastLine(output.stderrText)),
                    tool);
}

namespace {

bool listed(const nlohmann::json& list, const std::string& capability) {
    if (!list.is_array()) return false;
    for (const auto& entry : list) {
        if (!entry.is_string()) continue;
        std::string name = entry.get<std::string>();
        std::transform(name.begin(), name.end(), name.begin(), ::toupper);
        if (name.rfind("CAP_", 0) == 0) name = name.substr(4);
        if (name == capability || name == "ALL") return true;
    }
    return false;
}

}  // namespace

std::vector<std::string> rawNetworkHolders(const nlohmann::json& pod) {
    using nlohmann::json;
    std::vector<std::string> holders;
    const json spec = pod.value("spec", json::object());
    const json podContext = spec.value("securityContext", json::object());
    for (const char* kind : {"initContainers", "containers", "ephemeralContainers"}) {
        for (const auto& container : spec.value(kind, json::array())) {
            const json context = container.value("securityContext", json::object());
            const json capabilities = context.value("capabilities", json::object());
            const json add = capabilities.value("add", json::array());
            const json drop = capabilities.value("drop", json::array());
            auto setting = [&](const char* key) {
                return context.contains(key) ? context[key] : podContext.value(key, json());
            };
            const json user = setting("runAsUser");
            const bool nonRoot = setting("runAsNonRoot") == true;
            const bool mayBeRoot = user.is_number() ? user.get<long long>() == 0 : !nonRoot;
            // Without no_new_privs a non-root process gains the bounding set's NET_RAW from a
            // binary's file capabilities (ping).
            const bool mayEscalate = context.value("allowPrivilegeEscalation", true);
            const std::string name = container.value("name", "?");
            if (context.value("privileged", false)) {
                holders.push_back(fmt::format("container {} is privileged", name));
                continue;
            }
            for (const char* capability : {"NET_RAW", "NET_ADMIN"}) {
                if (listed(add, capability)) {
                    holders.push_back(fmt::format("container {} adds {}", name, capability));
                } else if (std::string(capability) == "NET_RAW" && !listed(drop, capability) &&
                           (mayBeRoot || mayEscalate)) {
                    // NET_RAW is in the runtimes' default set; NET_ADMIN is not.
                    holders.push_back(fmt::format(
                        "container {} keeps the default NET_RAW ({})", name,
                        mayBeRoot ? "it may run as root" : "it may escalate privileges"));
                }
            }
        }
    }
    return holders;
}

Finding withoutSpoofableDenial(Finding live, const std::vector<std::string>& holders) {
    if (live.verdict != Verdict::Pass || holders.empty()) return live;
    live.verdict = Verdict::Unproven;
    std::string list;
    for (const auto& holder : holders) list += (list.empty() ? "" : "; ") + holder;
    live.evidence.push_back(fmt::format(
        "a container of this pod can hold NET_RAW or NET_ADMIN ({}): in the network namespace "
        "the probe shares it can forge the network's answers or steal the pod's replies, so no "
        "denial seen there is proof",
        list));
    return live;
}

}  // namespace rossoctl::verify
