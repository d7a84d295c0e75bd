#pragma once
// A pod `sandbox run --keep` kept: reached with the same CLI as a sandbox (sandbox exec, logs
// and cp take it as pod/NAME) and deleted with `sandbox delete pod/NAME`, or by gc once its
// deadline has ended it. Only a pod sandbox run made (its labels) is reached or deleted so:
// rossoctl never touches a pod it did not create.
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::app::run {

// Every pod sandbox run makes is named so (a random or the shape's suffix follows).
inline constexpr const char* kRunPodNamePrefix = "rossoctl-run-";

// "true" on a pod `sandbox run --keep` left on purpose (set when it is created).
inline constexpr const char* kKeptAnnotation = "rossoctl.dev/kept";

// Labels rossoctl.dev/run=true and app.kubernetes.io/managed-by=rossoctl: sandbox run made it.
bool madeBySandboxRun(const nlohmann::json& pod);
// madeBySandboxRun and kept on purpose (kKeptAnnotation).
bool keptRunPod(const nlohmann::json& pod);

// When the kubelet ends the pod: its start (else its creation) plus activeDeadlineSeconds.
std::optional<std::chrono::system_clock::time_point> podEndsAt(const nlohmann::json& pod);

// The run pod `name` in ns for sandbox exec, logs and cp (`verb`; `running`: exec and cp need it
// Running). Throws Error saying what to do when it is missing, was not made by sandbox run (a
// sandbox's own pod: the `verb` line on the sandbox), or (with `running`) has ended or is not
// running yet.
nlohmann::json reachableRunPod(kube::Client& client, const std::string& ns, const std::string& name,
                               bool running, const std::string& verb);

// What follows "sandbox/NAME not found" when NAME is a pod sandbox run made: "did you mean
// pod/NAME? ..."; "" otherwise. One GET, only for a name with kRunPodNamePrefix; never throws.
std::string runPodAdvice(kube::Client& client, const std::string& ns, const std::string& name);

// The lines `--keep` prints: when the pod ends by itself, then the rossoctl commands that reach
// it (exec, cp of WORKDIR/out) and delete it; not logs, which hold none of the run's output.
std::vector<std::string> keptPodLines(const std::string& ns, const std::string& pod,
                                      const std::string& workdir,
                                      std::optional<std::chrono::system_clock::time_point> endsAt,
                                      std::chrono::system_clock::time_point now);

// What `sandbox logs pod/NAME` says of a run pod: its container only sleeps (the run's command
// went through exec), so the run's output is not in its log; and how to look inside instead.
std::string runOutputNotInLog(const std::string& ns, const std::string& pod);

// Deletes run pod `name` in ns (UID precondition, no grace): only a pod sandbox run made that
// was kept, or whose run is over (reap.hpp). Throws Error otherwise, and for a pod not found.
void deleteRunPod(kube::Client& client, const std::string& ns, const std::string& name,
                  const OwnerAlive& ownerAlive = localOwnerAlive);

}  // namespace rossoctl::app::run
