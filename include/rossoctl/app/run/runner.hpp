#pragma once
// One `sandbox run`: get a pod (claim a warm one or create one), wait until it runs, upload
// files, run the command with streams passed through live, collect artifacts, delete the pod.
// The pod is deleted on every path out, Ctrl-C and timeouts included, with a client that
// ignores the cancel flag (a warm run's claim, once its command has ended, may be left to the
// caller: releaseClaimAfterExit).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rossoctl/app/run/artifacts.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/clock.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::app::run {

inline constexpr int kExitTimedOut = 124;
inline constexpr int kExitRunFailed = 125;  // rossoctl itself failed (docker run's convention)
inline constexpr int kExitInterrupted = 130;
inline constexpr int kExitKilled = 137;  // 128 + SIGKILL: killed from outside (memory, kill -9)

struct RunRequest {
    std::string namespaceName;
    RunPodShape shape;
    std::vector<model::EnvVar> env;
    std::string uploadTar;  // tar entries without the end blocks (empty: nothing to upload)
    std::optional<std::string> stdinData;  // the command's stdin
    std::vector<std::string> command;
    std::chrono::milliseconds timeout{60'000};
    std::chrono::milliseconds startTimeout{120'000};
    bool collect = false;
    std::string artifactsDir;  // empty with collect: hash and list only
    ExtractLimits artifactLimits;
    bool keep = false;
    bool fromPool = false;
    // With fromPool: take a Sandbox of the shape's SandboxWarmPool with a SandboxClaim
    // (warm_pool.hpp) instead of a bare pool pod.
    bool claimFromWarmPool = false;
    // With claimFromWarmPool: the pool is rossoctl's own (warmPoolWrittenByRossoctl), so its
    // pods have the work dir as an emptyDir and need no check that it is mounted.
    bool warmPoolIsOurs = false;
    // With claimFromWarmPool: the SandboxWarmPool's name; empty for the shape's own
    // (warmPoolName). `container`: the one its template's pods run the code in.
    std::string warmPool;
    std::string container = kContainerName;
    // With a claim: once the command has ended (not on Ctrl-C or a failure of rossoctl's),
    // leave the claim's DELETE to the caller (releasePending, release.hpp) so that the exit
    // does not wait for it.
    bool releaseClaimAfterExit = false;
    // -o json or --report: learn the digest, node and runtime class that ran (RunOutcome::ran);
    // one GET of the pod after the command when what the run already read does not say.
    bool report = false;
    // With claimFromWarmPool: the pool as the run found it, to say why a claim cold-started.
    std::optional<nlohmann::json> warmPoolAsFound;
};

// Why a run ended (RunOutcome::ended.reason), each with its exit code.
inline constexpr const char* kEndedExited = "Exited";        // the command's own exit status
inline constexpr const char* kEndedTimedOut = "TimedOut";    // 124
inline constexpr const char* kEndedOOMKilled = "OOMKilled";  // 137
inline constexpr const char* kEndedDeadlineExceeded = "DeadlineExceeded";  // 137
inline constexpr const char* kEndedEvicted = "Evicted";                    // 137
inline constexpr const char* kEndedKilled = "Killed";  // 137, by someone the pod does not name
inline constexpr const char* kEndedOutputCapReached = "OutputCapReached";  // 125
inline constexpr const char* kEndedInterrupted = "Interrupted";            // 130

struct RunEnding {
    std::string reason = kEndedExited;
    std::string message;      // one line for stderr; empty for Exited
    std::string memoryLimit;  // OOMKilled: the container's limit
};

// Thrown by a RunCallbacks output callback when what it keeps reached its cap: the run stops
// the command and ends with OutputCapReached.
struct OutputCapReached {
    std::string stream;  // stdout or stderr
};

// What the report says of the pod that ran (read from objects the run had, or one GET).
struct RanPod {
    std::string image;    // the reference the pod asked for
    std::string imageID;  // the container status's imageID: the digest that ran
    std::string node;
    std::string runtimeClass;  // empty: the node's default
};

struct RunPhases {
    std::chrono::milliseconds schedule{0}, upload{0}, run{0}, collect{0}, cleanup{0};
};

struct RunOutcome {
    int exitCode = kExitRunFailed;
    bool timedOut = false;
    bool cancelled = false;
    std::string pod;
    bool warm = false;            // claimed from the pool (for a claim: the Sandbox it adopted)
    std::string coldStartReason;  // when not warm: why the run started a new pod
    std::string claim;            // the SandboxClaim that holds the pod's Sandbox, if any
    bool deleted = false;         // the pod is gone (not --keep)
    // With --keep: when the pod's activeDeadlineSeconds ends it, when the run read that.
    std::optional<std::chrono::system_clock::time_point> podEndsAt;
    // releaseClaimAfterExit: the claim is still there for the caller to release.
    bool releasePending = false;
    RunEnding ended;
    RanPod ran;  // with RunRequest::report
    std::vector<Artifact> artifacts;
    std::vector<std::string> rejected;
    // Why `artifacts` are not all the run meant to leave (the command timed out or was
    // killed, a cap was reached, the collection failed); empty when they are. What arrived
    // is kept either way.
    std::string artifactsPartial;
    // The collection itself failed (a cap, a damaged stream, the container gone), so rossoctl
    // did not deliver what was asked: exit 125 unless the command's own status says it failed.
    bool collectFailed = false;
    RunPhases durations;
};

struct RunCallbacks {
    std::function<void(std::string_view)> onStdout;
    std::function<void(std::string_view)> onStderr;
    std::function<void(const std::string&)> note;  // progress for stderr; may be unset
};

using ClientFactory = std::function<std::unique_ptr<kube::Client>()>;

// The clients of one run: `main` for the run itself; `parallel` makes one with its own
// connection that Ctrl-C stops (the reaper of earlier runs' pods works on it, beside the run);
// `cleanup` makes one Ctrl-C does not stop, for the delete that must follow it.
struct RunClients {
    kube::Client& main;
    ClientFactory parallel;
    ClientFactory cleanup;
};

// Throws (after cleanup) when rossoctl itself fails before the command's result is known; the
// outcome carries the code's result, and a failed collection (collectFailed) after it.
RunOutcome runInPod(const RunClients& clients, const Clock& clock, const kube::CancelFlag* cancel,
                    const RunRequest& request, RunCallbacks& callbacks);

// Collecting artifacts may take this long past what is left of --timeout, and no longer.
inline constexpr std::chrono::milliseconds kCollectMargin{15'000};

// Captured output (-o json) kept up to a cap; bytes past it are counted, never stored.
struct CappedText {
    // Implicit on purpose: whole text, no cap (tests and callers without one).
    CappedText(std::string whole = {}) : text(std::move(whole)) {}
    CappedText(const char* whole) : text(whole) {}
    static CappedText withLimit(size_t limit) {
        CappedText capped;
        capped.limit = limit;
        return capped;
    }
    void append(std::string_view bytes) {
        const size_t room = limit - std::min(limit, text.size());
        text.append(bytes.substr(0, room));
        if (bytes.size() > room) dropped += bytes.size() - room;
    }
    std::string text;
    size_t limit = SIZE_MAX;
    uint64_t dropped = 0;
};

// -o json: the report (report.hpp) plus {stdout, stderr}, and stdoutTruncated/stdoutDroppedBytes
// (and for stderr) when a cap cut the output.
nlohmann::json runResultJson(const RunOutcome& outcome, const CappedText& stdoutText,
                             const CappedText& stderrText, const std::string& namespaceName = {});

// Warm pool: pods of `shape` labelled rossoctl.dev/pool=warm.
struct PoolStatus {
    int warm = 0;  // Running and unclaimed
    int starting = 0;
    int created = 0;
    int deleted = 0;
    int skipped = 0;  // pool pods no request can name (an empty or invalid name): left alone
};
// Brings the pool of `shape` in ns to `size` pods (extra ones deleted newest first).
PoolStatus reconcilePool(kube::Client& client, const std::string& ns, const RunPodShape& shape,
                         int size, long lifetimeSeconds);
struct ClaimedPod {
    std::string name;
    nlohmann::json pod;            // as the claim's PATCH returned it
    long poolLifetimeSeconds = 0;  // the warm pod's own deadline, for its replacement
};
// Claims one Running warm pod whose deadline leaves room for the run; nullopt when none.
std::optional<ClaimedPod> claimWarmPod(kube::Client& client, const Clock& clock,
                                       const std::string& ns, const RunPodShape& shape,
                                       long timeoutSeconds, const std::string& claimer,
                                       bool kept = false);

}  // namespace rossoctl::app::run
