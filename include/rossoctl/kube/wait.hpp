#pragma once
// Waiting for API objects to reach a state: list, then watch from the list's resourceVersion,
// re-list when the server says the version is gone (410), until a predicate holds, the
// deadline passes or the user cancels. Never polls.
#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::kube {

// The objects currently matching the watched selector, keyed by metadata.name.
using ObjectSet = std::map<std::string, nlohmann::json>;

struct WaitOptions {
    std::string labelSelector;
    std::string fieldSelector;
    std::chrono::milliseconds timeout{0};  // 0 = no deadline
    const CancelFlag* cancel = nullptr;
    // A List (with metadata.resourceVersion) the caller already has: saves the first LIST.
    std::optional<nlohmann::json> initialList;
    // Longest single watch request; the wait re-watches from the last version after it.
    std::chrono::seconds watchChunk{300};
};

enum class WaitOutcome { Satisfied, TimedOut, Cancelled };

struct WaitResult {
    WaitOutcome outcome = WaitOutcome::TimedOut;
    ObjectSet objects;  // the last state seen, for messages on timeout
    int relists = 0;    // how often a 410 Gone forced a fresh LIST
    bool satisfied() const { return outcome == WaitOutcome::Satisfied; }
};

// Called with the current set after the first LIST and after every change; true = done.
using SetPredicate = std::function<bool(const ObjectSet& objects)>;
// Called with the object, or nullopt while it does not exist; true = done.
using ObjectPredicate = std::function<bool(const std::optional<nlohmann::json>& object)>;

// Waits until `done` holds for the objects of `ref` in ns matching the options' selectors.
WaitResult waitForSet(Client& client, const Clock& clock, const ResourceRef& ref,
                      const std::string& ns, const WaitOptions& options, const SetPredicate& done);

// Waits until `done` holds for the one object named `name` (a metadata.name field selector).
WaitResult waitForObject(Client& client, const Clock& clock, const ResourceRef& ref,
                         const std::string& ns, const std::string& name, WaitOptions options,
                         const ObjectPredicate& done);

// The condition of `type` in status.conditions, if the object has one.
std::optional<nlohmann::json> findCondition(const nlohmann::json& object, const std::string& type);
// True when status.conditions has `type` with status "True".
bool conditionTrue(const nlohmann::json& object, const std::string& type);

}  // namespace rossoctl::kube
