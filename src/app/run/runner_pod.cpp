// The run's pod: a Sandbox claimed from a SandboxWarmPool, a bare warm pod, or a new pod; then
// the wait until it runs with its work dir mounted.
#include <fmt/format.h>

#include "rossoctl/app/limit_range.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/run/pod_refusal.hpp"
#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/app/run/report.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod_failure.hpp"
#include "runner_internal.hpp"

namespace rossoctl::app::run {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {

std::string randomSuffix(Random& random) {
    return fmt::format("{:08x}", random.next());
}

// Why a pod will never get to Running, or empty while it still may.
std::string podCannotRun(const json& pod) {
    const json status = pod.value("status", json::object());
    const std::string phase = status.value("phase", "");
    if (phase == "Succeeded" || phase == "Failed")
        return fmt::format("ended ({}{})", phase,
                           status.contains("reason") ? ": " + status.value("reason", "") : "");
    return model::podStartFailure(pod).value_or("");
}

bool containerRunning(const json& pod) {
    const json status = pod.value("status", json::object());
    if (status.value("phase", "") != "Running") return false;
    for (const auto& container : status.value("containerStatuses", json::array()))
        if (container.value("state", json::object()).contains("running")) return true;
    return false;
}

}  // namespace

void Run::acquirePod() {
    const long timeoutSeconds = ceilSeconds(request_.timeout);
    if (request_.fromPool && request_.claimFromWarmPool) {
        const std::string pool =
            request_.warmPool.empty() ? warmPoolName(request_.shape) : request_.warmPool;
        claim_ = createClaim(client_, clock_, request_.namespaceName, pool, timeoutSeconds,
                             request_.keep);
        outcome_.claim = claim_.value("metadata", json::object()).value("name", "");
        const auto sandbox = waitClaimedSandbox(client_, clock_, cancel_, request_.namespaceName,
                                                claim_, request_.startTimeout);
        if (!sandbox) throw Cancelled{};
        outcome_.pod = *sandbox;  // upstream names a Sandbox's pod after it
        // A Sandbox the controller created for the claim is named after it; one adopted
        // from the pool keeps the pool's name (upstream's claim controller).
        outcome_.warm = *sandbox != outcome_.claim;
        if (!outcome_.warm)
            outcome_.coldStartReason = claimColdStartReason(claim_, request_.warmPoolAsFound);
        specIsOurs_ = request_.warmPoolIsOurs;
        return;
    }
    if (request_.fromPool) {
        const auto claimed =
            claimWarmPod(client_, clock_, request_.namespaceName, request_.shape, timeoutSeconds,
                         currentRunOwner(client_.random()), request_.keep);
        if (claimed) {
            outcome_.pod = claimed->name;
            outcome_.warm = true;
            podSeen_ = claimed->pod;
            specIsOurs_ = true;  // a warm pod of reconcilePool's, of this shape
            // Keep the pool at its size: the replacement starts while this run goes on.
            client_.create(kube::resources::pods(), request_.namespaceName,
                           warmPodManifest(request_.shape, claimed->poolLifetimeSeconds));
            return;
        }
        note("no warm pod matches this run; starting a new pod");
        outcome_.coldStartReason =
            "--pool found no SandboxWarmPool of this run's shape and no warm pod of it "
            "Running with --timeout left before its deadline";
    } else {
        outcome_.coldStartReason = "a new pod for this run (no --pool)";
    }
    const std::string name = kRunPodNamePrefix + randomSuffix(client_.random());
    json manifest = runPodManifest(name, request_.shape, timeoutSeconds);
    // Lets a later run (or gc) tell this pod from a live run's once this process is gone;
    // a pod kept on purpose has no owner to outlive.
    if (!request_.keep)
        manifest["metadata"]["annotations"][kRunOwnerAnnotation] =
            currentRunOwner(client_.random());
    else
        manifest["metadata"]["annotations"][kKeptAnnotation] = "true";
    // Only a pod this run created is cleaned up: a 4xx created nothing (after a 409 the name
    // is another's pod). A POST cut short (Ctrl-C, a lost connection, a 5xx) may have: too.
    try {
        created_ = client_.create(kube::resources::pods(), request_.namespaceName, manifest);
    } catch (const kube::ApiError& error) {
        if (error.code() >= 500) outcome_.pod = name;
        if (error.code() == 403) explainLimitRange();
        if (auto why = explainRunPodRefusal(client_, error, request_.namespaceName, request_.shape);
            !why.empty())
            throw Error(why);
        throw;
    } catch (...) {
        outcome_.pod = name;
        throw;
    }
    outcome_.pod = name;
    specIsOurs_ = true;
}

void Run::waitRunning() {
    // Claimed while Running; a claim's Sandbox is Ready, warm or cold, once it is bound.
    if (outcome_.warm || !outcome_.claim.empty()) return;
    kube::WaitOptions options;
    options.timeout = request_.startTimeout;
    options.cancel = cancel_;
    // The POST's answer stands in for a LIST: a pod just created is not running yet.
    options.initialList = initialListOf(created_);
    std::string last = "not found";
    std::string failure;  // set, not thrown: the predicate runs inside the watch stream
    json failed;          // the pod as it was when it failed
    auto result = kube::waitForObject(
        client_, clock_, kube::resources::pods(), request_.namespaceName, outcome_.pod, options,
        [&](const std::optional<json>& pod) {
            if (!pod) return false;
            failure = podCannotRun(*pod);
            last = pod->value("status", json::object()).value("phase", "Pending");
            if (!failure.empty()) failed = *pod;
            if (!containerRunning(*pod)) return !failure.empty();
            podSeen_ = *pod;  // its image digest and node, for the report
            return true;
        });
    if (result.outcome == kube::WaitOutcome::Cancelled) throw Cancelled{};
    if (!failure.empty()) {
        // "ended (Failed)" alone does not say why: the container's status or events do.
        std::string detail;
        if (failure.rfind("ended", 0) == 0)
            detail = runPodEndDetail(client_, request_.namespaceName, failed);
        throw Error(fmt::format("pod {}: {}{}{}", outcome_.pod, failure,
                                detail.empty() ? "" : ": " + detail,
                                missingTool(failure + detail) ? imageToolsHint() : ""));
    }
    if (!result.satisfied())
        throw Error(fmt::format(
            "pod {} did not start within {}s (still {}); check the namespace's quota and "
            "events: kubectl -n {} describe pod {}",
            outcome_.pod, ceilSeconds(request_.startTimeout), last, request_.namespaceName,
            outcome_.pod));
}

// A pod someone else's template made may not mount the work dir, or not yet while it is
// reported Running: wait until it is mounted. A spec rossoctl wrote has it as an emptyDir,
// which the kubelet mounts before it starts the container: no exec for that (issue 31).
void Run::waitWorkdirMounted() {
    if (specIsOurs_) return;
    for (int attempt = 0;; ++attempt) {
        checkCancelled();
        auto probeRequest = execRequest(mountedCommandLine(request_.shape.workdir));
        probeRequest.timeout = request_.startTimeout;
        const auto probe = kube::execCapture(client_, probeRequest, {4096, request_.startTimeout});
        if (!probe.complete())
            throw Error(fmt::format("pod {}: checking that {} is mounted: {}", outcome_.pod,
                                    request_.shape.workdir, probe.whyCut()));
        if (probe.result.exitCode == 0 && probe.result.message.empty()) return;
        if (attempt >= 50)
            throw Error(
                fmt::format("pod {}: {} is not mounted in the container ({}); does "
                            "the image have sh and grep?",
                            outcome_.pod, request_.shape.workdir,
                            firstLine(probe.stderrText + probe.result.message)));
        clock_.sleepFor(milliseconds(100));
    }
}

// A pod the LimitRange refuses gets a 403 that names only the bound: said as agents import
// says it, naming the flag and the LimitRange. One LIST, on this failure path only (a run
// that fits pays nothing); no answer, or nothing broken, leaves the server's own error.
void Run::explainLimitRange() {
    std::string why;
    try {
        why = limitRangeViolation(
            client_.list(kube::resources::limitRanges(), request_.namespaceName),
            request_.namespaceName, request_.shape.cpu, request_.shape.memory);
    } catch (const std::exception&) {
        return;
    }
    if (!why.empty()) throw Error(why + "; nothing ran");
}

// A message of the runtime's that a program is not in the image (sh, sleep, tar).
bool Run::missingTool(const std::string& message) {
    return message.find("executable file not found") != std::string::npos ||
           message.find("no such file or directory") != std::string::npos;
}

// What a run needs of --image, for an error that a program was missing.
std::string Run::imageToolsHint() const {
    return fmt::format(
        "; --image {} must have sh and sleep (which keeps the pod), and tar for --file, "
        "--env, --stdin and --artifacts: a distroless or scratch image has none, so use one "
        "with a shell (the default is {})",
        request_.shape.image, kDefaultRunImage);
}

}  // namespace rossoctl::app::run
