#pragma once
// What the files of runInPod share (not a public header): the Run whose steps runner.cpp calls
// in order, each defined in the file of its concern, and the cleanup of the run's pod.
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/kube/exec.hpp"

namespace rossoctl::app::run {

inline long ceilSeconds(std::chrono::milliseconds duration) {
    return static_cast<long>((duration.count() + 999) / 1000);
}

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

    // The pod: claimed from a pool or created, until it runs (runner_pod.cpp).
    void acquirePod();
    void waitRunning();
    void waitWorkdirMounted();

    // The command in the pod (runner_exec.cpp).
    void upload();
    void runCommand();
    void collect(std::chrono::milliseconds ranFor);

    void checkCancelled() const {
        if (cancel_ && cancel_->cancelled()) throw Cancelled{};
    }

    // What the outcome says of the pod (runner_outcome.cpp).
    void learnPodEnd();
    void learnRanPod();

  private:
    using json = nlohmann::json;

    void explainLimitRange();
    static bool missingTool(const std::string& message);
    std::string imageToolsHint() const;

    std::optional<std::optional<json>> readPod();
    RunEnding whyKilled();
    std::string oomKillsCounted();

    void stopLeftovers();
    kube::ExecRequest execRequest(std::vector<std::string> command) const;
    static std::string firstLine(const std::string& text);
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

// The run's pod deleted or its claim released, or kept with --keep (runner_cleanup.cpp).
void deletePod(const ClientFactory& cleanupClient, const Clock& clock, const RunRequest& request,
               RunOutcome& outcome, RunCallbacks& callbacks);
void deletePodAfterFailure(const ClientFactory& cleanupClient, const Clock& clock,
                           const RunRequest& request, RunOutcome& outcome, RunCallbacks& callbacks);

}  // namespace rossoctl::app::run
