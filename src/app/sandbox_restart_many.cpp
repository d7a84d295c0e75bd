// Restarting several sandboxes of one namespace on shared reads: one LIST of the Sandboxes, one
// of the pods, a DELETE each, then one pod watch and one Sandbox LIST-and-watch for them all.
// A sandbox in any state but the plain one is restarted on its own (restartSandbox), so every
// rule of a single restart holds for it unchanged.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "rossoctl/app/agent_failure.hpp"
#include "rossoctl/app/parallel.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/app/sandbox_restart.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "sandbox_restart_internal.hpp"

namespace rossoctl::app {

using nlohmann::json;
using restart_detail::formatSeconds;
using std::chrono::milliseconds;

namespace {

// The labels' answer to a selector made only of key=value terms (what the controller writes as
// status.selector); nullopt for any other form, which only the server evaluates.
std::optional<bool> equalitySelectorMatches(const std::string& selector, const json& labels) {
    if (selector.empty()) return std::nullopt;
    size_t start = 0;
    while (start <= selector.size()) {
        size_t end = selector.find(',', start);
        if (end == std::string::npos) end = selector.size();
        std::string term = selector.substr(start, end - start);
        const size_t equals = term.find('=');
        if (equals == std::string::npos || equals == 0 ||
            term.find_first_of("!() ") != std::string::npos)
            return std::nullopt;
        std::string key = term.substr(0, equals);
        std::string value = term.substr(term[equals + 1] == '=' ? equals + 2 : equals + 1);
        if (value.find('=') != std::string::npos) return std::nullopt;
        const auto found = labels.is_object() ? labels.find(key) : labels.end();
        if (!labels.is_object() || found == labels.end() || !found->is_string() ||
            found->get<std::string>() != value)
            return false;
        start = end + 1;
    }
    return true;
}

// The pods of the namespace's LIST that sandbox's own pod LIST would have returned, when that
// can be told here; nullopt otherwise.
std::optional<SandboxPods> podsOfSandbox(const json& sandbox, const json& podList) {
    const PodSelector selector = sandboxPodSelector(sandbox);
    const std::string podName = model::sandboxPodName(sandbox);
    if (selector.labelSelector.empty() && selector.fieldSelector != "metadata.name=" + podName)
        return std::nullopt;
    SandboxPods pods;
    pods.list = json{{"items", json::array()}};
    const std::string uid = uidOf(sandbox);
    for (const auto& pod : podList.value("items", json::array())) {
        const json metadata = pod.value("metadata", json::object());
        bool selected = false;
        if (selector.labelSelector.empty()) {
            selected = metadata.value("name", "") == podName;
        } else {
            auto matches =
                equalitySelectorMatches(selector.labelSelector, metadata.value("labels", json()));
            if (!matches) return std::nullopt;
            selected = *matches;
        }
        if (!selected) continue;
        pods.list["items"].push_back(pod);
        if (controlledBy(pod, uid)) pods.owned.push_back(pod);
    }
    return pods;
}

struct Member {
    std::string name;
    json sandbox;
    std::string uid;
    std::set<std::string> oldUids;
    RestartResult result;
    std::string failure;
    bool replacementCreated = false;
    bool oldPodTerminating = false;
    bool podDecided = false;
    bool reported = false;

    restart_detail::Replacing replacing() const { return {name, uid, oldUids}; }
};

class RestartMany {
  public:
    RestartMany(const std::vector<kube::Client*>& clients, const Clock& clock,
                const kube::ResourceRef& sandboxes, std::string ns,
                const RestartManyOptions& options)
        : clients_(clients),
          clock_(clock),
          sandboxes_(sandboxes),
          ns_(std::move(ns)),
          options_(options),
          started_(clock.monotonic()) {}

    void run(const std::vector<std::string>& names, std::optional<json> sandboxList) {
        if (names.size() == 1) {  // its own reads are fewer than the namespace's lists
            restartOne(*clients_.front(), names.front());
            return;
        }
        kube::Client& client = *clients_.front();
        json podList;
        try {
            if (!sandboxList) riddenOut([&] { sandboxList = client.list(sandboxes_, ns_); });
            riddenOut([&] { podList = client.list(kube::resources::pods(), ns_); });
        } catch (const std::exception&) {
            // Nothing shared to start from: each restart reads for itself and says what failed.
            restartAlone(names);
            return;
        }
        std::map<std::string, json> byName;
        for (const auto& sandbox : sandboxList->value("items", json::array()))
            byName[sandbox.value("metadata", json::object()).value("name", "")] = sandbox;

        std::vector<std::string> alone;
        for (const auto& name : names) {
            auto found = byName.find(name);
            Member member;
            member.name = name;
            if (found != byName.end() && prepare(member, found->second, podList))
                members_.push_back(std::move(member));
            else
                alone.push_back(name);
        }
        std::mutex mutex;
        forEachInParallel(members_.size(), std::min(clients_.size(), members_.size()),
                          [&](size_t index, size_t worker) {
                              Member& member = members_[index];
                              deleteOldPod(*clients_[worker], member);
                              std::lock_guard lock(mutex);
                              if (!member.failure.empty() || !options_.restart.wait) finish(member);
                          });
        const bool waitShared =
            options_.restart.wait && std::any_of(members_.begin(), members_.end(),
                                                 [](const Member& m) { return !m.reported; });
        // The shared wait on one worker, each sandbox that needs its own restart on another.
        const size_t jobs = alone.size() + (waitShared ? 1 : 0);
        forEachInParallel(jobs, std::min(clients_.size(), jobs), [&](size_t index, size_t worker) {
            kube::Client& workerClient = *clients_[worker];
            if (waitShared && index == 0) {
                waitForReplacements(workerClient, podList);
                return;
            }
            restartOne(workerClient, alone[index - (waitShared ? 1 : 0)]);
        });
    }

  private:
    // True when the sandbox is in the plain state a shared restart handles: running, its pods
    // told apart here, one pod of its own that is neither leaving nor finished.
    bool prepare(Member& member, const json& sandbox, const json& podList) {
        if (!sandboxNotRunningReason(sandbox, clock_.now()).empty()) return false;
        auto pods = podsOfSandbox(sandbox, podList);
        if (!pods || pods->owned.size() != 1) return false;
        const json& pod = pods->owned.front();
        if (terminating(pod) || podFinished(pod)) return false;
        std::optional<json> target;
        try {
            target = sandboxPod(sandbox, pods->owned);
        } catch (const std::exception&) {
            return false;
        }
        if (!target || uidOf(*target) != uidOf(pod)) return false;
        member.sandbox = sandbox;
        member.uid = uidOf(sandbox);
        member.oldUids = {uidOf(pod)};
        member.result.podName = pod["metadata"].value("name", "");
        member.result.oldUid = uidOf(pod);
        return true;
    }

    void deleteOldPod(kube::Client& client, Member& member) {
        step(member.name, "deleting pod " + member.result.podName);
        kube::DeleteOptions options;
        options.preconditionUid = member.result.oldUid;
        try {
            riddenOut([&] {
                client.remove(kube::resources::pods(), ns_, member.result.podName, options);
            });
        } catch (const kube::ApiError& error) {
            if (error.code() == 409 || error.code() == 412) {
                // Replaced under us: never delete the replacement; wait past what is leaving.
                try {
                    SandboxPods pods;
                    riddenOut([&] { pods = findSandboxPods(client, member.sandbox); });
                    member.oldUids = restart_detail::replacedUnderUs(pods, member.result);
                } catch (const std::exception& listError) {
                    member.failure = listError.what();
                }
                return;
            }
            if (!error.isNotFound()) member.failure = error.what();
            return;
        } catch (const std::exception& error) {
            member.failure = error.what();
            return;
        }
        if (auto lost = model::podOnlyFilesNote(member.sandbox, member.result.podName);
            !lost.empty())
            member.result.notes.push_back(lost);
    }

    void waitForReplacements(kube::Client& client, const json& podList) {
        for (auto& member : members_)
            if (!member.reported) step(member.name, "waiting for a new ready pod");
        const auto since = clock_.now();  // older events are about the pods before the restart
        std::optional<json> given = podList;
        kube::WaitResult outcome;
        try {
            auto waited = waitUnlessBlocked(
                clock_, remaining(), options_.restart.cancel,
                [&](milliseconds span) {
                    kube::WaitOptions wait;
                    wait.timeout = span;
                    wait.cancel = options_.restart.cancel;
                    wait.initialList = std::move(given);
                    given.reset();
                    return kube::waitForSet(
                        client, clock_, kube::resources::pods(), ns_, wait,
                        [&](const kube::ObjectSet& set) { return podsDecided(set); });
                },
                [&]() -> std::optional<std::string> {
                    readBlockers(client, since);
                    return std::nullopt;
                },
                [&] {
                    return std::any_of(members_.begin(), members_.end(), [](const Member& m) {
                        return !m.podDecided && !m.replacementCreated;
                    });
                });
            outcome = waited.wait;
        } catch (const std::exception& error) {
            for (auto& member : members_)
                if (!member.podDecided) fail(member, error.what());
            return;
        }
        for (auto& member : members_) {
            if (member.reported || member.podDecided) continue;
            if (outcome.outcome == kube::WaitOutcome::Cancelled) {
                fail(member, interrupted("a new ready pod"));
            } else if (!member.replacementCreated) {
                fail(member,
                     fmt::format("timed out after {}: no replacement pod was ever created for pod "
                                 "{} (is the agent-sandbox controller running?); the Sandbox's "
                                 "status predates the restart",
                                 formatSeconds(options_.restart.timeout), member.result.podName));
            } else {
                fail(member, timedOut(client, member, "a new ready pod"));
            }
        }
        for (auto& member : members_)
            if (!member.reported && !member.failure.empty()) fail(member, member.failure);
        waitForSandboxesReady(client);
    }

    // The pod wait's predicate: every sandbox's replacement is ready or will never be. Each
    // sandbox looks only at the pods naming it as controller (the rules look at no others).
    bool podsDecided(const kube::ObjectSet& pods) {
        std::map<std::string, restart_detail::PodView> byController;
        for (const auto& [name, pod] : pods) {
            const auto metadata = pod.find("metadata");
            if (metadata == pod.end() || !metadata->is_object()) continue;
            const auto owners = metadata->find("ownerReferences");
            if (owners == metadata->end() || !owners->is_array()) continue;
            for (const auto& owner : *owners) {
                if (!owner.is_object()) continue;
                const auto controller = owner.find("controller");
                const auto uid = owner.find("uid");
                if (controller != owner.end() && *controller == true && uid != owner.end() &&
                    uid->is_string())
                    byController[uid->get<std::string>()].emplace_back(&name, &pod);
            }
        }
        bool all = true;
        const restart_detail::PodView none;
        for (auto& member : members_) {
            if (member.reported || member.podDecided) continue;
            auto found = byController.find(member.uid);
            const auto& own = found == byController.end() ? none : found->second;
            member.replacementCreated |= restart_detail::replacementSeen(member.replacing(), own);
            member.oldPodTerminating = restart_detail::oldPodTerminating(member.replacing(), own);
            if (!member.failure.empty() ||
                restart_detail::newPodDecided(member.replacing(), own, member.result,
                                              member.failure))
                member.podDecided = true;
            else
                all = false;
        }
        return all;
    }

    // Between spans, as one restart does: a sandbox with no replacement yet and no old pod still
    // leaving may be one the controller cannot make a pod for (quota, LimitRange); it fails at
    // the next look, the others wait on.
    void readBlockers(kube::Client& client, std::chrono::system_clock::time_point since) {
        for (auto& member : members_) {
            if (member.reported || member.podDecided || member.replacementCreated ||
                member.oldPodTerminating)
                continue;
            json sandbox;
            try {
                riddenOut([&] { sandbox = client.get(sandboxes_, ns_, member.name); });
            } catch (const kube::ApiError& error) {
                if (!error.isNotFound()) throw;
                member.failure = "was deleted while it restarted";
                continue;
            }
            if (auto why = sandboxCreateFailure(client, sandbox, since)) member.failure = *why;
        }
    }

    void waitForSandboxesReady(kube::Client& client) {
        auto waiting = [&] {
            return std::any_of(members_.begin(), members_.end(),
                               [](const Member& m) { return !m.reported; });
        };
        if (!waiting()) return;
        for (auto& member : members_)
            if (!member.reported) step(member.name, "waiting for the Sandbox to be Ready");
        kube::WaitOptions wait;
        kube::WaitResult outcome;
        try {
            wait.timeout = remaining();
            wait.cancel = options_.restart.cancel;
            outcome = kube::waitForSet(
                client, clock_, sandboxes_, ns_, wait, [&](const kube::ObjectSet& set) {
                    for (auto& member : members_) {
                        if (member.reported) continue;
                        auto found = set.find(member.name);
                        if (found == set.end() || uidOf(found->second) != member.uid)
                            fail(member, "was deleted while it restarted");
                        else if (kube::conditionTrue(found->second, "Finished"))
                            fail(member, "has finished: " + describeConditions(found->second));
                        else if (kube::conditionTrue(found->second, "Ready"))
                            finish(member);
                    }
                    return !waiting();
                });
        } catch (const std::exception& error) {
            for (auto& member : members_)
                if (!member.reported) fail(member, error.what());
            return;
        }
        for (auto& member : members_) {
            if (member.reported) continue;
            if (outcome.outcome == kube::WaitOutcome::Cancelled) {
                fail(member, interrupted("the Sandbox's Ready condition"));
                continue;
            }
            auto found = outcome.objects.find(member.name);
            fail(member,
                 fmt::format("timed out after {} waiting for the Sandbox's Ready "
                             "condition; the Sandbox says {}",
                             formatSeconds(options_.restart.timeout),
                             found == outcome.objects.end() ? std::string("nothing (not listed)")
                                                            : describeConditions(found->second)));
        }
    }

    std::string timedOut(kube::Client& client, const Member& member,
                         const std::string& waitingFor) {
        std::string says = "nothing (it could not be read)";
        try {
            says = describeConditions(client.get(sandboxes_, ns_, member.name));
        } catch (const std::exception&) {
        }
        return fmt::format("timed out after {} waiting for {}; the Sandbox says {}",
                           formatSeconds(options_.restart.timeout), waitingFor, says);
    }

    static std::string interrupted(const std::string& waitingFor) {
        return "restart interrupted while waiting for " + waitingFor +
               "; the old pod is already deleted";
    }

    void finish(Member& member) {
        member.reported = true;
        if (!member.failure.empty()) {
            report(member.name, fmt::format("sandbox/{} {}", member.name, member.failure));
            return;
        }
        member.result.took = elapsed();
        RestartOutcome outcome;
        outcome.name = member.name;
        outcome.result = member.result;
        options_.onDone(outcome);
    }

    void fail(Member& member, const std::string& why) {
        member.failure = why;
        finish(member);
    }

    void report(const std::string& name, const std::string& error) {
        RestartOutcome outcome;
        outcome.name = name;
        outcome.error = error;
        options_.onDone(outcome);
    }

    void restartAlone(const std::vector<std::string>& names) {
        forEachInParallel(
            names.size(), std::min(clients_.size(), names.size()),
            [&](size_t index, size_t worker) { restartOne(*clients_[worker], names[index]); });
    }

    void restartOne(kube::Client& client, const std::string& name) {
        RestartOptions restart = options_.restart;
        restart.onStep = [&](const std::string& text) { step(name, text); };
        RestartOutcome outcome;
        outcome.name = name;
        try {
            outcome.result = restartSandbox(client, clock_, sandboxes_, ns_, name, restart);
        } catch (const kube::ApiError& error) {
            outcome.error = fmt::format("sandbox/{}: {}", name, error.what());
        } catch (const std::exception& error) {
            outcome.error = error.what();
        }
        options_.onDone(outcome);
    }

    void step(const std::string& name, const std::string& text) const {
        if (options_.onStep) options_.onStep(name, text);
    }

    milliseconds elapsed() const {
        return std::chrono::duration_cast<milliseconds>(clock_.monotonic() - started_);
    }

    // What is left of the timeout, shared by every sandbox (they all started together); 0 = none.
    milliseconds remaining() const {
        if (options_.restart.timeout.count() == 0) return milliseconds{0};
        return std::max(milliseconds{1}, options_.restart.timeout - elapsed());
    }

    void riddenOut(const std::function<void()>& attempt) const {
        constexpr milliseconds kNoDeadlineBudget{std::chrono::minutes(5)};
        kube::rideOutOutage(clock_,
                            options_.restart.timeout.count() > 0 ? remaining() : kNoDeadlineBudget,
                            options_.restart.cancel, attempt);
    }

    const std::vector<kube::Client*>& clients_;
    const Clock& clock_;
    const kube::ResourceRef& sandboxes_;
    std::string ns_;
    const RestartManyOptions& options_;
    std::chrono::steady_clock::time_point started_;
    std::vector<Member> members_;
};

}  // namespace

void restartSandboxes(const std::vector<kube::Client*>& clients, const Clock& clock,
                      const kube::ResourceRef& sandboxes, const std::string& ns,
                      const std::vector<std::string>& names, const RestartManyOptions& options,
                      std::optional<json> sandboxList) {
    if (clients.empty() || names.empty()) return;
    RestartMany(clients, clock, sandboxes, ns, options).run(names, std::move(sandboxList));
}

}  // namespace rossoctl::app
