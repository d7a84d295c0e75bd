#include "rossoctl/app/run/runner.hpp"

#include <fmt/format.h>

#include <thread>

#include "rossoctl/app/limit_range.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/run/pod_refusal.hpp"
#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/app/run/report.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/exec.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/kube/transport.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod_failure.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::app::run {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {

std::string randomSuffix(Random& random) {
    return fmt::format("{:08x}", random.next());
}

// How long cleanup keeps retrying a DELETE the API server cannot take (an outage), so a pod
// is not left behind by a short restart of the server.
constexpr milliseconds kCleanupGrace{30'000};

long ceilSeconds(milliseconds duration) {
    return static_cast<long>((duration.count() + 999) / 1000);
}

// 60s, 1500ms: a duration as a flag takes it.
std::string durationText(milliseconds duration) {
    return duration.count() % 1000 == 0 ? fmt::format("{}s", duration.count() / 1000)
                                        : fmt::format("{}ms", duration.count());
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

class Stopwatch {
  public:
    explicit Stopwatch(const Clock& clock) : clock_(clock), start_(clock.monotonic()) {}
    milliseconds lap() {
        const auto now = clock_.monotonic();
        auto elapsed = std::chrono::duration_cast<milliseconds>(now - start_);
        start_ = now;
        return elapsed;
    }

  private:
    const Clock& clock_;
    std::chrono::steady_clock::time_point start_;
};

struct Cancelled {};

class Run {
  public:
    Run(kube::Client& client, const Clock& clock, const kube::CancelFlag* cancel,
        const RunRequest& request, RunCallbacks& callbacks, RunOutcome& outcome)
        : client_(client),
          clock_(clock),
          cancel_(cancel),
          request_(request),
          callbacks_(callbacks),
          outcome_(outcome) {}

    void acquirePod() {
        const long timeoutSeconds = ceilSeconds(request_.timeout);
        if (request_.fromPool && request_.claimFromWarmPool) {
            const std::string pool =
                request_.warmPool.empty() ? warmPoolName(request_.shape) : request_.warmPool;
            claim_ = createClaim(client_, clock_, request_.namespaceName, pool, timeoutSeconds,
                                 request_.keep);
            outcome_.claim = claim_.value("metadata", json::object()).value("name", "");
            const auto sandbox = waitClaimedSandbox(
                client_, clock_, cancel_, request_.namespaceName, claim_, request_.startTimeout);
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
                claimWarmPod(client_, clock_, request_.namespaceName, request_.shape,
                             timeoutSeconds, currentRunOwner(client_.random()), request_.keep);
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
            if (auto why =
                    explainRunPodRefusal(client_, error, request_.namespaceName, request_.shape);
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

    void waitRunning() {
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
    void waitWorkdirMounted() {
        if (specIsOurs_) return;
        for (int attempt = 0;; ++attempt) {
            checkCancelled();
            auto probeRequest = execRequest(mountedCommandLine(request_.shape.workdir));
            probeRequest.timeout = request_.startTimeout;
            const auto probe =
                kube::execCapture(client_, probeRequest, {4096, request_.startTimeout});
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

    // --env values travel inside the uploaded tar (a 0600 file the wrapper sources and
    // removes), never in the exec URL that audit logs, -v 6 and the pod's process list show.
    void upload() {
        if (request_.env.empty() && !request_.stdinData && request_.uploadTar.empty()) return;
        std::string archive;
        TarWriter writer(archive, 0);
        if (!request_.env.empty()) writer.addFile(kEnvFileName, envFileContent(request_.env), 0600);
        // --stdin's bytes as a file the wrapper opens as the code's stdin (see
        // kStdinFileName): the exec's own stdin may lose its last bytes when it closes.
        if (request_.stdinData) writer.addFile(kStdinFileName, *request_.stdinData, 0600);
        archive += request_.uploadTar;  // entries without an end: tar archives concatenate
        const uint32_t high = client_.random().next(), low = client_.random().next();
        upload_ = endUpload(writer, archive, uploadEndMarker(high, low));
        if (!request_.env.empty()) upload_.ownFiles.push_back(kEnvFileName);
        if (request_.stdinData) upload_.ownFiles.push_back(kStdinFileName);
        // The command's stdin carries the files: one exec session uploads and runs (issue 31).
        if (archive.size() <= kUploadWithCommandMaxBytes) {
            uploadWithCommand_ = std::move(archive);
            return;
        }
        auto request = execRequest(uploadCommandLine(request_.shape.workdir, upload_));
        auto captured = kube::execCapture(client_, request, {4096, request_.startTimeout}, archive,
                                          /*halfCloseStdin=*/false);
        if (!captured.complete())
            throw Error(fmt::format("uploading files into pod {} failed: {}", outcome_.pod,
                                    captured.whyCut()));
        if (captured.result.exitCode != 0 || !captured.result.message.empty())
            throw Error(fmt::format("uploading files into pod {} failed (tar exit {}): {}",
                                    outcome_.pod, captured.result.exitCode,
                                    firstLine(captured.stderrText + captured.result.message)));
    }

    void runCommand() {
        const bool upload = !uploadWithCommand_.empty();
        const bool stdinFile = request_.stdinData.has_value(), envFile = !request_.env.empty();
        auto request = execRequest(
            upload ? uploadAndRunCommandLine(request_.shape.workdir, request_.command, upload_,
                                             stdinFile, envFile)
                   : runCommandLine(request_.shape.workdir, request_.command, stdinFile, envFile));
        request.timeout = request_.timeout;
        kube::ExecIo io;
        io.onStdout = callbacks_.onStdout;
        io.onStderr = callbacks_.onStderr;
        size_t offset = 0;
        if (upload) {
            const std::string& data = uploadWithCommand_;
            io.halfCloseStdin = false;  // the wrapper reads the archive's length
            io.readStdin = [&](char* buffer, size_t size) {
                const size_t n = std::min(size, data.size() - offset);
                std::copy_n(data.data() + offset, n, buffer);
                offset += n;
                return n;
            };
        }
        kube::ExecResult result;
        try {
            result = kube::execInPod(client_, request, io);
        } catch (const OutputCapReached& cap) {
            // The connection is closed on the way out; the command may still be writing.
            outcome_.exitCode = kExitRunFailed;
            outcome_.ended = {kEndedOutputCapReached,
                              fmt::format("its {} reached --output-max-bytes and the command was "
                                          "stopped",
                                          cap.stream),
                              ""};
            stopLeftovers();
            return;
        }
        outcome_.timedOut = result.timedOut;
        outcome_.exitCode = result.timedOut ? kExitTimedOut : result.exitCode;
        if (result.timedOut)
            outcome_.ended = {
                kEndedTimedOut,
                "the command ran longer than --timeout " + durationText(request_.timeout), ""};
        if (outcome_.exitCode == kExitKilled) outcome_.ended = whyKilled();
        // The exec's end stops nothing in the container: what the code left running would go
        // on (writing its files, with --keep until the pod's deadline).
        if (outcome_.timedOut || outcome_.exitCode == kExitKilled) stopLeftovers();
        if (!result.timedOut && !result.message.empty())
            throw Error(fmt::format("the command could not be started in pod {}: {}{}",
                                    outcome_.pod, firstLine(result.message),
                                    missingTool(result.message) ? imageToolsHint() : ""));
    }

    // Bounded like the command: what is left of --timeout plus a short margin, whatever the
    // pod streams; the extractor's caps bound the bytes. A command that timed out or was
    // killed still leaves what it wrote (runCommand stopped what it left running), marked
    // partial; a collection that fails keeps what arrived and says why instead of throwing,
    // so the code's result is still reported.
    void collect(milliseconds ranFor) {
        if (!request_.collect) return;
        std::string cut;
        if (outcome_.ended.reason == kEndedOutputCapReached)
            cut =
                "the command was stopped when its output reached --output-max-bytes; these are "
                "the files it had written by then";
        else if (outcome_.timedOut)
            cut =
                "the command ran longer than --timeout and was killed; these are the files it "
                "had written by then";
        else if (outcome_.exitCode == kExitKilled)
            cut =
                "the command was killed (exit 137) before it finished; these are the files it "
                "had written by then";
        ArtifactCollector collector(request_.artifactsDir, request_.artifactLimits);
        CappedText errors = CappedText::withLimit(4096);
        kube::ExecIo io;
        io.onStdout = [&](std::string_view bytes) { collector.feed(bytes); };
        io.onStderr = [&](std::string_view bytes) { errors.append(bytes); };
        auto request = execRequest(collectCommandLine(request_.shape.workdir));
        request.timeout = std::max(request_.timeout - ranFor, milliseconds(0)) + kCollectMargin;
        try {
            const auto result = kube::execInPod(client_, request, io);
            if (result.timedOut)
                throw Error(fmt::format("collecting them from pod {} took longer than {}s",
                                        outcome_.pod, ceilSeconds(request.timeout)));
            if (result.exitCode != 0 || !result.message.empty())
                throw Error(fmt::format("collecting them from pod {} failed (tar exit {}): {}{}",
                                        outcome_.pod, result.exitCode,
                                        firstLine(errors.text + result.message),
                                        result.exitCode == 127 ? imageToolsHint() : ""));
            collector.finish();
        } catch (const std::exception& error) {
            collector.abandon();
            if (cancel_ && cancel_->cancelled()) {
                outcome_.artifacts = collector.files();  // what arrived before Ctrl-C stays
                throw Cancelled{};
            }
            outcome_.artifacts = collector.files();
            outcome_.rejected = collector.rejected();
            outcome_.collectFailed = true;
            outcome_.artifactsPartial =
                (cut.empty() ? "" : cut + "; ") + ui::escapeErrorText(error.what());
            return;
        }
        outcome_.artifacts = collector.files();
        outcome_.rejected = collector.rejected();
        outcome_.artifactsPartial = cut;
    }

    void checkCancelled() const {
        if (cancel_ && cancel_->cancelled()) throw Cancelled{};
    }

    // With --keep: when the kubelet ends the pod, as the run last read it.
    void learnPodEnd() {
        if (!request_.keep) return;
        if (podSeen_) outcome_.podEndsAt = podEndsAt(*podSeen_);
        if (!outcome_.podEndsAt && created_.is_object()) outcome_.podEndsAt = podEndsAt(created_);
    }

    // For the report: the pod as the run last read it, or one GET when that does not name the
    // digest that ran (a claimed Sandbox's pod, which the run never read). Best effort.
    void learnRanPod() {
        if (!request_.report) return;
        if (!podSeen_ || ranPodOf(*podSeen_, request_.container).imageID.empty()) {
            if (auto pod = readPod(); pod && *pod) podSeen_ = **pod;
        }
        if (podSeen_) outcome_.ran = ranPodOf(*podSeen_, request_.container);
        if (outcome_.ran.image.empty()) outcome_.ran.image = request_.shape.image;
    }

  private:
    // A pod the LimitRange refuses gets a 403 that names only the bound: said as agents import
    // says it, naming the flag and the LimitRange. One LIST, on this failure path only (a run
    // that fits pays nothing); no answer, or nothing broken, leaves the server's own error.
    void explainLimitRange() {
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
    static bool missingTool(const std::string& message) {
        return message.find("executable file not found") != std::string::npos ||
               message.find("no such file or directory") != std::string::npos;
    }
    // What a run needs of --image, for an error that a program was missing.
    std::string imageToolsHint() const {
        return fmt::format(
            "; --image {} must have sh and sleep (which keeps the pod), and tar for --file, "
            "--env, --stdin and --artifacts: a distroless or scratch image has none, so use one "
            "with a shell (the default is {})",
            request_.shape.image, kDefaultRunImage);
    }

    // The run's pod: nullopt when it could not be read, an empty optional inside when it is gone.
    std::optional<std::optional<json>> readPod() {
        try {
            return client_.getIfExists(kube::resources::pods(), request_.namespaceName,
                                       outcome_.pod);
        } catch (const std::exception&) {
            if (cancel_ && cancel_->cancelled()) throw Cancelled{};
            return std::nullopt;
        }
    }

    // Exit 137: who sent the SIGKILL, as the pod's status (or its cgroup) tells.
    RunEnding whyKilled() {
        const auto pod = readPod();
        if (pod && *pod) podSeen_ = **pod;
        ContainerKill kill = pod ? containerKill(*pod, request_.container) : ContainerKill{};
        // A claim's Sandbox and pod go when the claim's shutdownTime passes.
        const std::string shutdown = claimShutdownTime(claim_);
        const auto shutdownAt = kube::parseTimestamp(shutdown);
        const bool podGoing = pod && (!*pod || terminating(**pod));
        if (podGoing && shutdownAt && clock_.now() >= *shutdownAt)
            return {kEndedDeadlineExceeded,
                    fmt::format("the pod was deleted at its claim's shutdownTime {}", shutdown),
                    ""};
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
    std::string oomKillsCounted() {
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
    // Best effort: a pod that cannot take the exec is found out by the collection after it.
    void stopLeftovers() {
        auto request = execRequest(stopCommandLine());
        try {
            kube::execCapture(client_, request, {4096, std::chrono::seconds(10)});
        } catch (const std::exception&) {
            if (cancel_ && cancel_->cancelled()) throw Cancelled{};
        }
    }
    kube::ExecRequest execRequest(std::vector<std::string> command) const {
        kube::ExecRequest request;
        request.namespaceName = request_.namespaceName;
        request.pod = outcome_.pod;
        request.container = request_.container;
        request.command = std::move(command);
        return request;
    }
    // The pod wrote it: one line, escaped, before it goes into a message for the terminal.
    static std::string firstLine(const std::string& text) {
        return ui::escapeForTerminal(text.substr(0, std::min<size_t>(text.find('\n'), 300)));
    }
    void note(const std::string& text) const {
        if (callbacks_.note) callbacks_.note(text);
    }

    kube::Client& client_;
    const Clock& clock_;
    const kube::CancelFlag* cancel_;
    const RunRequest& request_;
    RunCallbacks& callbacks_;
    RunOutcome& outcome_;
    json created_;                   // the run pod as its POST returned it (a cold run)
    json claim_ = json::object();    // the SandboxClaim as its POST returned it (a claimed run)
    std::optional<json> podSeen_;    // the run's pod as last read, running
    std::string uploadWithCommand_;  // files and env for the command's stdin, see upload()
    UploadShape upload_;             // the upload's length and end marker
    bool specIsOurs_ = false;        // rossoctl wrote the pod's spec: its work dir is an emptyDir
};

std::string leftBehind(const RunRequest& request, const RunOutcome& outcome,
                       const std::string& why) {
    return fmt::format(
        "could not delete pod {} ({}); it is left in namespace {}: delete it with \"kubectl -n "
        "{} delete pod {}\" (the next sandbox run in {} also removes it)",
        outcome.pod, why, request.namespaceName, request.namespaceName, outcome.pod,
        request.namespaceName);
}

// The claim's Sandbox and pod go with it (owner references).
void releaseClaimOf(const ClientFactory& cleanupClient, const RunRequest& request,
                    RunOutcome& outcome, RunCallbacks& callbacks) {
    if (request.keep) {
        if (callbacks.note)
            callbacks.note(fmt::format(
                "kept SandboxClaim {} (sandbox and pod {}): reach it with \"rossoctl sandbox exec "
                "{} -n {} -- sh\"; it ends by itself at its shutdownTime (in {}s: --timeout plus "
                "{}s), then \"rossoctl gc -n {}\" deletes it; to delete it sooner: kubectl -n {} "
                "delete sandboxclaim {}",
                outcome.claim, outcome.pod, outcome.pod, request.namespaceName,
                request.timeout.count() / 1000 + kDeadlineMarginSeconds, kDeadlineMarginSeconds,
                request.namespaceName, request.namespaceName, outcome.claim));
        return;
    }
    releaseClaim(*cleanupClient(), request.namespaceName, outcome.claim);
    outcome.deleted = true;
}

void deletePod(const ClientFactory& cleanupClient, const Clock& clock, const RunRequest& request,
               RunOutcome& outcome, RunCallbacks& callbacks) {
    if (!outcome.claim.empty()) {
        releaseClaimOf(cleanupClient, request, outcome, callbacks);
        return;
    }
    if (outcome.pod.empty()) return;
    if (request.keep) {
        if (callbacks.note)
            for (const auto& line :
                 keptPodLines(request.namespaceName, outcome.pod, request.shape.workdir,
                              outcome.podEndsAt, clock.now()))
                callbacks.note(line);
        return;
    }
    auto client = cleanupClient();
    kube::DeleteOptions options;
    options.gracePeriodSeconds = 0;  // nothing in it is worth waiting for
    try {
        // No cancel flag: cleanup is what Ctrl-C asked for, and it must not be cut short.
        kube::rideOutOutage(clock, kCleanupGrace, nullptr, [&] {
            try {
                client->remove(kube::resources::pods(), request.namespaceName, outcome.pod,
                               options);
            } catch (const kube::ApiError& error) {
                if (!error.isNotFound()) throw;
            }
        });
    } catch (const std::exception& error) {
        throw Error(leftBehind(request, outcome, error.what()), kExitRunFailed);
    }
    outcome.deleted = true;
}

// Runs cleanup on a path that already has an error to report: a failed cleanup is said too.
void deletePodAfterFailure(const ClientFactory& cleanupClient, const Clock& clock,
                           const RunRequest& request, RunOutcome& outcome,
                           RunCallbacks& callbacks) {
    try {
        deletePod(cleanupClient, clock, request, outcome, callbacks);
    } catch (const Error& error) {
        if (callbacks.note) callbacks.note(std::string("error: ") + error.what());
    }
}

// Pods of earlier runs in this namespace whose process was killed: best effort, never fatal.
// It works on a thread and a client of its own beside the run (issue 31: its LIST was on the
// critical path); its notes are said on the caller's thread once it is joined. Ctrl-C stops
// its client; the run's own pod is deleted by the run's cleanup whatever the reaper does.
class BackgroundReaper {
  public:
    BackgroundReaper(std::unique_ptr<kube::Client> client, std::string ns,
                     const kube::CancelFlag* cancel)
        : client_(std::move(client)),
          ns_(std::move(ns)),
          cancel_(cancel),
          thread_([this] { reap(); }) {}
    ~BackgroundReaper() {
        if (thread_.joinable()) thread_.join();
    }
    BackgroundReaper(const BackgroundReaper&) = delete;
    BackgroundReaper& operator=(const BackgroundReaper&) = delete;

    // Waits for it and returns what it has to say.
    std::vector<std::string> finish() {
        if (thread_.joinable()) thread_.join();
        return std::move(notes_);
    }

  private:
    void reap() noexcept {
        try {
            const Reaped reaped = reapLeftoverRunPods(*client_, ns_);
            for (size_t i = 0; i < reaped.deleted.size(); ++i)
                notes_.push_back(
                    fmt::format("deleted pod {}, {}", reaped.deleted[i], reaped.why.at(i)));
            for (const auto& why : reaped.skipped)
                notes_.push_back(fmt::format("note: kept a leftover run pod: {}", why));
        } catch (const std::exception& error) {
            if (cancel_ && cancel_->cancelled()) return;  // Ctrl-C: the next run looks again
            notes_.push_back(fmt::format(
                "note: could not look for pods left over by earlier runs: {}", error.what()));
        }
    }

    std::unique_ptr<kube::Client> client_;
    std::string ns_;
    const kube::CancelFlag* cancel_;
    std::vector<std::string> notes_;
    std::thread thread_;  // last: it starts once the members it uses exist
};

}  // namespace

RunOutcome runInPod(const RunClients& clients, const Clock& clock, const kube::CancelFlag* cancel,
                    const RunRequest& request, RunCallbacks& callbacks) {
    const ClientFactory& cleanupClient = clients.cleanup;
    RunOutcome outcome;
    // Made here, not on its thread: building a client reads the shared config.
    BackgroundReaper reaper(clients.parallel(), request.namespaceName, cancel);
    Run run(clients.main, clock, cancel, request, callbacks, outcome);
    Stopwatch watch(clock);
    auto cleanup = [&] {
        watch.lap();
        if (request.releaseClaimAfterExit && !outcome.claim.empty() && !request.keep &&
            !outcome.cancelled) {
            outcome.releasePending = true;
            return;
        }
        deletePod(cleanupClient, clock, request, outcome, callbacks);
        outcome.durations.cleanup = watch.lap();
    };
    // The reaper's notes are said on every way out, an error's included: a deleted pod is news.
    auto tellReaperNotes = [&] {
        for (const auto& note : reaper.finish())
            if (callbacks.note) callbacks.note(note);
    };
    auto cleanupAfterFailure = [&] {
        run.learnPodEnd();
        deletePodAfterFailure(cleanupClient, clock, request, outcome, callbacks);
        tellReaperNotes();
    };
    try {
        run.acquirePod();
        run.waitRunning();
        run.waitWorkdirMounted();
        outcome.durations.schedule = watch.lap();
        run.checkCancelled();
        run.upload();
        outcome.durations.upload = watch.lap();
        run.checkCancelled();
        run.runCommand();
        outcome.durations.run = watch.lap();
        run.checkCancelled();
        run.collect(outcome.durations.run);
        outcome.durations.collect = watch.lap();
        run.learnRanPod();
    } catch (const Cancelled&) {
        outcome.cancelled = true;
    } catch (const kube::TransportError& error) {
        if (!(cancel && cancel->cancelled())) {
            cleanupAfterFailure();
            throw;
        }
        outcome.cancelled = true;
    } catch (...) {
        if (cancel && cancel->cancelled()) {
            outcome.cancelled = true;
        } else {
            cleanupAfterFailure();
            throw;
        }
    }
    run.learnPodEnd();
    if (outcome.cancelled) {
        outcome.exitCode = kExitInterrupted;
        outcome.ended = {kEndedInterrupted, "interrupted (Ctrl-C)", ""};
    }
    cleanup();
    tellReaperNotes();
    return outcome;
}

}  // namespace rossoctl::app::run
