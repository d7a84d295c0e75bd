#pragma once
// The report of one `sandbox run` (-o json, --report FILE): what ran (the image digest, node,
// runtime class), warm or cold and why, why it ended, each phase's time and every artifact's
// hash; and the report file, written whole or not at all.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/random.hpp"

namespace rossoctl::app::run {

// The run report (--report FILE): {exitCode, ended: {reason, message, memoryLimit}, timedOut,
// namespace, pod, claim, image, imageID, imageDigest, runtimeClass, node, start: warm|cold,
// warm, coldStartReason, durations: {schedule, upload, run, collect, cleanup, total} (ms),
// artifacts: [{path, bytes, sha256}], artifactsPartial, artifactsPartialReason}.
nlohmann::json runReportJson(const std::string& namespaceName, const RunOutcome& outcome);

// What a run cut by Ctrl-C left, after "interrupted; ": "pod NAME deleted" (`state`: deleted or
// kept), or, for a claim the pool had not given a pod yet, "sandboxclaim NAME deleted (...)".
std::string interruptedRunTarget(const RunOutcome& outcome, const std::string& state);

// The sha256:HEX digest in an imageID (docker-pullable://repo@sha256:..., repo@sha256:...,
// sha256:...); empty when it holds none.
std::string imageDigest(const std::string& imageID);
// What a pod object says of the image, node and runtime class of `container`.
RanPod ranPodOf(const nlohmann::json& pod, const std::string& container);
// The claim's spec.lifecycle.shutdownTime, or "".
std::string claimShutdownTime(const nlohmann::json& claim);
// Why a SandboxClaim got a new Sandbox instead of a warm one (upstream's claim controller
// bypasses the pool for a claim with env or volumeClaimTemplates, else adopts a ready sandbox
// of the pool when one is there): read from the claim and the pool as the run found it.
std::string claimColdStartReason(const nlohmann::json& claim,
                                 const std::optional<nlohmann::json>& pool);

// Writes `text` to `path` with mode 0644, atomically: a new file beside it (O_EXCL, a name from
// `random`), synced, then renamed over the path. A symlink at the path is replaced, never
// written through. Throws Error naming --report.
void writeReportFile(const std::string& path, const std::string& text, Random& random);

}  // namespace rossoctl::app::run
