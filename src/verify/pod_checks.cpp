// A verdict about the sandbox, not one container of one pod: every running container's cgroup,
// the pod its template makes next, and a second finding folded into the first.
#include "rossoctl/verify/pod_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "json_access.hpp"
#include "probe_text.hpp"
#include "rossoctl/model/egress_gate.hpp"
#include "rossoctl/verify/probe_site.hpp"

namespace rossoctl::verify {

using json_access::arrayAt;
using json_access::at;
using json_access::stringAt;
using nlohmann::json;

// A hostile server's wrong types make no exception here: the run would end in an error, where
// the field read as absent gives unproven (review 61 #10).
namespace {

bool isRunning(const json& pod, const char* statusesKey, const std::string& name) {
    // A container with no name (a hostile server's) is never probed: an exec without one runs
    // in the pod's first container, whose limits are not its own (review 64 L1).
    if (name.empty()) return false;
    for (const auto& entry : arrayAt(at(pod, "status"), statusesKey))
        if (stringAt(entry, "name") == name) return !at(at(entry, "state"), "running").is_null();
    return false;
}

}  // namespace

bool ephemeralContainerEnded(const json& pod, const std::string& name) {
    for (const auto& entry : arrayAt(at(pod, "status"), "ephemeralContainerStatuses"))
        if (stringAt(entry, "name") == name) {
            const json& state = at(entry, "state");
            return state.is_object() && state.contains("terminated") &&
                   !state.contains("running") && !state.contains("waiting");
        }
    return false;
}

RunningContainers runningContainers(const json& pod) {
    RunningContainers out;
    const json& spec = json_access::podSpec(pod);
    auto consider = [&](const json& container, const char* statusesKey, const char* what) {
        const std::string name = stringAt(container, "name");
        if (isRunning(pod, statusesKey, name))
            out.running.push_back({container, what});
        else
            out.notes.push_back(fmt::format("{} {} is not running", what, name));
    };
    // A sidecar (restartPolicy Always) runs beside the agent; other init containers are done.
    for (const auto& container : arrayAt(spec, "initContainers"))
        if (stringAt(container, "restartPolicy") == "Always")
            consider(container, "initContainerStatuses", "sidecar");
        else
            out.finished.push_back(stringAt(container, "name", "?"));
    for (const auto& container : arrayAt(spec, "containers"))
        consider(container, "containerStatuses", "container");
    return out;
}

namespace {

// Why the /bin/sh exec'd in `container` may run the pod's code, or "": the shell or what it
// loads (libc, the loader, /etc/ld.so.preload) in a place the pod writes, or a loader variable
// in its env, which an exec inherits (review 67 H4).
std::string shellNotTheImages(const json& container) {
    for (const char* path : {"/bin/sh", "/usr/bin/sh", "/lib/ld.so", "/lib64/ld.so",
                             "/usr/lib/libc.so", "/etc/ld.so.preload"})
        if (std::string place = writableToolPlace(path, container); !place.empty()) return place;
    // The loader's variables, and what a shell (bash as sh too) sources, imports, traces or
    // splits by at its start (review 68 H6: SHELLOPTS=xtrace, BASH_XTRACEFD=1 and PS4 print
    // what verify reads).
    constexpr std::string_view shellReads =
        " ENV SHELLOPTS PS1 PS2 PS3 PS4 IFS CDPATH GLOBIGNORE POSIXLY_CORRECT PROMPT_COMMAND "
        "EXECIGNORE FUNCNEST HISTFILE TMOUT INPUTRC GLIBC_TUNABLES GCONV_PATH LOCPATH ";
    for (const auto& env : arrayAt(container, "env"))
        if (const std::string name = stringAt(env, "name");
            name.rfind("LD_", 0) == 0 || name.rfind("BASH", 0) == 0 ||
            (!name.empty() && name.find(' ') == std::string::npos &&
             shellReads.find(" " + name + " ") != std::string_view::npos))
            return fmt::format("its env sets {}, which that shell or its loader obeys",
                               json_access::shortened(name, 63));
    if (!arrayAt(container, "envFrom").empty())
        return "its env takes keys from envFrom, which may set LD_PRELOAD for that shell";
    return "";
}

}  // namespace

Finding limitsLiveEveryContainer(const json& pod, const ExecInContainer& exec, bool ownKernel) {
    Finding live;
    live.verdict = Verdict::Pass;
    live.probe = ownKernel ? "meminfo" : "cgroup";
    auto containers = runningContainers(pod);
    for (const auto& container : arrayAt(json_access::podSpec(pod), "ephemeralContainers")) {
        const std::string name = stringAt(container, "name");
        if (ephemeralContainerEnded(pod, name)) {
            live.evidence.push_back(fmt::format(
                "ephemeral container {} has ended (it never restarts): nothing to limit", name));
            continue;
        }
        // The API gives it no limits, so only a reading from inside it could show one, and
        // that is its own (its image, its mounts over /sys/fs/cgroup: attack 60 L1); one yet to
        // start runs unlimited when it does (L2). Asked only whether it is still there.
        const bool running = isRunning(pod, "ephemeralContainerStatuses", name);
        if (running && exec(cgroupProbeCommand(), name).containerGone) {
            live.evidence.push_back(fmt::format(
                "ephemeral container {}: ended before it was read: nothing to limit", name));
            continue;
        }
        absorb(live, probe_text::unproven(fmt::format(
                         "ephemeral container {} {}: the API gives it no limits of its own, and a "
                         "reading from inside it (its image, its mounts) proves none",
                         name, running ? "runs" : "has not ended")));
    }
    for (const auto& name : containers.finished)
        live.evidence.push_back(
            fmt::format("init container {} has finished: nothing to limit", name));
    for (const auto& note : containers.notes)
        absorb(live, probe_text::unproven(note + ": its cgroup could not be read"));
    for (const auto& [container, what] : containers.running) {
        const std::string name = stringAt(container, "name");
        const ProbeOutput output = exec(cgroupProbeCommand(), name);
        const std::string prefix = fmt::format("{} {}: ", what, name);
        if (!output.started) {
            absorb(live, probe_text::notStarted(output, "sh"), prefix);
            continue;
        }
        if (ownKernel) {
            absorb(live, limitsLiveOwnKernel(output, memoryLimitBytes(container)), prefix);
            continue;
        }
        absorb(live, limitsLive(output, memoryLimitBytes(container)), prefix);
        absorb(live, cpuLimitLive(output, cpuLimitMillis(container)), prefix);
        // The kubelet enforces the limits the spec declares whatever the reading says, but a
        // socket-buffer bound (cgroup v1), or v2 that needs none, rests on the reading alone: a
        // /bin/sh the pod rewrote says either (review 66 H3).
        if (const std::string place = shellNotTheImages(container); !place.empty())
            absorb(live,
                   probe_text::unproven(fmt::format(
                       "its cgroup files were read by /bin/sh, and {}: which cgroup version "
                       "holds it and whether its socket buffers are bounded are the pod's word",
                       place)),
                   prefix);
        // A volume over /sys shows the container files of the pod's own making in place of its
        // cgroup's, a socket-buffer bound among them (review 66 H3); one over /proc/meminfo
        // (runc allows it, for lxcfs) the MemTotal an own kernel's reading takes (review 68 L6).
        for (const auto& mounted : json_access::mountedPaths(container)) {
            const std::string& path = mounted.path;
            if (path == "/" || path == "/sys" || path.rfind("/sys/", 0) == 0 || path == "/proc" ||
                path.rfind("/proc/", 0) == 0)
                absorb(live,
                       probe_text::unproven(fmt::format(
                           "a volume is mounted at {}: the files read there may be the pod's own",
                           json_access::shortened(path, 253))),
                       prefix);
        }
    }
    if (containers.running.empty() && live.verdict == Verdict::Pass)
        live.verdict = Verdict::Unproven;
    if (ownKernel)
        // DESIGN's live half is the memory limit; the cpu quota is the node cgroup's alone.
        live.evidence.push_back(
            "the cpu limit is not visible in that kernel (its cgroup files are its own): the "
            "static limits stand for it");
    else if (!containers.running.empty())
        // Said, not judged: no cgroup file bounds it, so no reading could (attack 66 L1).
        live.evidence.push_back(
            "on the node's own kernel, memory the kernel charges to no cgroup (netlink socket "
            "queues) is not bounded by these limits: a stated limit; a kernel of the pod's own "
            "(gVisor) bounds it");
    return live;
}

json podFromTemplate(const json& sandbox, const json& pod) {
    const json podTemplate =
        sandbox.value("spec", json::object()).value("podTemplate", json::object());
    if (!podTemplate.contains("spec") || !podTemplate["spec"].is_object()) return nullptr;
    json labels = pod.value("metadata", json::object()).value("labels", json::object());
    const json templateLabels =
        podTemplate.value("metadata", json::object()).value("labels", json::object());
    for (const auto& [key, value] : templateLabels.items()) labels[key] = value;
    // The downward API shows a pod its annotations: the next pod's are the template's (and
    // whatever the controller keeps of this one's).
    json annotations = pod.value("metadata", json::object()).value("annotations", json::object());
    const json templateAnnotations =
        podTemplate.value("metadata", json::object()).value("annotations", json::object());
    if (!annotations.is_object()) annotations = json::object();
    if (templateAnnotations.is_object())
        for (const auto& [key, value] : templateAnnotations.items()) annotations[key] = value;
    const std::string name = sandbox.value("metadata", json::object()).value("name", "?");
    return {{"metadata",
             {{"name", fmt::format("(next pod of sandbox {})", name)},
              {"namespace", pod.value("metadata", json::object()).value("namespace", "")},
              {"labels", labels},
              {"annotations", annotations}}},
            {"spec", podTemplate["spec"]}};
}

Finding alongside(Finding first, const Finding& second, const std::string& prefix) {
    Finding extra;
    extra.verdict = second.verdict;
    for (const auto& line : second.evidence)
        if (std::find(first.evidence.begin(), first.evidence.end(), line) == first.evidence.end())
            extra.evidence.push_back(line);
    extra.forgeable = second.forgeable;
    absorb(first, extra, prefix);
    return first;
}

Finding podCgroupsLive(const json& pod, const std::optional<bool>& podCgroups,
                       const std::string& why, const std::string& gateImage) {
    if (podCgroups == true) return Finding{Verdict::Pass, {}, ""};
    const std::string node =
        podCgroups == false
            ? std::string("the node's kubelet makes no pod cgroups (cgroupsPerQOS false)")
            : fmt::format("whether the node's kubelet makes pod cgroups is not known ({})", why);
    std::vector<std::string> moved;
    const json& status = at(pod, "status");
    for (const char* key : {"initContainerStatuses", "containerStatuses"})
        for (const auto& entry : arrayAt(status, key))
            if (const json& count = at(entry, "restartCount");
                count.is_number_integer() && count.get<long long>() > 0)
                moved.push_back(fmt::format("container {} has restarted {}",
                                            json_access::shortened(stringAt(entry, "name"), 63),
                                            count.get<long long>() == 1
                                                ? std::string("once")
                                                : fmt::format("{} times", count.get<long long>())));
            else if (!count.is_null() && !count.is_number_integer())
                moved.push_back(fmt::format("container {} gives no restart count",
                                            json_access::shortened(stringAt(entry, "name"), 63)));
    const json& spec = json_access::podSpec(pod);
    const bool gateFirst = model::egressGateMismatch(spec, gateImage).empty();
    const auto& inits = arrayAt(spec, "initContainers");
    for (size_t i = 0; i < inits.size(); ++i)
        if (stringAt(inits[i], "restartPolicy") != "Always" && !(i == 0 && gateFirst))
            moved.push_back(fmt::format("init container {} runs and ends",
                                        json_access::shortened(stringAt(inits[i], "name"), 63)));
    for (const auto& container : arrayAt(spec, "ephemeralContainers"))
        if (const std::string name = stringAt(container, "name");
            ephemeralContainerEnded(pod, name) &&
            !isTrustedProbeContainer(container, stringAt(container, "image")))
            moved.push_back(
                fmt::format("ephemeral container {} has ended", json_access::shortened(name, 63)));
    if (!moved.empty())
        return Finding{Verdict::Unproven,
                       {fmt::format("{}, and {}: what it left in the pod's shared memory (SysV "
                                    "segments, /dev/shm) or memory-backed volumes is charged to "
                                    "no limit since (attack 67 C3)",
                                    json_access::fewOf(moved), node)},
                       ""};
    return Finding{Verdict::Pass,
                   {fmt::format("no container has restarted or ended; {}, so what a container "
                                "leaves in the pod's shared memory when it restarts later is "
                                "charged to no limit (a stated limit)",
                                node)},
                   ""};
}

}  // namespace rossoctl::verify
