// The live probe of the host- and kernel-isolation boundaries: one POSIX sh script of builtins
// (read, echo, case; no cat, no tr) and the parser of what it printed, then the host verdict.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "probe_text.hpp"
#include "rossoctl/verify/isolation.hpp"
#include "rossoctl/verify/probe_site.hpp"

namespace rossoctl::verify {

using namespace probe_text;

namespace {

constexpr unsigned long long kNetBindService = 1ULL << 10;
// A PID namespace of the probe's own holds its sleep, the exec'd shell and little else.
constexpr int kOwnNamespaceProcesses = 8;

bool isLoopback(const std::string& address) {
    return address.rfind("127.", 0) == 0 || address == "::1";
}

// /proc/net/route gives an IPv4 address as 8 hex digits in the kernel's (little-endian) order.
std::string routeAddressText(const std::string& hex) {
    if (hex.size() != 8 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        return {};
    const unsigned long value = std::stoul(hex, nullptr, 16);
    return fmt::format("{}.{}.{}.{}", value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff,
                       (value >> 24) & 0xff);
}

// /proc/net/if_inet6 gives 32 hex digits; the API gives the textual form.
std::string ipv6Text(const std::string& hex) {
    if (hex.size() != 32) return {};
    unsigned char bytes[16];
    for (int i = 0; i < 16; ++i) {
        try {
            bytes[i] = static_cast<unsigned char>(std::stoi(hex.substr(i * 2, 2), nullptr, 16));
        } catch (...) {
            return {};
        }
    }
    char out[INET6_ADDRSTRLEN];
    return inet_ntop(AF_INET6, bytes, out, sizeof out) ? std::string(out) : std::string();
}

unsigned long long hexMask(const std::string& value) {
    try {
        return std::stoull(value, nullptr, 16);
    } catch (...) {
        return ~0ULL;  // unreadable counts as everything: never as nothing
    }
}

// "CapEff:\t0000..." → "0000..."
std::string fieldValue(const std::string& line) {
    const auto colon = line.find(':');
    std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
    const auto start = value.find_first_not_of(" \t");
    return start == std::string::npos ? "" : value.substr(start);
}

void readStatusLine(ProcessStatus& status, const std::string& line) {
    status.readable = true;
    const std::string value = fieldValue(line);
    if (line.rfind("Name:", 0) == 0) status.name = cleanLine(value);
    if (line.rfind("Uid:", 0) == 0) {
        status.uid = value;
        std::replace(status.uid.begin(), status.uid.end(), '\t', ' ');
        status.uid = cleanLine(status.uid);
    }
    if (line.rfind("CapEff:", 0) == 0) status.capEffective = hexMask(value);
    if (line.rfind("CapBnd:", 0) == 0) status.capBounding = hexMask(value);
    if (line.rfind("NoNewPrivs:", 0) == 0) status.noNewPrivs = value;
    if (line.rfind("Seccomp:", 0) == 0) status.seccomp = value;
}

// Root in any of real, effective, saved or filesystem uid: a process can switch back to it.
bool anyRootUid(const ProcessStatus& status) {
    std::istringstream words(status.uid);
    for (std::string uid; words >> uid;)
        if (uid == "0") return true;
    return false;
}

struct Verdicts {
    Finding finding{Verdict::Pass, {}, "proc"};
    void fail(std::string line) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(std::move(line));
    }
    void doubt(std::string line) {
        if (finding.verdict == Verdict::Pass) finding.verdict = Verdict::Unproven;
        finding.evidence.push_back(std::move(line));
    }
};

void judgeProcess(Verdicts& out, const ProcessStatus& status, const std::string& who,
                  const std::string& ownKernel) {
    if (!status.readable) {
        out.doubt(who + ": /proc status not readable");
        return;
    }
    if (anyRootUid(status)) out.fail(who + ": Uid " + status.uid + " holds 0 (root)");
    if (status.uid.empty()) out.doubt(who + ": no Uid line");
    if (status.capEffective & ~kNetBindService)
        out.fail(fmt::format("{}: CapEff holds {}", who,
                             capabilityNames(status.capEffective & ~kNetBindService)));
    if (status.capBounding & ~kNetBindService)
        out.fail(fmt::format("{}: the bounding set (CapBnd) holds {}", who,
                             capabilityNames(status.capBounding & ~kNetBindService)));
    if (status.noNewPrivs == "0")
        out.fail(who + ": NoNewPrivs: 0 (a setuid binary gains privileges)");
    else if (status.noNewPrivs != "1" && !ownKernel.empty())
        out.finding.evidence.push_back(who + ": no NoNewPrivs line (" + ownKernel + ")");
    else if (status.noNewPrivs != "1")
        out.doubt(who + ": no NoNewPrivs line");
    if (status.seccomp == "0" && !ownKernel.empty())
        out.finding.evidence.push_back(who + ": Seccomp: 0 (" + ownKernel +
                                       "): its system calls reach that kernel, not the node's");
    else if (status.seccomp == "0")
        out.fail(who + ": Seccomp: 0 (no seccomp filter: every system call reaches the kernel)");
    else if (status.seccomp != "1" && status.seccomp != "2")
        out.doubt(who + ": no Seccomp line");
}

}  // namespace

std::vector<std::string> isolationProbeCommand() {
    return {"sh", "-c",
            "for who in self 1; do\n"
            "  if [ -r /proc/$who/status ]; then\n"
            "    while IFS= read -r line; do case \"$line\" in\n"
            "      Name:*|Uid:*|CapEff:*|CapBnd:*|NoNewPrivs:*|Seccomp:*) "
            "echo \"rossoctl-$who-$line\";;\n"
            "    esac; done < /proc/$who/status\n"
            "  fi\n"
            "done\n"
            "n=0; for d in /proc/[0-9]*; do n=$((n+1)); done; echo \"rossoctl-processes=$n\"\n"
            "if [ -r /proc/net/fib_trie ]; then prev=\n"
            "  while read -r a b c d; do case \"$a\" in\n"
            "    '|--') prev=$b;; /32) [ \"$c\" = LOCAL ] && echo \"rossoctl-local=$prev\";;\n"
            "  esac; done < /proc/net/fib_trie\n"
            "fi\n"
            "if [ -r /proc/net/if_inet6 ]; then\n"
            "  while read -r a b; do echo \"rossoctl-local6=$a\"; done < /proc/net/if_inet6\n"
            "fi\n"
            // gVisor has /proc/version ("Linux version 4.4.0 #1 ...") but no osrelease.
            "if read -r r < /proc/sys/kernel/osrelease; then echo \"rossoctl-kernel=$r\"\n"
            "elif read -r o v r x < /proc/version; then echo \"rossoctl-kernel=$r\"; fi\n"
            "read -r b < /proc/sys/kernel/random/boot_id && echo \"rossoctl-boot=$b\"\n"
            // The default route's next hop: the node's side of the pod's link (hex, IPv4).
            "if [ -r /proc/net/route ]; then\n"
            "  while read -r i d g x; do [ \"$d\" = 00000000 ] && echo \"rossoctl-gateway=$g\"; "
            "done < /proc/net/route\n"
            "fi\n"
            "echo rossoctl-done=1",
            kScriptName};
}

IsolationFacts parseIsolationFacts(const ProbeOutput& output) {
    IsolationFacts facts;
    if (!output.started) {
        facts.failure =
            fmt::format("could not run sh in the container ({})",
                        output.failure.empty() ? "no reason given" : cleanLine(output.failure));
        return facts;
    }
    if (output.timedOut) {
        facts.failure = "the probe ran out of time";
        return facts;
    }
    if (!marker(output.stdoutText, "rossoctl-done")) {
        const std::string why = lastLine(output.stderrText);
        facts.failure = fmt::format("the probe did not finish (exit {}{})", output.exitCode,
                                    why.empty() ? "" : ": " + why);
        return facts;
    }
    facts.ran = true;
    std::istringstream lines(output.stdoutText);
    for (std::string line; std::getline(lines, line);) {
        while (!line.empty() && line.back() == '\r') line.pop_back();
        auto after = [&](const std::string& prefix) {
            return line.rfind(prefix, 0) == 0 ? std::optional(line.substr(prefix.size()))
                                              : std::nullopt;
        };
        if (auto rest = after("rossoctl-self-")) readStatusLine(facts.self, *rest);
        if (auto rest = after("rossoctl-1-")) readStatusLine(facts.pid1, *rest);
        if (auto rest = after("rossoctl-processes=")) facts.processes = std::atoi(rest->c_str());
        std::string address;
        if (auto rest = after("rossoctl-local=")) address = cleanLine(*rest);
        if (auto rest = after("rossoctl-local6=")) address = ipv6Text(*rest);
        if (!address.empty() && std::find(facts.localAddresses.begin(), facts.localAddresses.end(),
                                          address) == facts.localAddresses.end())
            facts.localAddresses.push_back(address);
        if (auto rest = after("rossoctl-kernel=")) facts.kernelRelease = cleanLine(*rest);
        if (auto rest = after("rossoctl-boot=")) facts.bootId = cleanLine(*rest);
        if (auto rest = after("rossoctl-gateway=")) {
            const std::string gateway = routeAddressText(*rest);
            if (!gateway.empty() && gateway != "0.0.0.0" &&
                std::find(facts.gateways.begin(), facts.gateways.end(), gateway) ==
                    facts.gateways.end())
                facts.gateways.push_back(gateway);
        }
    }
    return facts;
}

std::string capabilityNames(unsigned long long mask) {
    static const char* const names[] = {"CHOWN",
                                        "DAC_OVERRIDE",
                                        "DAC_READ_SEARCH",
                                        "FOWNER",
                                        "FSETID",
                                        "KILL",
                                        "SETGID",
                                        "SETUID",
                                        "SETPCAP",
                                        "LINUX_IMMUTABLE",
                                        "NET_BIND_SERVICE",
                                        "NET_BROADCAST",
                                        "NET_ADMIN",
                                        "NET_RAW",
                                        "IPC_LOCK",
                                        "IPC_OWNER",
                                        "SYS_MODULE",
                                        "SYS_RAWIO",
                                        "SYS_CHROOT",
                                        "SYS_PTRACE",
                                        "SYS_PACCT",
                                        "SYS_ADMIN",
                                        "SYS_BOOT",
                                        "SYS_NICE",
                                        "SYS_RESOURCE",
                                        "SYS_TIME",
                                        "SYS_TTY_CONFIG",
                                        "MKNOD",
                                        "LEASE",
                                        "AUDIT_WRITE",
                                        "AUDIT_CONTROL",
                                        "SETFCAP",
                                        "MAC_OVERRIDE",
                                        "MAC_ADMIN",
                                        "SYSLOG",
                                        "WAKE_ALARM",
                                        "BLOCK_SUSPEND",
                                        "AUDIT_READ",
                                        "PERFMON",
                                        "BPF",
                                        "CHECKPOINT_RESTORE"};
    std::string out;
    for (unsigned bit = 0; bit < 64; ++bit) {
        if (!(mask & (1ULL << bit))) continue;
        const std::string name = bit < std::size(names) ? names[bit] : fmt::format("cap {}", bit);
        out += (out.empty() ? "" : ", ") + name;
    }
    return out;
}

Finding hostIsolationLive(const HostLiveInputs& inputs) {
    Verdicts out;
    if (!inputs.pod.ran) {
        out.doubt(inputs.pod.failure +
                  ": what the container really has is not read; live part "
                  "unproven");
    } else {
        out.finding.evidence.push_back(
            "read in the pod with its own tools: the agent could forge these lines, so they can "
            "show the boundary open but only repeat the spec when they show it closed");
        judgeProcess(out, inputs.pod.self, "the probe's shell", inputs.ownKernel);
        judgeProcess(
            out, inputs.pod.pid1,
            "PID 1" + (inputs.pod.pid1.name.empty() ? "" : " (" + inputs.pod.pid1.name + ")"),
            inputs.ownKernel);
    }
    // Whose view of the network and of PID 1 counts: the trusted probe's, else the pod's.
    const IsolationFacts* view = inputs.trusted ? &*inputs.trusted : &inputs.pod;
    const std::string viewer = inputs.trusted ? "the trusted probe" : "the pod";
    if (inputs.trusted && !inputs.trusted->ran)
        out.doubt("the trusted probe: " + inputs.trusted->failure +
                  ": whether PID 1 and the network are the node's is not read");
    if (view->ran) {
        std::vector<std::string> nodeOwn;
        for (const auto& address : inputs.nodeAddresses)
            if (!isLoopback(address)) nodeOwn.push_back(address);
        std::vector<std::string> shared;
        for (const auto& address : view->localAddresses)
            if (std::find(nodeOwn.begin(), nodeOwn.end(), address) != nodeOwn.end())
                shared.push_back(address);
        if (!shared.empty())
            out.fail(fmt::format(
                "{} holds the node's address {} on an interface: the network namespace is the "
                "node's",
                viewer, shared.front()));
        else if (nodeOwn.empty())
            out.finding.evidence.push_back(
                "the node reports no address other than loopback: whether the interfaces are "
                "the node's is left to spec.hostNetwork");
        // A namespace always has 127.0.0.1: none read means /proc/net was not readable.
        else if (view->localAddresses.empty() && inputs.ownKernel.empty())
            out.doubt(
                fmt::format("{} read no local address (/proc/net/fib_trie and if_inet6): "
                            "whether the interfaces are the node's is not read",
                            viewer));
        else if (view->localAddresses.empty())
            out.finding.evidence.push_back(fmt::format(
                "{} read no local address ({}): its interfaces are that kernel's; whether they "
                "are the node's is left to spec.hostNetwork",
                viewer, inputs.ownKernel));
        else
            out.finding.evidence.push_back(
                fmt::format("{} has {} local addresses, none of the node's ({})", viewer,
                            view->localAddresses.size(), nodeOwn.front()));
        if (inputs.trusted) {
            // Its own shell as nobody: a node's init is root, the pause container 65535.
            const std::string nobody = fmt::format("{0} {0} {0} {0}", kTrustedProbeUser);
            if (view->pid1.name == kTrustedProbeInit && view->pid1.uid == nobody &&
                view->processes <= kOwnNamespaceProcesses)
                out.finding.evidence.push_back(fmt::format(
                    "the trusted probe's PID 1 is its own {} ({} processes visible): a PID "
                    "namespace of its own, not the node's",
                    kTrustedProbeInit, view->processes));
            else
                out.fail(fmt::format(
                    "the trusted probe sees PID 1 {} (uid {}) and {} processes: it is in a PID "
                    "namespace it shares (the node's, hostPID, or the agent's)",
                    view->pid1.name.empty() ? "(unreadable)" : view->pid1.name,
                    view->pid1.uid.empty() ? "unreadable" : view->pid1.uid, view->processes));
        } else {
            out.finding.evidence.push_back(fmt::format(
                "the pod sees PID 1 {} and {} processes (its own view; --trusted-probe reads "
                "whether the PID namespace is the node's)",
                view->pid1.name.empty() ? "(unreadable)" : view->pid1.name, view->processes));
        }
    }
    if (out.finding.verdict == Verdict::Pass && inputs.ownKernel.empty())
        out.finding.evidence.push_back(
            "not root, no capability beyond NET_BIND_SERVICE (effective or bounding), "
            "NoNewPrivs 1, a seccomp filter");
    else if (out.finding.verdict == Verdict::Pass)
        out.finding.evidence.push_back(
            "not root, no capability beyond NET_BIND_SERVICE (effective or bounding), in a "
            "kernel of the pod's own");
    return out.finding;
}

}  // namespace rossoctl::verify
