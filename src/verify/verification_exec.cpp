// How a verification runs a probe: an exec in the pod (or the trusted probe's container) that
// rides out an apiserver outage, and the trusted probe started once for every check using it.
#include <fmt/format.h>

#include "rossoctl/kube/exec.hpp"
#include "rossoctl/kube/wait.hpp"
#include "verification.hpp"

namespace rossoctl::verify {

using std::chrono::milliseconds;

// How long a probe's exec waits for an apiserver to come back: --timeout, at most a minute.
milliseconds Verification::outageBudget() const {
    const milliseconds cap = std::chrono::minutes(1);
    return options_.timeout.count() > 0 ? std::min(options_.timeout, cap) : cap;
}

// The first outage seen; the checks it broke stay unproven, and the run exits 1.
void Verification::noteIfOutage(const std::exception& error) {
    if (!kube::isOutage(error)) return;
    std::lock_guard lock(runErrorMutex_);
    if (runError_.empty()) runError_ = error.what();
}

namespace {

bool isContainerGone(const kube::ApiError& error) {
    return error.code() == 500 &&
           std::string_view(error.what()).find("container not found") != std::string_view::npos;
}

}  // namespace

ProbeOutput Verification::exec(kube::Client& client, const std::string& pod,
                               const std::vector<std::string>& command, milliseconds timeout,
                               const std::string& container) {
    ProbeOutput output;
    kube::ExecRequest request;
    request.namespaceName = ns_;
    request.pod = pod;
    // Another container (a trusted probe) may run a probe that needs only the network.
    request.container = container.empty() ? inputs_.container.value("name", "") : container;
    request.command = command;
    request.timeout = timeout;
    try {
        // An exec the apiserver's outage refused or cut is run again once it is back (a
        // probe only reads, or writes the same canary again), within --timeout: the outage
        // is not the sandbox's answer. A probe's own time-out is a result, never retried.
        kube::CapturedExec captured;
        kube::rideOutOutage(clock_, outageBudget(), options_.cancel, [&] {
            try {
                captured = kube::execCapture(client, request, {kProbeOutputBytes, timeout});
            } catch (const kube::ApiError& error) {
                // The kubelet's answer for a container that ended (a 500 through the API
                // server): no outage to wait out.
                if (!isContainerGone(error)) throw;
                output.containerGone = true;
            }
        });
        if (output.containerGone) {
            output.started = false;
            output.failure = fmt::format("container {} no longer runs (the node does not find it)",
                                         request.container);
            return output;
        }
        output.exitCode = captured.result.exitCode;
        output.timedOut = captured.result.timedOut;
        output.stdoutText = std::move(captured.stdoutText);
        output.stderrText = std::move(captured.stderrText);
        output.failure = captured.result.message;
        output.started = captured.result.message.empty();
        // A cut output is never parsed: the probe's answer is unproven.
        if (captured.end == kube::CaptureEnd::Truncated) {
            output.started = false;
            output.failure = captured.whyCut();
        }
    } catch (const std::exception& error) {
        noteIfOutage(error);
        // The API refused the exec or the stream broke: the run failed, not the sandbox.
        output.started = false;
        output.failure = error.what();
        std::lock_guard lock(mutex_);
        runProblems_.push_back(
            fmt::format("exec {} in pod {}: {}", command.front(), pod, error.what()));
    }
    return output;
}

ProbeOutput Verification::execInCurrentPod(const std::vector<std::string>& command,
                                           milliseconds timeout, const std::string& container) {
    std::unique_ptr<kube::Client> client;
    try {
        client = newClient_();
    } catch (const std::exception& error) {
        ProbeOutput output;
        output.started = false;
        output.failure = error.what();
        std::lock_guard lock(mutex_);
        runProblems_.push_back(std::string("new connection: ") + error.what());
        return output;
    }
    return exec(*client, podName_, command, timeout, container);
}

ExecInContainer Verification::execIn(const std::string& pod) {
    return [this, pod](const std::vector<std::string>& command, const std::string& container) {
        return exec(client_, pod, command, kProbeTimeout, container);
    };
}

// The egress probe runs where --trusted-probe says; a probe site that cannot start
// leaves that live part unproven (it never falls back to the pod's own tools).
void Verification::startProbeSite() {
    const std::string target = inputs_.container.value("name", "");
    egressSite_ = podProbeSite(target);
    if (options_.trustedProbeImage.empty()) return;
    if (inputs_.pod["spec"].value("shareProcessNamespace", false)) {
        // Every container then sees the probe's processes and could forge its answer.
        egressSite_ = ProbeSite{"", options_.trustedProbeImage};
        trustedProbeProblem_ = fmt::format(
            "pod {} sets shareProcessNamespace: its containers could write into a trusted "
            "probe's output or stop its tools, so no probe in it is trusted; live part "
            "unproven",
            podName_);
        return;
    }
    TrustedProbeOptions trusted;
    trusted.image = options_.trustedProbeImage;
    trusted.cancel = options_.cancel;
    step(fmt::format("adding ephemeral container ({}) to pod {} for the live probes", trusted.image,
                     podName_));
    try {
        // On a connection of its own: this runs on the egress check's thread.
        auto client = newClient_();
        egressSite_ = startTrustedProbe(*client, clock_, inputs_.pod, trusted);
        // Read first, while its processes are only its own: the egress and API-server probes
        // that run in it next would count as processes of a shared PID namespace (CI of
        // stop 51: 12 seen, a false fail of gVisor's host isolation).
        trustedFacts_ = parseIsolationFacts(
            exec(*client, podName_, isolationProbeCommand(), kProbeTimeout, egressSite_.container));
    } catch (const TrustedProbeUnavailable& error) {
        egressSite_ = ProbeSite{"", trusted.image};
        trustedProbeProblem_ = error.what();
    } catch (const Error& error) {
        // Forbidden: the user asked for something they may not do; not a verdict.
        egressSite_ = ProbeSite{"", trusted.image};
        trustedProbeProblem_ = error.what();
        trustedProbeRefused_ = true;
    }
}
}  // namespace rossoctl::verify
