// What a run's outcome says of its pod: why the command was killed, the image and node that
// ran it, and when a kept pod ends.
#include <fmt/format.h>

#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/run/report.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "runner_internal.hpp"

namespace rossoctl::app::run {

using nlohmann::json;

// With --keep: when the kubelet ends the pod, as the run last read it.
void Run::learnPodEnd() {
    if (!request_.keep) return;
    if (podSeen_) outcome_.podEndsAt = podEndsAt(*podSeen_);
    if (!outcome_.podEndsAt && created_.is_object()) outcome_.podEndsAt = podEndsAt(created_);
}

// For the report: the pod as the run last read it, or one GET when that does not name the
// digest that ran (a claimed Sandbox's pod, which the run never read). Best effort.
void Run::learnRanPod() {
    if (!request_.report) return;
    if (!podSeen_ || ranPodOf(*podSeen_, request_.container).imageID.empty()) {
        if (auto pod = readPod(); pod && *pod) podSeen_ = **pod;
    }
    if (podSeen_) outcome_.ran = ranPodOf(*podSeen_, request_.container);
    if (outcome_.ran.image.empty()) outcome_.ran.image = request_.shape.image;
}

// The run's pod: nullopt when it could not be read, an empty optional inside when it is gone.
std::optional<std::optional<json>> Run::readPod() {
    try {
        return client_.getIfExists(kube::resources::pods(), request_.namespaceName, outcome_.pod);
    } catch (const std::exception&) {
        if (cancel_ && cancel_->cancelled()) throw Cancelled{};
        return std::nullopt;
    }
}

// Exit 137: who sent the SIGKILL, as the pod's status (or its cgroup) tells.
RunEnding Run::whyKilled() {
    const auto pod = readPod();
    if (pod && *pod) podSeen_ = **pod;
    ContainerKill kill = pod ? containerKill(*pod, request_.container) : ContainerKill{};
    // A claim's Sandbox and pod go when the claim's shutdownTime passes.
    const std::string shutdown = claimShutdownTime(claim_);
    const auto shutdownAt = kube::parseTimestamp(shutdown);
    const bool podGoing = pod && (!*pod || terminating(**pod));
    if (podGoing && shutdownAt && clock_.now() >= *shutdownAt)
        return {kEndedDeadlineExceeded,
                fmt::format("the pod was deleted at its claim's shutdownTime {}", shutdown), ""};
    if (!kill.reason.empty()) {
        if (kill.reason == kEndedOOMKilled && kill.memoryLimit.empty())
            kill.memoryLimit = request_.shape.memory;
        return {kill.reason, kill.message, kill.memoryLimit};
    }
    if (const std::string oom = oomKillsCounted(); !oom.empty())
        return {kEndedOOMKilled, oom, request_.shape.memory};
    return {kEndedKilled,
            "it got SIGKILL (exit 137); the pod's status does not say from whom (kill -9 "
            "inside the sandbox?)",
            ""};
}

// The OOM killer may take only the command and leave the container (and its status)
// running: the container's cgroup still counts the kill. Best effort, for a message.
std::string Run::oomKillsCounted() {
    try {
        const auto read = kube::execCapture(client_, execRequest(oomEventsCommandLine()),
                                            {4096, std::chrono::seconds(10)});
        if (!read.complete() || read.result.exitCode != 0) return {};
        const long kills = oomKillCount(read.stdoutText);
        if (kills <= 0) return {};
        return fmt::format(
            "it ran out of memory (the container's cgroup counts {} OOM kill{} under "
            "--memory {})",
            kills, kills == 1 ? "" : "s", request_.shape.memory);
    } catch (const std::exception&) {
        if (cancel_ && cancel_->cancelled()) throw Cancelled{};
        return {};
    }
}

}  // namespace rossoctl::app::run
