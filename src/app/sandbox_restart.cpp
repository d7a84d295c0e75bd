#include "rossoctl/app/sandbox_restart.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "rossoctl/app/agent_failure.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod_failure.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "sandbox_restart_internal.hpp"

namespace rossoctl::app {

using nlohmann::json;
using std::chrono::milliseconds;

namespace restart_detail {

std::string formatSeconds(milliseconds duration) {
    return fmt::format("{:.1f}s", static_cast<double>(duration.count()) / 1000.0);
}

PodView viewOf(const kube::ObjectSet& pods) {
    PodView view;
    view.reserve(pods.size());
    for (const auto& [name, pod] : pods) view.emplace_back(&name, &pod);
    return view;
}

bool newPodDecided(const Replacing& replacing, const PodView& pods, RestartResult& result,
                   std::string& failure) {
    const json* candidate = nullptr;
    for (const auto& [podName, pod] : pods) {
        if (!controlledBy(*pod, replacing.sandboxUid) || replacing.oldUids.count(uidOf(*pod)) ||
            terminating(*pod))
            continue;
        // The controller names the pod it makes after the Sandbox; any other name is a pod
        // someone else made, which the controller would adopt with the old one gone.
        if (*podName != replacing.sandboxName) {
            failure = fmt::format(
                "pod {} names it as its controller but is not the pod the controller makes "
                "({}); it is not taken for the replacement: delete it",
                *podName, replacing.sandboxName);
            return true;
        }
        candidate = pod;
    }
    if (!candidate) return false;
    const json& pod = *candidate;
    const std::string podName = pod["metadata"].value("name", "");
    if (podFinished(pod)) {
        failure = fmt::format("new pod {} ended in phase {}", podName,
                              pod.value("status", json::object()).value("phase", ""));
        return true;
    }
    if (auto cannotStart = model::podStartFailure(pod)) {
        failure = fmt::format("new pod {}: {}", podName, *cannotStart);
        return true;
    }
    if (!podReady(pod)) return false;
    result.newUid = uidOf(pod);
    result.podName = podName;
    return true;
}

bool replacementSeen(const Replacing& replacing, const PodView& pods) {
    for (const auto& entry : pods)
        if (controlledBy(*entry.second, replacing.sandboxUid) &&
            !replacing.oldUids.count(uidOf(*entry.second)))
            return true;
    return false;
}

bool oldPodTerminating(const Replacing& replacing, const PodView& pods) {
    return terminatingOldPod(replacing, pods) != nullptr;
}

const json* terminatingOldPod(const Replacing& replacing, const PodView& pods) {
    for (const auto& entry : pods)
        if (replacing.oldUids.count(uidOf(*entry.second)) > 0 && terminating(*entry.second))
            return entry.second;
    return nullptr;
}

std::set<std::string> replacedUnderUs(const SandboxPods& pods, RestartResult& result) {
    std::set<std::string> oldUids = {result.oldUid};
    for (const auto& pod : pods.owned) {
        if (terminating(pod))
            oldUids.insert(uidOf(pod));
        else if (uidOf(pod) != result.oldUid)
            result.notes.push_back(
                fmt::format("pod {} was replaced by someone else (uid {}) before rossoctl "
                            "deleted it; the replacement is kept",
                            result.podName, shortUid(uidOf(pod))));
    }
    return oldUids;
}

}  // namespace restart_detail

namespace {

using restart_detail::formatSeconds;

class Restart {
  public:
    Restart(kube::Client& client, const Clock& clock, const kube::ResourceRef& sandboxes,
            std::string ns, std::string name, const RestartOptions& options)
        : client_(client),
          clock_(clock),
          sandboxes_(sandboxes),
          ns_(std::move(ns)),
          name_(std::move(name)),
          options_(options),
          started_(clock.monotonic()) {}

    RestartResult run(std::optional<json> given) {
        json sandbox = given ? std::move(*given) : getSandbox();
        const std::string why = sandboxNotRunningReason(sandbox, clock_.now());
        // Finished is the controller's word on the pod it last saw: after an interrupted
        // restart (the old pod ended on SIGTERM) it may not have cleared it yet while the new
        // pod is already on its way. Only a pod of its own that ended and stays is finished.
        const bool finished = why.rfind("has finished", 0) == 0;
        if (!why.empty() && !finished)
            fail(why + "; it has no pod to restart" + resumeAdvice(sandbox, ns_, name_));
        sandboxUid_ = uidOf(sandbox);
        SandboxPods pods = findPods(sandbox);
        if (finished && std::any_of(pods.owned.begin(), pods.owned.end(), [](const json& pod) {
                return !terminating(pod) && podFinished(pod);
            }))
            fail(why + "; it has no pod to restart");
        for (const auto& pod : pods.owned) {
            oldUids_.insert(uidOf(pod));
            if (!terminating(pod) && podFinished(pod))
                fail(
                    fmt::format("pod {} ended in phase {} and is not recreated (the sandbox has "
                                "finished); create the sandbox again",
                                pod.value("metadata", json::object()).value("name", ""),
                                pod.value("status", json::object()).value("phase", "")));
        }
        auto target = sandboxPod(sandbox, pods.owned);
        if (!target && pods.owned.empty()) {
            // A running Sandbox with no pod: someone deleted it a moment ago and the controller
            // is making its replacement (whatever its status says meanwhile: the released
            // controller keeps Ready=True, others say PodTerminating), which is the fresh pod a
            // restart wants: wait for it. A pod of another owner in its place never goes away.
            const bool foreignPodInPlace = !pods.list.value("items", json::array()).empty();
            if (!options_.wait || foreignPodInPlace)
                fail(fmt::format("has no pod; the Sandbox says {}", describeConditions(sandbox)));
            result_.podName = name_;
            result_.notes.push_back(
                "the pod was already deleted (by someone else); waited for its replacement");
            waitForNewPod(sandbox, pods.list);
            waitForSandboxReady();
            result_.took = elapsed();
            return result_;
        }
        if (target) {
            result_.podName = target->at("metadata").value("name", "");
            result_.oldUid = uidOf(*target);
            const bool deleted = deletePod(sandbox, *target);
            if (deleted) {
                filesLost(model::podOnlyFilesNote(sandbox, result_.podName));
            } else {
                // Replaced under us: never delete the replacement; look once more.
                pods = findPods(sandbox);
                oldUids_ = restart_detail::replacedUnderUs(pods, result_);
            }
        } else {
            // Only terminating pods: a restart is already under way; wait for its result.
            result_.oldUid = uidOf(pods.owned.front());
            result_.podName = pods.owned.front()["metadata"].value("name", "");
        }
        if (options_.wait) {
            waitForNewPod(sandbox, pods.list);
            waitForSandboxReady();
        }
        result_.took = elapsed();
        return result_;
    }

  private:
    // Once the pod is deleted its files are gone whatever follows (a time-out, Ctrl-C): the
    // error says so, as the result's note would have.
    [[noreturn]] void fail(const std::string& what) const {
        if (lostFiles_.empty()) throw Error(fmt::format("sandbox/{} {}", name_, what));
        throw Error(fmt::format("sandbox/{} {}; {}", name_, what, lostFiles_));
    }

    milliseconds elapsed() const {
        return std::chrono::duration_cast<milliseconds>(clock_.monotonic() - started_);
    }

    // 0 = no deadline; throws when it has passed.
    milliseconds remaining(const std::string& waitingFor) {
        if (options_.timeout.count() == 0) return milliseconds{0};
        milliseconds left = options_.timeout - elapsed();
        if (left.count() <= 0) timedOut(waitingFor);
        return left;
    }

    [[noreturn]] void timedOut(const std::string& waitingFor) {
        json sandbox = getSandbox();
        fail(fmt::format("timed out after {} waiting for {}; the Sandbox says {}",
                         formatSeconds(options_.timeout), waitingFor, describeConditions(sandbox)));
    }

    void step(const std::string& text) const {
        if (options_.onStep) options_.onStep(text);
    }

    // Reads and the UID-preconditioned DELETE are safe to repeat: an apiserver outage is ridden
    // out within the restart's own time budget, as its waits do (verify restarts through this).
    void riddenOut(const std::function<void()>& attempt) {
        constexpr milliseconds kNoDeadlineBudget{std::chrono::minutes(5)};
        milliseconds budget = kNoDeadlineBudget;
        if (options_.timeout.count() > 0)
            budget = std::max(options_.timeout - elapsed(), milliseconds{1});
        kube::rideOutOutage(clock_, budget, options_.cancel, attempt);
    }

    SandboxPods findPods(const json& sandbox) {
        SandboxPods pods;
        riddenOut([&] { pods = findSandboxPods(client_, sandbox); });
        return pods;
    }

    json getSandbox() {
        try {
            json sandbox;
            riddenOut([&] { sandbox = client_.get(sandboxes_, ns_, name_); });
            return sandbox;
        } catch (const kube::ApiError& error) {
            if (!error.isNotFound()) throw;
            fail(fmt::format("not found in namespace {}; {}", ns_,
                             sandboxNotFoundAdvice(client_, sandboxes_, ns_, name_)));
        }
    }

    // False when the pod we meant was replaced before the delete reached it.
    // Once said, whatever follows: the error of a restart that then fails says it too.
    void filesLost(const std::string& note) {
        lostFiles_ = note;
        if (lostFiles_.empty()) return;
        result_.notes.push_back(lostFiles_);
        if (options_.onFilesLost) options_.onFilesLost(lostFiles_);
    }

    bool deletePod(const json& sandbox, const json& pod) {
        step("deleting pod " + result_.podName);
        kube::DeleteOptions options;
        options.preconditionUid = uidOf(pod);
        try {
            riddenOut(
                [&] { client_.remove(kube::resources::pods(), ns_, result_.podName, options); });
        } catch (const kube::ApiError& error) {
            if (error.isNotFound()) return true;  // gone already: the controller replaces it
            if (error.code() == 409 || error.code() == 412) return false;
            if (kube::isOutage(error)) filesMaybeLost(sandbox);
            throw;
        } catch (const std::exception&) {
            // Ctrl-C or a cut connection with the DELETE sent: no answer says it was not done.
            filesMaybeLost(sandbox);
            throw;
        }
        return true;
    }

    void filesMaybeLost(const json& sandbox) {
        const std::string note = model::podOnlyFilesNote(sandbox, result_.podName);
        if (!note.empty()) filesLost(note + restart_detail::kUnansweredDelete);
    }

    void waitForNewPod(const json& sandbox, const json& podList) {
        step("waiting for a new ready pod");
        const PodSelector selector = sandboxPodSelector(sandbox);
        const auto since = clock_.now();  // older events are about the pods before the restart
        std::optional<json> given = podList;
        std::string failure;
        milliseconds left{0};  // no deadline
        if (options_.timeout.count() > 0)
            left = std::max(milliseconds{1}, options_.timeout - elapsed());
        // Between spans the Sandbox and its events are read, so a pod the controller may not
        // create (quota, LimitRange) ends the wait at once; once a replacement exists, nothing
        // of that kind can block it and the rest is one watch. While the old pod still
        // terminates the controller cannot make one under its name: nothing to read yet.
        bool replacementCreated = false;
        bool oldPodTerminating = false;
        // An agent that ignores SIGTERM keeps its pod to the grace period's end: said once.
        std::string slowStop;
        bool slowStopSaid = !options_.onSlowStop;
        const auto waitStarted = clock_.monotonic();
        auto waited = waitUnlessBlocked(
            clock_, left, options_.cancel,
            [&](milliseconds span) {
                kube::WaitOptions wait;
                wait.labelSelector = selector.labelSelector;
                wait.fieldSelector = selector.fieldSelector;
                wait.timeout = span;
                wait.cancel = options_.cancel;
                wait.initialList = std::exchange(given, std::nullopt);
                auto waited = kube::waitForSet(
                    client_, clock_, kube::resources::pods(), ns_, wait,
                    [&](const kube::ObjectSet& set) {
                        const auto pods = restart_detail::viewOf(set);
                        replacementCreated |= restart_detail::replacementSeen(replacing(), pods);
                        const json* leaving = restart_detail::terminatingOldPod(replacing(), pods);
                        oldPodTerminating = leaving != nullptr;
                        // Deleted, it is stopping even before a watch event says so.
                        const json* old = leaving ? leaving : oldPodIn(pods);
                        slowStop = old ? slowStopLine(*old) : "";
                        return restart_detail::newPodDecided(replacing(), pods, result_, failure);
                    });
                given = waited.resumeList();  // the next span watches on from here
                return waited;
            },
            [&]() -> std::optional<std::string> {
                if (!slowStopSaid && !slowStop.empty() &&
                    clock_.monotonic() - waitStarted >= kSlowStopAfter) {
                    slowStopSaid = true;
                    options_.onSlowStop(fmt::format("sandbox/{}: {}", name_, slowStop));
                }
                if (oldPodTerminating) return std::nullopt;
                return sandboxCreateFailure(client_, getSandbox(), since);
            },
            [&] { return !replacementCreated; });
        if (waited.blocker) fail(*waited.blocker);
        const kube::WaitResult& outcome = waited.wait;
        if (outcome.outcome == kube::WaitOutcome::TimedOut &&
            !restart_detail::replacementSeen(replacing(), restart_detail::viewOf(outcome.objects)))
            fail(fmt::format(
                "timed out after {}: no replacement pod was ever created for pod {} (is the "
                "agent-sandbox controller running?); the Sandbox's status predates the restart",
                formatSeconds(options_.timeout), result_.podName));
        check(outcome.outcome, "a new ready pod");
        if (!failure.empty()) fail(failure);
    }

    restart_detail::Replacing replacing() const { return {name_, sandboxUid_, oldUids_}; }

    // A pod this restart replaces, still among `pods` (nullptr once gone).
    const json* oldPodIn(const restart_detail::PodView& pods) const {
        for (const auto& entry : pods)
            if (oldUids_.count(uidOf(*entry.second)) > 0) return entry.second;
        return nullptr;
    }

    void waitForSandboxReady() {
        step("waiting for the Sandbox to be Ready");
        kube::WaitOptions wait;
        wait.timeout = remaining("the Sandbox's Ready condition");
        wait.cancel = options_.cancel;
        std::string failure;
        auto outcome = kube::waitForObject(
            client_, clock_, sandboxes_, ns_, name_, wait, [&](const std::optional<json>& sandbox) {
                if (!sandbox) {
                    failure = "was deleted while it restarted";
                    return true;
                }
                if (kube::conditionTrue(*sandbox, "Finished")) {
                    failure = "has finished: " + describeConditions(*sandbox);
                    return true;
                }
                return kube::conditionTrue(*sandbox, "Ready");
            });
        check(outcome.outcome, "the Sandbox's Ready condition");
        if (!failure.empty()) fail(failure);
    }

    void check(kube::WaitOutcome outcome, const std::string& waitingFor) {
        if (outcome == kube::WaitOutcome::TimedOut) timedOut(waitingFor);
        if (outcome == kube::WaitOutcome::Cancelled)
            fail("restart interrupted while waiting for " + waitingFor +
                 "; the old pod is already deleted");
    }

    kube::Client& client_;
    const Clock& clock_;
    const kube::ResourceRef& sandboxes_;
    std::string ns_;
    std::string name_;
    const RestartOptions& options_;
    std::chrono::steady_clock::time_point started_;
    std::string lostFiles_;  // podOnlyFilesNote of the pod this restart deleted
    std::string sandboxUid_;
    std::set<std::string> oldUids_;
    RestartResult result_;
};

}  // namespace

RestartResult restartSandbox(kube::Client& client, const Clock& clock,
                             const kube::ResourceRef& sandboxes, const std::string& ns,
                             const std::string& name, const RestartOptions& options,
                             std::optional<json> sandbox) {
    return Restart(client, clock, sandboxes, ns, name, options).run(std::move(sandbox));
}

std::string shortUid(const std::string& uid) {
    return uid.size() > 8 ? uid.substr(0, 8) + "…" : uid;
}

std::string describeRestart(const std::string& name, const RestartResult& result) {
    if (result.newUid.empty())
        return fmt::format(
            "sandbox/{} pod deleted (pod uid {}, {}); not waiting for its replacement", name,
            shortUid(result.oldUid), formatSeconds(result.took));
    if (result.oldUid.empty())
        return fmt::format("sandbox/{} restarted (its pod was already gone; new pod uid {}, {})",
                           name, shortUid(result.newUid), formatSeconds(result.took));
    return fmt::format("sandbox/{} restarted (pod uid {} → {}, {})", name, shortUid(result.oldUid),
                       shortUid(result.newUid), formatSeconds(result.took));
}

}  // namespace rossoctl::app
