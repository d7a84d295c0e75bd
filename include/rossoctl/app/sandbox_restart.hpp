#pragma once
// Restarting a Sandbox: delete exactly its current pod (UID precondition), then watch until
// the controller's replacement (a new UID) is Ready and the Sandbox says Ready. Shared by
// `sandbox restart`, `sandbox set-env --restart` and `sandbox verify`.
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::app {

struct RestartOptions {
    bool wait = true;
    std::chrono::milliseconds timeout{std::chrono::minutes(2)};  // 0 = none
    const kube::CancelFlag* cancel = nullptr;
    // Called as the restart moves on ("deleting pod orders", "waiting for a new pod", ...).
    std::function<void(const std::string& step)> onStep;
    // Called once the pod is deleted, with what went with it (podOnlyFilesNote; not called when
    // nothing did): a caller whose restart is then interrupted still has it to say.
    std::function<void(const std::string& note)> onFilesLost;
    // Called once when the deleted pod is still stopping a few seconds on (an agent that ignores
    // SIGTERM keeps it to the end of its grace period): "sandbox/orders: waiting for pod orders to
    // stop (grace period 30s)". Not called by a batch of restartSandboxes (one watch for all).
    std::function<void(const std::string& line)> onSlowStop;
};

struct RestartResult {
    std::string podName;
    std::string oldUid;
    std::string newUid;  // empty with wait = false
    std::chrono::milliseconds took{0};
    // Things the user should know, e.g. the pod was replaced by someone else meanwhile.
    std::vector<std::string> notes;
};

// Throws Error naming the sandbox for: not found, suspended, expired, finished, no pod,
// timeout (with what the Sandbox's conditions say) and cancellation. `sandbox` may be passed
// when the caller has just read or written it, saving a GET.
RestartResult restartSandbox(kube::Client& client, const Clock& clock,
                             const kube::ResourceRef& sandboxes, const std::string& ns,
                             const std::string& name, const RestartOptions& options,
                             std::optional<nlohmann::json> sandbox = std::nullopt);

// One sandbox's end in restartSandboxes: its result, or the error line naming it.
struct RestartOutcome {
    std::string name;
    std::optional<RestartResult> result;
    std::string error;  // "sandbox/orders timed out after ..." when it failed
    // With an error: what the user should still know, e.g. the files its pod's DELETE took.
    std::vector<std::string> notes;
};

struct RestartManyOptions {
    RestartOptions restart;  // its onStep is unused: see onStep below
    std::function<void(const std::string& sandbox, const std::string& step)> onStep;
    // Called once per sandbox as it ends, from any worker's thread, one call at a time or not:
    // the callee locks.
    std::function<void(const RestartOutcome& outcome)> onDone;
};

// Restarts several sandboxes of `ns` on shared reads: one LIST of the Sandboxes (`sandboxList`
// when the caller has it), one of the pods, a DELETE each, one pod watch and one Sandbox
// LIST-and-watch for them all. A sandbox in any state but the plain one (one live pod of its
// own) is restarted alone by restartSandbox. `clients` are one per worker (the first also
// waits); none throws: every sandbox ends in onDone.
void restartSandboxes(const std::vector<kube::Client*>& clients, const Clock& clock,
                      const kube::ResourceRef& sandboxes, const std::string& ns,
                      const std::vector<std::string>& names, const RestartManyOptions& options,
                      std::optional<nlohmann::json> sandboxList = std::nullopt);

// "1234abcd…" from a UID, for result lines.
std::string shortUid(const std::string& uid);
// "sandbox/orders restarted (pod uid 1234abcd… → 5678ef01…, 2.1s)"
std::string describeRestart(const std::string& name, const RestartResult& result);

}  // namespace rossoctl::app
