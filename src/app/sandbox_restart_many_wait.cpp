// A batch restart's waits: one pod watch for the batch's replacements (with the blocker reads
// between its spans), then the Sandboxes' Ready.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "rossoctl/app/agent_failure.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "sandbox_restart_many_internal.hpp"

namespace rossoctl::app::restart_detail {

using std::chrono::milliseconds;

namespace {

constexpr std::chrono::milliseconds kReadyReadFloor{5000};

// A sandbox whose wait a blocker (quota, LimitRange) may end: no replacement yet and no old pod
// still leaving (while it leaves, the controller cannot make the new pod under its name).
bool blockable(const Member& member) {
    return !member.reported && !member.podDecided && member.failure.empty() &&
           !member.replacementCreated && !member.oldPodTerminating;
}

}  // namespace

void RestartMany::waitForReplacements(kube::Client& client, Batch& batch) {
    for (auto& member : batch.members)
        if (!member.reported) step(member.name, "waiting for a new ready pod");
    std::optional<json> given = batch.podList;
    kube::WaitResult outcome;
    std::string error;
    auto anyBlockable = [&] {
        return std::any_of(batch.members.begin(), batch.members.end(), blockable);
    };
    try {
        // While every old pod still leaves, a span lasts to the time-out; it ends early when
        // one goes with no replacement, and the next looks for blockers every 2 s again.
        do {
            batch.recheck = false;
            outcome =
                waitUnlessBlocked(
                    clock_, remaining(), options_.restart.cancel,
                    [&](milliseconds span) {
                        batch.longSpan = !anyBlockable();
                        kube::WaitOptions wait;
                        wait.labelSelector = batch.key + " in (" + valuesOf(batch) + ")";
                        wait.timeout = span;
                        wait.cancel = options_.restart.cancel;
                        wait.initialList = std::exchange(given, std::nullopt);
                        auto pods = kube::waitForSet(
                            client, clock_, kube::resources::pods(), ns_, wait,
                            [&](const kube::ObjectSet& set) { return podsDecided(batch, set); });
                        given = pods.resumeList();  // the next span watches on from here
                        return pods;
                    },
                    [&]() -> std::optional<std::string> {
                        readBlockers(client, batch);
                        return std::nullopt;
                    },
                    anyBlockable)
                    .wait;
        } while (outcome.satisfied() && batch.recheck);
    } catch (const std::exception& caught) {
        error = caught.what();
    }
    given.reset();  // the pod set is not needed while the Sandboxes' Ready is read
    for (auto& member : batch.members) {
        if (member.reported) continue;
        if (!member.failure.empty()) {
            fail(member, member.failure);
        } else if (member.podDecided) {
            continue;  // its replacement is ready: on to the Sandbox's Ready
        } else if (!error.empty()) {
            fail(member, error);
        } else if (outcome.outcome == kube::WaitOutcome::Cancelled) {
            fail(member, interrupted("a new ready pod"));
        } else if (!member.replacementCreated) {
            fail(member,
                 fmt::format("timed out after {}: no replacement pod was ever created for pod "
                             "{} (is the agent-sandbox controller running?); the Sandbox's "
                             "status predates the restart",
                             formatSeconds(options_.restart.timeout), member.result.podName));
        } else {
            fail(member, timedOut(client, member.name, "a new ready pod"));
        }
    }
    waitForSandboxesReady(client, batch);
}

// The pod wait's predicate: every sandbox's replacement is ready or will never be. Each
// sandbox looks only at the pods its own selector selects that name it as controller, as
// its own watch would.
bool RestartMany::podsDecided(Batch& batch, const kube::ObjectSet& pods) {
    const auto controlled = byController(pods);
    bool all = true;
    for (auto& member : batch.members) {
        if (member.reported || member.podDecided) continue;
        restart_detail::PodView own;
        if (auto found = controlled.find(member.uid); found != controlled.end())
            for (const auto& entry : found->second)
                if (labelIs(*entry.second, batch.key, member.labelValue)) own.push_back(entry);
        member.replacementCreated |= restart_detail::replacementSeen(member.replacing(), own);
        member.oldPodTerminating = restart_detail::oldPodTerminating(member.replacing(), own);
        member.sawOldPodLeave |= member.oldPodTerminating;
        if (!member.failure.empty() ||
            restart_detail::newPodDecided(member.replacing(), own, member.result, member.failure)) {
            member.podDecided = true;
            member.result.took = elapsed();  // its new pod's time, not the batch's
        } else {
            all = false;
        }
        if (member.sawOldPodLeave && blockable(member)) {
            member.sawOldPodLeave = false;
            batch.recheck |= batch.longSpan;
        }
    }
    return all || batch.recheck;
}

// Between spans, as one restart does: a sandbox with no replacement yet and no old pod still
// leaving may be one the controller cannot make a pod for (quota, LimitRange); it fails at
// the next look, the others wait on. The reads end with the restart's time-out.
void RestartMany::readBlockers(kube::Client& client, Batch& batch) {
    std::optional<kube::Client::DeadlineScope> deadline;
    if (options_.restart.timeout.count() > 0)
        deadline.emplace(client, kube::CommandDeadline{started_ + options_.restart.timeout,
                                                       "the restart's --timeout"});
    for (auto& member : batch.members) {
        if (member.reported || member.podDecided || member.replacementCreated ||
            member.oldPodTerminating || !member.failure.empty())
            continue;
        try {
            auto sandbox = client.getIfExists(sandboxes_, ns_, member.name);
            if (!sandbox || uidOf(*sandbox) != member.uid)
                member.failure = "was deleted while it restarted";
            else if (auto why = sandboxCreateFailure(client, *sandbox, member.deleted))
                member.failure = *why;
        } catch (const kube::TransportError&) {
            // An outage or the time-out: nothing known to block it; the wait goes on.
        } catch (const kube::ApiError& error) {
            // As a single restart: a read this user may not make, or an apiserver that
            // answers 5xx or 429 for a while, is no blocker; the wait rides it out.
            if (!error.isForbidden() && !kube::isOutage(error)) member.failure = error.what();
        } catch (const std::exception& error) {
            member.failure = error.what();
        }
    }
}

void RestartMany::waitForSandboxesReady(kube::Client& client, Batch& batch) {
    auto waiting = [&] {
        return std::any_of(batch.members.begin(), batch.members.end(),
                           [](const Member& m) { return !m.reported; });
    };
    if (!waiting()) return;
    for (auto& member : batch.members)
        if (!member.reported) step(member.name, "waiting for the Sandbox to be Ready");
    // Another sandbox's pod may have taken the whole time-out: the Sandboxes whose pods are
    // ready get at least a few seconds to be read Ready (usually the first read shows it).
    const auto end = clock_.monotonic() + std::max(remaining(), kReadyReadFloor);
    auto left = [&] {
        if (options_.restart.timeout.count() == 0) return milliseconds{0};
        return std::max(milliseconds{1},
                        std::chrono::duration_cast<milliseconds>(end - clock_.monotonic()));
    };
    // Where it is decided: Ready, finished, or deleted (or another with its name).
    auto settle = [&](Member& member, const json* sandbox) {
        if (!sandbox || uidOf(*sandbox) != member.uid)
            fail(member, "was deleted while it restarted");
        else if (kube::conditionTrue(*sandbox, "Finished"))
            fail(member, "has finished: " + describeConditions(*sandbox));
        else if (kube::conditionTrue(*sandbox, "Ready"))
            finish(member);
    };
    kube::WaitResult outcome;
    std::string error;
    try {
        kube::WaitOptions wait;
        wait.cancel = options_.restart.cancel;
        if (readOneByOne_) {
            // A namespace of many more Sandboxes than these (or several batches): each one
            // read by name, as a single restart does, rather than all of them per batch.
            for (auto& member : batch.members) {
                if (member.reported) continue;
                wait.timeout = left();
                outcome = kube::waitForObject(client, clock_, sandboxes_, ns_, member.name, wait,
                                              [&](const std::optional<json>& sandbox) {
                                                  settle(member, sandbox ? &*sandbox : nullptr);
                                                  return member.reported;
                                              });
                if (!outcome.satisfied()) break;
            }
        } else {
            wait.timeout = left();
            outcome = kube::waitForSet(
                client, clock_, sandboxes_, ns_, wait, [&](const kube::ObjectSet& set) {
                    for (auto& member : batch.members) {
                        if (member.reported) continue;
                        auto found = set.find(member.name);
                        settle(member, found == set.end() ? nullptr : &found->second);
                    }
                    return !waiting();
                });
        }
    } catch (const std::exception& caught) {
        error = caught.what();
    }
    for (auto& member : batch.members) {
        if (member.reported) continue;
        if (!error.empty())
            fail(member, error);
        else if (outcome.outcome == kube::WaitOutcome::Cancelled)
            fail(member, interrupted("the Sandbox's Ready condition"));
        else
            fail(member, timedOut(client, member.name, "the Sandbox's Ready condition"));
    }
}

std::string RestartMany::valuesOf(const Batch& batch) {
    std::string values;
    for (const auto& member : batch.members)
        values += (values.empty() ? "" : ",") + member.labelValue;
    return values;
}

}  // namespace rossoctl::app::restart_detail
