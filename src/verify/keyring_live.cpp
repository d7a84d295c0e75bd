// The live half of "nothing survives" for the kernel keyring: a key added (add_key) outlives
// the pod for its uid unless a seccomp filter refuses it, so every running container's live
// seccomp mode is read, since a node may ignore what the spec asks.
#include <fmt/format.h>

#include "json_access.hpp"
#include "probe_text.hpp"
#include "rossoctl/verify/isolation.hpp"
#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

void judgeSeccomp(Finding& finding, const ProcessStatus& status, const std::string& who,
                  const std::string& profile) {
    if (!status.readable || status.seccomp.empty()) {
        absorb(finding, probe_text::unproven(
                            who + ": no Seccomp line in its /proc status: whether it can reach "
                                  "the kernel keyring, which outlives the pod, is not known"));
    } else if (status.seccomp == "0") {
        absorb(finding,
               Finding{Verdict::Fail,
                       {fmt::format("{}: Seccomp: 0 (no filter, though the spec says {}): a key it "
                                    "adds to the kernel keyring (add_key) outlives the pod for "
                                    "its uid",
                                    who, profile.empty() ? "none" : profile)},
                       ""});
    } else if (status.seccomp == "2") {
        finding.evidence.push_back(
            profile == "RuntimeDefault"
                ? who +
                      ": Seccomp: 2 (a filter): the runtime's default profile is in force, and "
                      "it refuses add_key, keyctl and request_key"
                : fmt::format("{}: Seccomp: 2 (a filter, the spec's {}): whether it refuses "
                              "add_key is the static part's question",
                              who, profile.empty() ? "none" : profile));
    } else if (status.seccomp == "1") {
        finding.evidence.push_back(who + ": Seccomp: 1 (strict mode: no add_key)");
    } else {
        absorb(finding, probe_text::unproven(
                            fmt::format("{}: Seccomp: {}, a mode not known", who, status.seccomp)));
    }
}

}  // namespace

std::string seccompProfileType(const json& pod, const json& container) {
    const json& context = at(container, "securityContext");
    if (at(context, "privileged") == true) return "Unconfined";
    const std::string podProfile =
        stringAt(at(at(podSpec(pod), "securityContext"), "seccompProfile"), "type");
    return stringAt(at(context, "seccompProfile"), "type", podProfile);
}

Finding keyringLive(const IsolationFacts& facts, const std::string& container,
                    const std::string& profile, bool ownPid1) {
    Finding finding{Verdict::Pass, {}, "proc"};
    const std::string who = "container " + container;
    if (!facts.ran) {
        absorb(finding, probe_text::unproven(who + ": " + facts.failure +
                                             ": its live seccomp mode is not read"));
        return finding;
    }
    judgeSeccomp(finding, facts.self, who + " (a process exec'd in it)", profile);
    if (ownPid1)
        judgeSeccomp(finding, facts.pid1,
                     who + " PID 1" + (facts.pid1.name.empty() ? "" : " (" + facts.pid1.name + ")"),
                     profile);
    return finding;
}

Finding keyringLiveEveryContainer(const json& pod, const ExecInContainer& exec) {
    Finding live{Verdict::Pass, {}, "proc"};
    // With one PID namespace for the pod, PID 1 is the pause process, not the container's.
    const bool ownPid1 = at(podSpec(pod), "shareProcessNamespace") != true;
    auto containers = runningContainers(pod);
    const json status = pod.value("status", json::object());
    for (const auto& container : arrayAt(podSpec(pod), "ephemeralContainers"))
        for (const auto& entry : status.value("ephemeralContainerStatuses", json::array()))
            if (entry.value("name", "") == container.value("name", "") &&
                entry.value("state", json::object()).contains("running"))
                containers.running.push_back({container, "ephemeral container"});
    for (const auto& note : containers.notes)
        absorb(live, probe_text::unproven(note + ": its live seccomp mode is not read"));
    for (const auto& [container, what] : containers.running) {
        const std::string name = container.value("name", "");
        const ProbeOutput output = exec(isolationProbeCommand(), name);
        if (output.containerGone && what == "ephemeral container") {
            live.evidence.push_back(fmt::format(
                "ephemeral container {} ended before it was read: nothing runs in it", name));
            continue;
        }
        absorb(live, keyringLive(parseIsolationFacts(output), name,
                                 seccompProfileType(pod, container), ownPid1));
    }
    if (containers.running.empty())
        absorb(live, probe_text::unproven("no container runs: no live seccomp mode is read"));
    if (live.verdict == Verdict::Pass)
        live.evidence.push_back(
            "read in the pod with its own tools: the agent could forge these lines, so they can "
            "show the keyring open but only repeat the spec when they show it closed");
    return live;
}

}  // namespace rossoctl::verify
