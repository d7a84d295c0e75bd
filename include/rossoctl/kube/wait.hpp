#pragma once
// Waiting for API objects to reach a state: list, then watch from the list's resourceVersion,
// re-list when the server says the version is gone (410), reconnect with backoff while the
// server is unreachable, until a predicate holds, the deadline passes or the user cancels.
// Never polls.
#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/json_depth.hpp"

namespace rossoctl::kube {

// The objects currently matching the watched selector, keyed by metadata.name (or "ns/name",
// see WaitOptions::keyByNamespace).
using ObjectSet = std::map<std::string, nlohmann::json>;

// Pause before reconnecting after `failures` failed attempts in a row: doubling, capped, as
// client-go's reflector does, so a restarting apiserver is not hammered.
struct ReconnectBackoff {
    std::chrono::milliseconds initial{250};
    std::chrono::milliseconds max{4000};
    std::chrono::milliseconds delay(int failures) const;
};

// True for a failure an apiserver outage causes (connection refused or cut, 5xx, 429), which a
// wait rides out until its deadline; false for errors a retry cannot fix (403, 404, bad input).
bool isOutage(const std::exception& error);

// Runs `attempt` again while it fails with an outage, pausing by `backoff`, until it succeeds,
// fails otherwise, Ctrl-C, or `budget` has passed (then its last error is thrown). For requests
// that are safe to repeat (GET, server-side apply, DELETE): the wait below does the same.
void rideOutOutage(const Clock& clock, std::chrono::milliseconds budget, const CancelFlag* cancel,
                   const std::function<void()>& attempt, const ReconnectBackoff& backoff = {});

struct WaitOptions {
    std::string labelSelector;
    std::string fieldSelector;
    std::chrono::milliseconds timeout{0};  // 0 = no deadline
    const CancelFlag* cancel = nullptr;
    // A List (with metadata.resourceVersion) the caller already has: saves the first LIST.
    std::optional<nlohmann::json> initialList;
    // Longest single watch request; the wait re-watches from the last version after it.
    std::chrono::seconds watchChunk{300};
    ReconnectBackoff reconnect;
    // Pause before watching again after a watch that ended (or answered 410 Gone) sooner than
    // rewatch.max: doubling from 800 ms to 30 s, client-go reflector's backoff, so a server
    // that ends every watch at once is not asked again in a hot loop. A longer one resets it.
    ReconnectBackoff rewatch{std::chrono::milliseconds(800), std::chrono::seconds(30)};
    // Key the set by "ns/name": for a wait over every namespace, where names collide.
    bool keyByNamespace = false;
    // Only the object of this name is kept (a server may ignore the field selector); "" = all.
    std::string onlyName;
    // What the set may hold, as a server chooses what a watch names: past either cap the wait
    // fails with an error saying so, rather than keep all a hostile server sends.
    size_t maxObjects = 20'000;
    size_t maxBytes = kMaxJsonMemoryBytes;  // the objects' memory, as measureJson counts it
    // Called with each object that changed (a new resourceVersion), or the last state of one
    // deleted, as the set changes; a re-list reports what differs from the set it replaced.
    // Not for the first list. For `list -w`, which shows every change.
    std::function<void(const nlohmann::json& object)> onChange;
};

enum class WaitOutcome { Satisfied, TimedOut, Cancelled };

struct WaitResult {
    WaitOutcome outcome = WaitOutcome::TimedOut;
    ObjectSet objects;   // the last state seen, for messages on timeout
    int relists = 0;     // how often a 410 Gone forced a fresh LIST
    int rewatches = 0;   // how often a watch that ended early was followed by a pause
    int reconnects = 0;  // how often an outage was ridden out
    // The version `objects` stand at; "" when not known (a 410 left them stale).
    std::string resourceVersion;
    bool satisfied() const { return outcome == WaitOutcome::Satisfied; }
    // `objects` as a List at `resourceVersion`: the initialList of a wait over the same
    // selectors that goes on where this one stopped, with a watch and no LIST. nullopt: list.
    std::optional<nlohmann::json> resumeList() const;
};

// Called with the current set after the first LIST and after every change; true = done.
using SetPredicate = std::function<bool(const ObjectSet& objects)>;
// Called with the object, or nullopt while it does not exist; true = done.
using ObjectPredicate = std::function<bool(const std::optional<nlohmann::json>& object)>;

// Waits until `done` holds for the objects of `ref` in ns matching the options' selectors.
WaitResult waitForSet(Client& client, const Clock& clock, const ResourceRef& ref,
                      const std::string& ns, const WaitOptions& options, const SetPredicate& done);

// Waits until `done` holds for the one object named `name` (a metadata.name field selector;
// objects of other names are ignored, whatever the server sends).
WaitResult waitForObject(Client& client, const Clock& clock, const ResourceRef& ref,
                         const std::string& ns, const std::string& name, WaitOptions options,
                         const ObjectPredicate& done);

// The condition of `type` in status.conditions, if the object has one.
std::optional<nlohmann::json> findCondition(const nlohmann::json& object, const std::string& type);
// True when status.conditions has `type` with status "True".
bool conditionTrue(const nlohmann::json& object, const std::string& type);

}  // namespace rossoctl::kube
