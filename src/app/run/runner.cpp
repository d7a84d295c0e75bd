#include "rossoctl/app/run/runner.hpp"

#include <fmt/format.h>

#include <thread>

#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/kube/transport.hpp"
#include "runner_internal.hpp"

namespace rossoctl::app::run {

using std::chrono::milliseconds;

namespace {

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
