#include "rossoctl/app/sandbox_suspend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "rossoctl/app/agent_failure.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod_failure.hpp"
#include "rossoctl/model/sandbox.hpp"

namespace rossoctl::app {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr int kMaxPatchAttempts = 3;  // a 409 on the patch: read again, patch again

std::string timeoutText(milliseconds timeout) {
    return fmt::format("the command's --timeout ({:.1f}s per sandbox)",
                       static_cast<double>(timeout.count()) / 1000.0);
}

std::string nameOf(const json& object) {
    return object.value("metadata", json::object()).value("name", "");
}

// Written for the sandbox's current generation (a condition left from before the change does
// not count).
bool freshCondition(const json& sandbox, const json& condition) {
    const json metadata = sandbox.value("metadata", json::object());
    if (!condition.contains("observedGeneration") || !metadata.contains("generation")) return true;
    const json& observed = condition["observedGeneration"];
    const json& generation = metadata["generation"];
    return !observed.is_number_integer() || !generation.is_number_integer() ||
           observed.get<int64_t>() >= generation.get<int64_t>();
}

bool freshConditionTrue(const json& sandbox, const std::string& type) {
    const auto condition = kube::findCondition(sandbox, type);
    return condition && condition->value("status", "") == "True" &&
           freshCondition(sandbox, *condition);
}

// Suspended: the controller says so. A controller that reports no Suspended condition (older
// v1alpha1 releases) says it with Ready=False once the pod is gone.
bool suspendDone(const json& sandbox) {
    if (kube::findCondition(sandbox, "Suspended")) return freshConditionTrue(sandbox, "Suspended");
    const auto ready = kube::findCondition(sandbox, "Ready");
    return ready && ready->value("status", "") == "False";
}

class SuspendWait {
  public:
    SuspendWait(kube::Client& client, const Clock& clock, const kube::ResourceRef& sandboxes,
                std::string ns, const json& sandbox, const SuspendOptions& options,
                std::chrono::steady_clock::time_point started)
        : client_(client),
          clock_(clock),
          sandboxes_(sandboxes),
          ns_(std::move(ns)),
          name_(nameOf(sandbox)),
          uid_(uidOf(sandbox)),
          options_(options),
          started_(started) {
        // Each request of the wait ends by the sandbox's --timeout, not 5 minutes later.
        if (options_.timeout.count() > 0)
            deadline_.emplace(client_, kube::CommandDeadline{started_ + options_.timeout,
                                                             timeoutText(options_.timeout)});
    }

    void run(const json& sandbox) {
        if (options_.suspend) waitForNoPod(sandbox);
        waitForSandbox(options_.suspend ? "the Suspended condition" : "the Ready condition");
    }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(fmt::format("sandbox/{} {}", name_, what));
    }

    milliseconds remaining(const std::string& waitingFor) {
        if (options_.timeout.count() == 0) return milliseconds{0};
        const auto left = options_.timeout -
                          std::chrono::duration_cast<milliseconds>(clock_.monotonic() - started_);
        if (left.count() <= 0) timedOut(waitingFor);
        return left;
    }

    [[noreturn]] void timedOut(const std::string& waitingFor) {
        std::string says = "nothing more (no answer within a second of the time-out)";
        deadline_.reset();
        try {
            // Past --timeout, where the sandbox stands is worth one read, of a second at most.
            kube::Client::DeadlineScope brief(
                client_,
                {clock_.monotonic() + std::chrono::seconds(1), "the time-out's last read"});
            const auto sandbox = client_.getIfExists(sandboxes_, ns_, name_);
            says = sandbox ? describeConditions(*sandbox) : "nothing (it was deleted)";
        } catch (const kube::TransportError&) {
        } catch (const kube::ApiError&) {
        }
        fail(fmt::format("timed out after {:.1f}s waiting for {}; the Sandbox says {}",
                         static_cast<double>(options_.timeout.count()) / 1000.0, waitingFor, says));
    }

    void check(kube::WaitOutcome outcome, const std::string& waitingFor) {
        if (outcome == kube::WaitOutcome::TimedOut) timedOut(waitingFor);
        if (outcome == kube::WaitOutcome::Cancelled)
            fail(fmt::format("interrupted while waiting for {}; the sandbox stays {}", waitingFor,
                             options_.suspend ? "suspended" : "running"));
    }

    void waitForNoPod(const json& sandbox) {
        const std::string waitingFor = "its pod to be gone";
        const PodSelector selector = sandboxPodSelector(sandbox);
        std::string slowStop;  // slowStopLine of the pod still there
        // An agent that ignores SIGTERM keeps its pod to the grace period's end: the first span
        // ends a few seconds in, to say so once, and the wait goes on from where it stood.
        bool slowStopSaid = !options_.onSlowStop;
        std::optional<json> resume;
        for (;;) {
            kube::WaitOptions wait;
            wait.labelSelector = selector.labelSelector;
            wait.fieldSelector = selector.fieldSelector;
            wait.timeout = remaining(waitingFor);
            // Only a span the time-out does not end first: a pod still there at its end is slow.
            const bool slowStopSpan =
                !slowStopSaid && (wait.timeout.count() == 0 || wait.timeout > kSlowStopAfter);
            if (slowStopSpan) wait.timeout = kSlowStopAfter;
            wait.cancel = options_.cancel;
            wait.initialList = std::exchange(resume, std::nullopt);
            auto outcome = kube::waitForSet(client_, clock_, kube::resources::pods(), ns_, wait,
                                            [&](const kube::ObjectSet& pods) {
                                                for (const auto& [podName, pod] : pods)
                                                    if (controlledBy(pod, uid_)) {
                                                        slowStop = slowStopLine(pod);
                                                        return false;
                                                    }
                                                return true;
                                            });
            if (slowStopSpan && outcome.outcome == kube::WaitOutcome::TimedOut) {
                slowStopSaid = true;
                if (!slowStop.empty())
                    options_.onSlowStop(fmt::format("sandbox/{}: {}", name_, slowStop));
                resume = outcome.resumeList();
                continue;  // remaining() ends it when the time-out itself has passed
            }
            check(outcome.outcome, waitingFor);
            return;
        }
    }

    void waitForSandbox(const std::string& waitingFor) {
        const auto eventsSince = clock_.now();  // older ones are about the pod before a suspend
        std::string failure;
        std::optional<json> resume;  // where the last span's watch stopped
        auto waited = waitUnlessBlocked(
            clock_, remaining(waitingFor), options_.cancel,
            [&](milliseconds span) {
                kube::WaitOptions wait;
                wait.timeout = span;
                wait.cancel = options_.cancel;
                wait.initialList = std::exchange(resume, std::nullopt);
                auto sandbox = kube::waitForObject(
                    client_, clock_, sandboxes_, ns_, name_, wait,
                    [&](const std::optional<json>& object) {
                        failure = object ? sandboxFailure(*object) : "was deleted meanwhile";
                        if (!failure.empty()) return true;
                        return options_.suspend ? suspendDone(*object)
                                                : freshConditionTrue(*object, "Ready");
                    });
                resume = sandbox.resumeList();
                return sandbox;
            },
            [&]() -> std::optional<std::string> {
                // A resumed sandbox's pod may be refused (quota, LimitRange) or never start.
                if (options_.suspend) return std::nullopt;
                const auto object = client_.getIfExists(sandboxes_, ns_, name_);
                if (!object) return std::nullopt;
                return agentStartFailure(client_, ns_, model::WorkloadType::Sandbox, *object,
                                         eventsSince);
            },
            [&] { return !options_.suspend; });
        if (waited.blocker) fail("will not become ready: " + *waited.blocker);
        check(waited.wait.outcome, waitingFor);
        if (!failure.empty()) fail(failure);
    }

    // Why the wait should stop now: the sandbox was replaced, changed back, or (resuming) has
    // finished or its pod is refused; "" while it may still get there.
    std::string sandboxFailure(const json& object) const {
        if (uidOf(object) != uid_) return "was deleted meanwhile";
        if (suspendedInSpec(object) != options_.suspend)
            return options_.suspend ? "was resumed by someone else meanwhile"
                                    : "was suspended by someone else meanwhile";
        if (options_.suspend) return "";
        if (kube::conditionTrue(object, "Finished"))
            return "has finished: " + describeConditions(object);
        if (const auto ready = kube::findCondition(object, "Ready");
            ready && freshCondition(object, *ready))
            if (auto refused = model::workloadCreateFailure(object))
                return "will not become ready: its pod cannot be created: " + *refused;
        return "";
    }

    kube::Client& client_;
    const Clock& clock_;
    const kube::ResourceRef& sandboxes_;
    std::string ns_;
    std::string name_;
    std::string uid_;
    const SuspendOptions& options_;
    std::chrono::steady_clock::time_point started_;
    std::optional<kube::Client::DeadlineScope> deadline_;
};

struct SuspendChange {
    json sandbox;          // as read, or as the patch left it
    bool changed = false;  // false: the spec already asked for it
};

// Reads the sandbox and writes the patch unless the spec already says so.
SuspendChange requestSuspend(kube::Client& client, const Clock& clock,
                             const kube::ResourceRef& sandboxes, const std::string& ns,
                             const std::string& name, bool suspend) {
    for (int attempt = 1;; ++attempt) {
        auto sandbox = client.getIfExists(sandboxes, ns, name);
        if (!sandbox) {
            throw Error(fmt::format("sandbox/{} not found in namespace {}; {}", name, ns,
                                    sandboxNotFoundAdvice(client, sandboxes, ns, name)));
        }
        if (suspendedInSpec(*sandbox) == suspend) return {std::move(*sandbox), false};
        if (!suspend) {
            json running = *sandbox;
            running["spec"]["operatingMode"] = "Running";
            running["spec"].erase("replicas");
            if (auto why = sandboxNotRunningReason(running, clock.now()); !why.empty())
                throw Error(fmt::format(
                    "sandbox/{} {}; resuming it would not start a pod (create it again)", name,
                    why));
        }
        try {
            return {client.patch(sandboxes, ns, name, kube::PatchType::Merge,
                                 suspendPatch(sandboxes.version, suspend)),
                    true};
        } catch (const kube::ApiError& error) {
            // The Client already sent a quota conflict again: its tries times these multiplied.
            if (!error.isConflict() || error.isQuotaConflict()) throw;
            if (attempt >= kMaxPatchAttempts)
                throw Error(fmt::format(
                    "sandbox/{} kept changing under us ({} attempts); try again", name, attempt));
        }
    }
}

// A name the namespace does not have is a typo more often than not: as restart does, nothing is
// suspended (no pod's files lost) or resumed until every name is found. A name that cannot be
// read for another reason is left to its own turn, which says what failed.
void refuseMissing(kube::Client& client, const kube::ResourceRef& sandboxes, const std::string& ns,
                   const std::vector<std::string>& names, bool suspend,
                   const std::function<void(const SuspendResult&)>& onDone) {
    if (names.size() < 2) return;
    std::vector<std::string> missing;
    for (const auto& name : names) {
        try {
            if (!client.getIfExists(sandboxes, ns, name)) missing.push_back(name);
        } catch (const kube::ApiError&) {
        }
    }
    if (missing.empty()) return;
    std::string listed;
    for (const auto& name : missing) {
        SuspendResult result;
        result.name = name;
        result.error = fmt::format("sandbox/{} not found in namespace {}; {}", name, ns,
                                   sandboxNotFoundAdvice(client, sandboxes, ns, name));
        onDone(result);
        listed += (listed.empty() ? "sandbox/" : ", sandbox/") + name;
    }
    const char* done = suspend ? "suspended" : "resumed";
    throw Error(fmt::format("not {}: {} not found, and no sandbox is {} until every name is found",
                            done, listed, done));
}

}  // namespace

std::string suspendPatch(const std::string& version, bool suspend) {
    json spec = version == "v1alpha1" ? json{{"replicas", suspend ? 0 : 1}}
                                      : json{{"operatingMode", suspend ? "Suspended" : "Running"}};
    return json{{"spec", spec}}.dump();
}

void setSandboxesSuspended(kube::Client& client, const Clock& clock,
                           const kube::ResourceRef& sandboxes, const std::string& ns,
                           const std::vector<std::string>& names, const SuspendOptions& options,
                           const std::function<void(const SuspendResult&)>& onDone) {
    struct Pending {
        SuspendResult result;
        json sandbox;
        std::chrono::steady_clock::time_point started;
    };
    refuseMissing(client, sandboxes, ns, names, options.suspend, onDone);
    std::vector<Pending> pending;
    for (const auto& name : names) {
        Pending item;
        item.result.name = name;
        item.started = clock.monotonic();
        try {
            std::optional<kube::Client::DeadlineScope> deadline;
            if (options.timeout.count() > 0)
                deadline.emplace(client, kube::CommandDeadline{item.started + options.timeout,
                                                               timeoutText(options.timeout)});
            auto change = requestSuspend(client, clock, sandboxes, ns, name, options.suspend);
            item.result.changed = change.changed;
            item.sandbox = std::move(change.sandbox);
            if (options.suspend && change.changed)
                item.result.lostFiles =
                    model::podOnlyFilesNote(item.sandbox, model::sandboxPodName(item.sandbox));
        } catch (const kube::ApiError& error) {
            item.result.error = fmt::format("sandbox/{}: {}", name, error.what());
        } catch (const Error& error) {
            item.result.error = error.what();
        }
        if (!item.result.error.empty() || !options.wait)
            onDone(item.result);
        else
            pending.push_back(std::move(item));
    }
    for (auto& item : pending) {
        try {
            SuspendWait(client, clock, sandboxes, ns, item.sandbox, options, item.started)
                .run(item.sandbox);
            item.result.waited = true;
        } catch (const kube::ApiError& error) {
            item.result.error = fmt::format("sandbox/{}: {}", item.result.name, error.what());
        } catch (const Error& error) {
            item.result.error = error.what();
        }
        item.result.took =
            std::chrono::duration_cast<milliseconds>(clock.monotonic() - item.started);
        onDone(item.result);
    }
}

std::string describeSuspend(const SuspendResult& result, bool suspend) {
    const std::string name = "sandbox/" + result.name;
    if (!result.changed)
        return fmt::format("{} already {}", name, suspend ? "suspended" : "running");
    if (!result.waited)
        return fmt::format("{} {} requested; not waiting", name, suspend ? "suspend" : "resume");
    return fmt::format("{} {} ({}, {:.1f}s)", name, suspend ? "suspended" : "resumed",
                       suspend ? "pod gone, Suspended=True" : "Ready=True",
                       static_cast<double>(result.took.count()) / 1000.0);
}

}  // namespace rossoctl::app
