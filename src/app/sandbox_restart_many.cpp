// Restarting several sandboxes of one namespace on shared reads: one LIST of the Sandboxes, one
// LIST of their pods (`KEY in (v1,…)` over the selector the controller writes), a DELETE each,
// then one pod watch on that selector and one Sandbox LIST-and-watch for them all. A sandbox in
// any state but the plain one is restarted on its own (restartSandbox), so every rule of a
// single restart holds for it unchanged; each sees only the pods its own selector selects.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "rossoctl/app/agent_failure.hpp"
#include "rossoctl/app/parallel.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/app/sandbox_restart.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "rossoctl/model/validation.hpp"
#include "sandbox_restart_internal.hpp"

namespace rossoctl::app {

using nlohmann::json;
using restart_detail::formatSeconds;
using std::chrono::milliseconds;

namespace {

// Sandboxes whose pods one LIST and one watch select: the URL stays a few KiB.
constexpr size_t kMaxPerBatch = 200;
constexpr std::chrono::milliseconds kReadyReadFloor{5000};

const json* member(const json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    auto found = object.find(key);
    return found == object.end() ? nullptr : &*found;
}

std::string stringAt(const json& object, const char* key, const char* inner) {
    const json* outer = member(object, key);
    const json* value = outer ? member(*outer, inner) : nullptr;
    return value && value->is_string() ? value->get<std::string>() : std::string{};
}

// A label value, or a key's name part: at most 63 characters, alphanumeric at both ends.
bool labelName(const std::string& text, bool allowEmpty) {
    if (text.empty()) return allowEmpty;
    if (text.size() > 63 || !std::isalnum(static_cast<unsigned char>(text.front())) ||
        !std::isalnum(static_cast<unsigned char>(text.back())))
        return false;
    return std::all_of(text.begin(), text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
}

// A label key as the API server accepts it: [DNS prefix/]name (the prefix at most 253).
bool labelKey(const std::string& key) {
    const size_t slash = key.find('/');
    if (slash == std::string::npos) return labelName(key, false);
    return model::isDnsSubdomain(key.substr(0, slash)) && labelName(key.substr(slash + 1), false);
}

// The one key=value term of a selector such as the controller writes in status.selector;
// nullopt for any other form, which only the server evaluates (that sandbox goes alone).
std::optional<std::pair<std::string, std::string>> singleTerm(const std::string& selector) {
    const size_t equals = selector.find('=');
    if (equals == std::string::npos) return std::nullopt;
    std::string key = selector.substr(0, equals);
    std::string value =
        selector.substr(selector.compare(equals, 2, "==") == 0 ? equals + 2 : equals + 1);
    if (!labelKey(key) || !labelName(value, false)) return std::nullopt;
    return std::make_pair(std::move(key), std::move(value));
}

bool labelIs(const json& pod, const std::string& key, const std::string& value) {
    const json* metadata = member(pod, "metadata");
    const json* labels = metadata ? member(*metadata, "labels") : nullptr;
    const json* label = labels ? member(*labels, key.c_str()) : nullptr;
    return label && label->is_string() && label->get<std::string>() == value;
}

// The pods naming each UID as controller, pointing into `pods`.
std::map<std::string, restart_detail::PodView> byController(const kube::ObjectSet& pods) {
    std::map<std::string, restart_detail::PodView> result;
    for (const auto& [name, pod] : pods) {
        const json* metadata = member(pod, "metadata");
        const json* owners = metadata ? member(*metadata, "ownerReferences") : nullptr;
        if (!owners || !owners->is_array()) continue;
        std::set<std::string> seen;
        for (const auto& owner : *owners) {
            const json* controller = member(owner, "controller");
            const json* uid = member(owner, "uid");
            if (controller && *controller == true && uid && uid->is_string() &&
                seen.insert(uid->get<std::string>()).second)
                result[uid->get<std::string>()].emplace_back(&name, &pod);
        }
    }
    return result;
}

struct Member {
    std::string name;
    json sandbox;
    std::string uid;
    std::string labelValue;  // of the batch's selector key
    std::set<std::string> oldUids;
    RestartResult result;
    std::string failure;
    std::chrono::system_clock::time_point deleted;  // events before are about the old pod
    bool replacementCreated = false;
    bool oldPodTerminating = false;
    bool sawOldPodLeave = false;  // seen terminating: its going is when a blocker may show
    bool podDecided = false;
    bool reported = false;

    restart_detail::Replacing replacing() const { return {name, uid, oldUids}; }
};

// Sandboxes whose pods share one LIST and one watch: `key in (their values)`.
struct Batch {
    std::string key;
    std::vector<Member> members;
    json podList;
    bool longSpan = false;  // the wait's current span is not cut for blocker reads
    bool recheck = false;   // an old pod went with no replacement during a long span
};

// A sandbox whose wait a blocker (quota, LimitRange) may end: no replacement yet and no old pod
// still leaving (while it leaves, the controller cannot make the new pod under its name).
bool blockable(const Member& member) {
    return !member.reported && !member.podDecided && member.failure.empty() &&
           !member.replacementCreated && !member.oldPodTerminating;
}

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
        std::vector<std::string> alone;
        std::vector<Batch> batches;
        if (names.size() == 1) {  // its own reads are fewer than the namespace's lists
            alone = names;
        } else if (!guarded(names, [&] { plan(names, std::move(sandboxList), alone, batches); })) {
            return;  // every sandbox was told what stopped it; nothing more is started
        }
        // Every batch's wait and each sandbox that restarts alone, side by side.
        const size_t waits = options_.restart.wait ? batches.size() : 0;
        const size_t jobs = waits + alone.size();
        forEachInParallel(jobs, std::min(clients_.size(), jobs), [&](size_t index, size_t worker) {
            kube::Client& client = *clients_[worker];
            if (index < waits)
                guarded(namesOf(batches[index]),
                        [&] { waitForReplacements(client, batches[index]); });
            else
                restartOne(client, alone[index - waits]);
        });
        for (const auto& name : names)  // never silent, whatever went wrong
            report(name, {}, fmt::format("sandbox/{} was not restarted", name));
    }

  private:
    // The shared LISTs, who goes alone, and the DELETEs of the batches' old pods.
    void plan(const std::vector<std::string>& names, std::optional<json> sandboxList,
              std::vector<std::string>& alone, std::vector<Batch>& batches) {
        kube::Client& client = *clients_.front();
        try {
            if (!sandboxList) riddenOut([&] { sandboxList = client.list(sandboxes_, ns_); });
        } catch (const std::exception&) {
            // Each restart reads for itself and says what failed; a name that is not there
            // still restarts none (review 52 M1): each is read before any pod is deleted.
            std::map<std::string, json> found;
            for (const auto& name : names) {
                try {
                    if (auto sandbox = client.getIfExists(sandboxes_, ns_, name))
                        found.emplace(name, std::move(*sandbox));
                } catch (const std::exception&) {
                    found.emplace(name, json::object());  // unreadable: its own restart says so
                }
            }
            refuseMissing(names, found);
            alone = names;
            return;
        }
        std::map<std::string, json> byName;
        if (const json* items = member(*sandboxList, "items"); items && items->is_array())
            for (const auto& sandbox : *items)
                if (auto name = stringAt(sandbox, "metadata", "name"); !name.empty())
                    byName.emplace(name, sandbox);  // the first of a name, as a GET gives one
        refuseMissing(names, byName);
        std::map<std::string, std::vector<Member>> byKey;
        for (const auto& name : names) {
            auto found = byName.find(name);
            auto term = found == byName.end()
                            ? std::nullopt
                            : singleTerm(stringAt(found->second, "status", "selector"));
            if (!term || stringAt(found->second, "metadata", "uid").empty() ||
                !runnable(found->second)) {
                alone.push_back(name);
                continue;
            }
            Member candidate;
            candidate.name = name;
            candidate.sandbox = found->second;
            candidate.uid = stringAt(found->second, "metadata", "uid");
            candidate.labelValue = term->second;
            byKey[term->first].push_back(std::move(candidate));
        }
        for (auto& [key, candidates] : byKey)
            for (size_t start = 0; start < candidates.size(); start += kMaxPerBatch) {
                Batch batch;
                batch.key = key;
                const size_t end = std::min(candidates.size(), start + kMaxPerBatch);
                for (size_t i = start; i < end; ++i)
                    batch.members.push_back(std::move(candidates[i]));
                listPods(client, batch, alone);
                if (!batch.members.empty()) batches.push_back(std::move(batch));
            }
        size_t batched = 0;
        for (const auto& batch : batches) batched += batch.members.size();
        readOneByOne_ = batches.size() > 1 || byName.size() > 4 * batched + 100;
        std::mutex mutex;
        for (auto& batch : batches)
            forEachInParallel(batch.members.size(), std::min(clients_.size(), batch.members.size()),
                              [&](size_t index, size_t worker) {
                                  Member& member = batch.members[index];
                                  deleteOldPod(*clients_[worker], member);
                                  std::lock_guard lock(mutex);
                                  if (!member.failure.empty() || !options_.restart.wait)
                                      finish(member);
                              });
    }

    // A name the namespace does not have is a typo more often than not: nothing is restarted
    // (and no pod's files lost) until every name is right, as bad input changes nothing.
    void refuseMissing(const std::vector<std::string>& names,
                       const std::map<std::string, json>& byName) {
        std::vector<std::string> known, missing;
        for (const auto& [name, sandbox] : byName) known.push_back(name);
        for (const auto& name : names)
            if (!byName.count(name)) missing.push_back("sandbox/" + name);
        if (missing.empty()) return;
        for (const auto& name : names)
            if (!byName.count(name))
                report(name, {},
                       fmt::format("sandbox/{} not found in namespace {}; {}", name, ns_,
                                   sandboxNotFoundAdvice(known, ns_, name)));
        throw Error(fmt::format(
            "not restarted: {} not found, and no sandbox is restarted until every name is found",
            fmt::join(missing, ", ")));
    }

    // One LIST of the batch's pods; a member that is not in the plain state goes alone.
    void listPods(kube::Client& client, Batch& batch, std::vector<std::string>& alone) {
        std::string values;
        for (const auto& candidate : batch.members)
            values += (values.empty() ? "" : ",") + candidate.labelValue;
        kube::ListOptions options;
        options.labelSelector = batch.key + " in (" + values + ")";
        try {
            riddenOut([&] { batch.podList = client.list(kube::resources::pods(), ns_, options); });
        } catch (const std::exception&) {
            for (const auto& candidate : batch.members) alone.push_back(candidate.name);
            batch.members.clear();
            return;
        }
        kube::ObjectSet pods;
        if (const json* items = member(batch.podList, "items"); items && items->is_array())
            for (const auto& pod : *items) pods.emplace(stringAt(pod, "metadata", "name"), pod);
        const auto controlled = byController(pods);
        std::vector<Member> plain;
        for (auto& candidate : batch.members) {
            auto own = controlled.find(candidate.uid);
            if (own != controlled.end() && plainState(candidate, batch.key, own->second))
                plain.push_back(std::move(candidate));
            else
                alone.push_back(candidate.name);
        }
        batch.members = std::move(plain);
    }

    // Running, as far as its spec and status say (a malformed one is left to its own restart).
    bool runnable(const json& sandbox) const {
        try {
            return sandboxNotRunningReason(sandbox, clock_.now()).empty();
        } catch (const std::exception&) {
            return false;
        }
    }

    static bool plainState(Member& member, const std::string& key,
                           const restart_detail::PodView& controlled) {
        try {
            return prepare(member, key, controlled);
        } catch (const std::exception&) {
            return false;  // a pod of the wrong shape: its own restart says what is wrong
        }
    }

    // True when the sandbox is in the plain state a shared restart handles: among the pods its
    // selector selects, one it controls, the one it records, neither leaving nor finished.
    static bool prepare(Member& member, const std::string& key,
                        const restart_detail::PodView& controlled) {
        std::vector<json> owned;
        for (const auto& entry : controlled)
            if (labelIs(*entry.second, key, member.labelValue)) owned.push_back(*entry.second);
        if (owned.size() != 1) return false;
        const json& pod = owned.front();
        if (terminating(pod) || podFinished(pod)) return false;
        auto target = sandboxPod(member.sandbox, owned);  // throws for several: alone
        if (!target || uidOf(*target) != uidOf(pod)) return false;
        member.oldUids = {uidOf(pod)};
        member.result.podName = stringAt(pod, "metadata", "name");
        member.result.oldUid = uidOf(pod);
        return !member.result.podName.empty() && !member.result.oldUid.empty();
    }

    void deleteOldPod(kube::Client& client, Member& member) {
        step(member.name, "deleting pod " + member.result.podName);
        member.deleted = clock_.now();
        kube::DeleteOptions options;
        options.preconditionUid = member.result.oldUid;
        bool answered = false;  // an answer says whether the pod went; none leaves it open
        try {
            try {
                riddenOut([&] {
                    client.remove(kube::resources::pods(), ns_, member.result.podName, options);
                });
            } catch (const kube::ApiError& error) {
                answered = !kube::isOutage(error);
                if (error.code() == 409 || error.code() == 412) {
                    // Replaced under us: never delete the replacement; wait past what leaves.
                    SandboxPods pods;
                    riddenOut([&] { pods = findSandboxPods(client, member.sandbox); });
                    member.oldUids = restart_detail::replacedUnderUs(pods, member.result);
                    return;
                }
                if (!error.isNotFound()) throw;
            }
            if (auto lost = model::podOnlyFilesNote(member.sandbox, member.result.podName);
                !lost.empty())
                member.result.notes.push_back(lost);
        } catch (const std::exception& error) {
            member.failure = error.what();
            // Ctrl-C or a cut connection with the DELETE sent: its files may be gone, said so.
            if (!answered) filesMaybeLost(member);
        }
    }

    static void filesMaybeLost(Member& member) {
        try {
            if (auto lost = model::podOnlyFilesNote(member.sandbox, member.result.podName);
                !lost.empty())
                member.result.notes.push_back(lost + restart_detail::kUnansweredDelete);
        } catch (const std::exception&) {
            // A template of the wrong shape: its failure already says what is wrong.
        }
    }

    void waitForReplacements(kube::Client& client, Batch& batch) {
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
                outcome = waitUnlessBlocked(
                              clock_, remaining(), options_.restart.cancel,
                              [&](milliseconds span) {
                                  batch.longSpan = !anyBlockable();
                                  kube::WaitOptions wait;
                                  wait.labelSelector = batch.key + " in (" + valuesOf(batch) + ")";
                                  wait.timeout = span;
                                  wait.cancel = options_.restart.cancel;
                                  wait.initialList = std::exchange(given, std::nullopt);
                                  auto pods =
                                      kube::waitForSet(client, clock_, kube::resources::pods(), ns_,
                                                       wait, [&](const kube::ObjectSet& set) {
                                                           return podsDecided(batch, set);
                                                       });
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
    bool podsDecided(Batch& batch, const kube::ObjectSet& pods) {
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
                restart_detail::newPodDecided(member.replacing(), own, member.result,
                                              member.failure)) {
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
    void readBlockers(kube::Client& client, Batch& batch) {
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

    void waitForSandboxesReady(kube::Client& client, Batch& batch) {
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
                    outcome = kube::waitForObject(client, clock_, sandboxes_, ns_, member.name,
                                                  wait, [&](const std::optional<json>& sandbox) {
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

    // Past the time-out, where the sandbox stands is worth one read, of a second at most.
    std::string timedOut(kube::Client& client, const std::string& name,
                         const std::string& waitingFor) {
        std::string says = "nothing (it could not be read)";
        try {
            kube::Client::DeadlineScope brief(
                client, {clock_.monotonic() + std::chrono::seconds(1), "the time-out's last read"});
            auto sandbox = client.getIfExists(sandboxes_, ns_, name);
            says = sandbox ? describeConditions(*sandbox) : "nothing (it was deleted)";
        } catch (const std::exception&) {
        }
        return fmt::format("timed out after {} waiting for {}; the Sandbox says {}",
                           formatSeconds(options_.restart.timeout), waitingFor, says);
    }

    static std::string interrupted(const std::string& waitingFor) {
        return "restart interrupted while waiting for " + waitingFor +
               "; the old pod is already deleted";
    }

    static std::string valuesOf(const Batch& batch) {
        std::string values;
        for (const auto& member : batch.members)
            values += (values.empty() ? "" : ",") + member.labelValue;
        return values;
    }

    static std::vector<std::string> namesOf(const Batch& batch) {
        std::vector<std::string> names;
        for (const auto& member : batch.members) names.push_back(member.name);
        return names;
    }

    void finish(Member& member) {
        member.reported = true;
        if (!member.failure.empty()) {
            // The files its DELETE took are gone whatever failed after it (Ctrl-C, a time-out).
            report(member.name, {}, fmt::format("sandbox/{} {}", member.name, member.failure),
                   member.result.notes);
            return;
        }
        if (member.result.took.count() == 0) member.result.took = elapsed();
        report(member.name, member.result, {});
    }

    void fail(Member& member, const std::string& why) {
        member.failure = why;
        finish(member);
    }

    // Each sandbox ends in one onDone, the first said; later ones (a fallback) are dropped.
    void report(const std::string& name, std::optional<RestartResult> result,
                const std::string& error, std::vector<std::string> notes = {}) {
        std::lock_guard lock(reportMutex_);
        if (!reported_.insert(name).second) return;
        RestartOutcome outcome;
        outcome.name = name;
        outcome.result = std::move(result);
        outcome.error = error;
        if (!error.empty()) outcome.notes = std::move(notes);
        options_.onDone(outcome);
    }

    // Runs `work`; whatever it throws ends the named sandboxes not yet reported with it (a
    // worker of forEachInParallel must not throw).
    bool guarded(const std::vector<std::string>& names, const std::function<void()>& work) {
        try {
            work();
            return true;
        } catch (const std::exception& error) {
            for (const auto& name : names)
                report(name, {}, fmt::format("sandbox/{}: {}", name, error.what()));
            return false;
        }
    }

    void restartOne(kube::Client& client, const std::string& name) {
        RestartOptions restart = options_.restart;
        restart.onStep = [&](const std::string& text) { step(name, text); };
        // A restart that fails once its pod is deleted (Ctrl-C included) still says what went.
        std::string lostFiles;
        restart.onFilesLost = [&](const std::string& note) { lostFiles = note; };
        auto notes = [&](const std::string& error) {
            if (lostFiles.empty() || error.find(lostFiles) != std::string::npos)
                return std::vector<std::string>{};
            return std::vector<std::string>{lostFiles};
        };
        try {
            report(name, restartSandbox(client, clock_, sandboxes_, ns_, name, restart), {});
        } catch (const kube::ApiError& error) {
            report(name, {}, fmt::format("sandbox/{}: {}", name, error.what()),
                   notes(error.what()));
        } catch (const std::exception& error) {
            report(name, {}, error.what(), notes(error.what()));
        }
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
    bool readOneByOne_ = false;  // the Sandboxes' Ready read by name, not by one list
    std::mutex reportMutex_;
    std::set<std::string> reported_;
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
