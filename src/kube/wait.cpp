#include "rossoctl/kube/wait.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rossoctl::kube {

using nlohmann::json;

namespace {

std::string resourceVersionOf(const json& object) {
    if (!object.contains("metadata") || !object["metadata"].is_object()) return {};
    return object["metadata"].value("resourceVersion", std::string{});
}

std::string nameOf(const json& object) {
    if (!object.contains("metadata") || !object["metadata"].is_object()) return {};
    return object["metadata"].value("name", std::string{});
}

// Names collide across namespaces: a wait over every namespace may key its set by "ns/name".
std::string keyOf(const json& object, bool byNamespace) {
    const std::string name = nameOf(object);
    if (!byNamespace || !object.contains("metadata")) return name;
    const std::string objectNs = object["metadata"].value("namespace", std::string{});
    return objectNs.empty() ? name : objectNs + "/" + name;
}

// The wait's ObjectSet, bounded: what each object costs is tracked so a server naming ever new
// objects meets a cap, and each change is told to options.onChange (list -w) as it is applied,
// without rescanning the set.
class BoundedSet {
  public:
    BoundedSet(ObjectSet& objects, const WaitOptions& options, const ResourceRef& ref)
        : objects_(objects), options_(options), ref_(ref) {}

    // A (re-)list: the set becomes its items; a re-list tells what differs from the old set.
    void replaceWith(const json& items, bool report) {
        ObjectSet old = std::move(objects_);
        objects_.clear();
        bytes_.clear();
        total_ = 0;
        if (items.is_array())
            for (const auto& item : items) {
                if (!kept(item)) continue;
                const std::string key = keyOf(item, options_.keyByNamespace);
                keep(key, item, measureJson(item.dump()).memoryBytes);
                if (!report || !options_.onChange) continue;
                auto before = old.find(key);
                if (before == old.end() ||
                    resourceVersionOf(before->second) != resourceVersionOf(item))
                    options_.onChange(item);
            }
        if (report && options_.onChange)
            for (const auto& [key, object] : old)
                if (!objects_.count(key)) options_.onChange(object);  // its last state
    }

    // One watch event (not a BOOKMARK); false when it changed nothing the wait keeps.
    bool apply(const WatchEvent& event) {
        if (!kept(event.object)) return false;
        const std::string key = keyOf(event.object, options_.keyByNamespace);
        auto known = objects_.find(key);
        if (event.type == "DELETED") {
            if (known == objects_.end()) return false;
            if (options_.onChange) options_.onChange(known->second);  // its last state
            forget(key);
            return true;
        }
        const bool changed = known == objects_.end() ||
                             resourceVersionOf(known->second) != resourceVersionOf(event.object);
        if (known != objects_.end()) forget(key);
        keep(key, event.object, event.bytes);
        if (changed && options_.onChange) options_.onChange(event.object);
        return true;
    }

  private:
    bool kept(const json& object) const {
        return options_.onlyName.empty() || nameOf(object) == options_.onlyName;
    }
    void keep(const std::string& key, const json& object, size_t bytes) {
        if (!objects_.count(key) && objects_.size() >= options_.maxObjects)
            refuse(fmt::format("more than {} objects", options_.maxObjects));
        if (total_ + bytes > options_.maxBytes)
            refuse(fmt::format("more than {} MiB of objects", options_.maxBytes >> 20));
        objects_[key] = object;
        total_ += bytes;
        bytes_[key] = bytes;
    }
    void forget(const std::string& key) {
        auto size = bytes_.find(key);
        if (size != bytes_.end()) {
            total_ -= size->second;
            bytes_.erase(size);
        }
        objects_.erase(key);
    }
    [[noreturn]] void refuse(const std::string& what) const {
        throw Error(
            fmt::format("the server named {} {} for this wait; refused (a server that ignores the "
                        "selector, or a watch over too much: narrow it with -n or -l)",
                        what, ref_.resource));
    }

    ObjectSet& objects_;
    const WaitOptions& options_;
    const ResourceRef& ref_;
    std::map<std::string, size_t> bytes_;
    size_t total_ = 0;
};

// A watch that outlives its server-side timeout by this much is a dead connection.
constexpr std::chrono::seconds kWatchGrace{30};
// Sleeps are cut into slices this long so Ctrl-C ends a backoff promptly.
constexpr std::chrono::milliseconds kSleepSlice{100};

}  // namespace

std::chrono::milliseconds ReconnectBackoff::delay(int failures) const {
    auto pause = initial;
    for (int i = 1; i < failures && pause < max; ++i) pause *= 2;
    return std::min(pause, max);
}

bool isOutage(const std::exception& error) {
    if (const auto* transport = dynamic_cast<const TransportError*>(&error))
        return transport->kind() != TransportError::Kind::Cancelled;
    if (const auto* api = dynamic_cast<const ApiError*>(&error))
        return api->code() >= 500 || api->code() == 429;
    return false;
}

void rideOutOutage(const Clock& clock, std::chrono::milliseconds budget, const CancelFlag* cancel,
                   const std::function<void()>& attempt, const ReconnectBackoff& backoff) {
    const auto giveUp = clock.monotonic() + budget;
    for (int failures = 1;; ++failures) {
        try {
            attempt();
            return;
        } catch (const std::exception& error) {
            const auto pause = backoff.delay(failures);
            if (!isOutage(error) || clock.monotonic() + pause >= giveUp) throw;
            for (std::chrono::milliseconds slept{0}; slept < pause; slept += kSleepSlice) {
                if (cancel && cancel->cancelled()) throw;
                clock.sleepFor(std::min(kSleepSlice, pause - slept));
            }
        }
    }
}

std::optional<json> WaitResult::resumeList() const {
    if (resourceVersion.empty()) return std::nullopt;
    json items = json::array();
    for (const auto& [key, object] : objects) items.push_back(object);
    return json{{"metadata", {{"resourceVersion", resourceVersion}}}, {"items", std::move(items)}};
}

WaitResult waitForSet(Client& client, const Clock& clock, const ResourceRef& ref,
                      const std::string& ns, const WaitOptions& options, const SetPredicate& done) {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    WaitResult result;
    const bool hasDeadline = options.timeout.count() > 0;
    const auto deadline = clock.monotonic() + options.timeout;
    // The LIST too ends by the wait's deadline, not the 5-minute default of a request.
    std::optional<Client::DeadlineScope> bounded;
    if (hasDeadline)
        bounded.emplace(client, CommandDeadline{deadline, fmt::format("the wait's time ({} ms)",
                                                                      options.timeout.count())});
    // Past a command's --timeout that came before the wait's own, nothing can be sent again:
    // the wait ends with the request's error, which names it.
    auto commandOver = [&] {
        const auto& bound = client.deadline();
        return bound && clock.monotonic() >= bound->at && (!hasDeadline || bound->at < deadline);
    };
    auto cancelled = [&] { return options.cancel && options.cancel->cancelled(); };

    std::optional<json> given = options.initialList;
    BoundedSet set(result.objects, options, ref);
    bool listedBefore = false;  // a re-list reports its differences to onChange
    std::string version;
    bool needList = true;
    int failuresInARow = 0;
    // Waits out an outage until the deadline; false = the deadline or Ctrl-C came first.
    auto backOff = [&]() {
        ++failuresInARow;
        auto pause = options.reconnect.delay(failuresInARow);
        if (hasDeadline) {
            const auto left = duration_cast<milliseconds>(deadline - clock.monotonic());
            if (left <= pause) return false;
        }
        for (milliseconds slept{0}; slept < pause && !cancelled(); slept += kSleepSlice)
            clock.sleepFor(std::min(kSleepSlice, pause - slept));
        ++result.reconnects;
        return true;
    };
    int shortInARow = 0;
    // After a watch that ended (or a 410) within `lasted` of its start: false = the deadline
    // came first. A server ending every watch at once otherwise had 78,000 in 10 s.
    auto pauseBeforeRewatch = [&](milliseconds lasted) {
        if (lasted >= options.rewatch.max) {
            shortInARow = 0;
            return true;
        }
        auto pause = options.rewatch.delay(++shortInARow);
        if (hasDeadline) {
            const auto left = duration_cast<milliseconds>(deadline - clock.monotonic());
            if (left.count() <= 0) return false;
            pause = std::min(pause, left);
        }
        for (milliseconds slept{0}; slept < pause && !cancelled(); slept += kSleepSlice)
            clock.sleepFor(std::min(kSleepSlice, pause - slept));
        ++result.rewatches;
        return !hasDeadline || clock.monotonic() < deadline;
    };
    while (true) {
        if (cancelled()) {
            result.outcome = WaitOutcome::Cancelled;
            return result;
        }
        const auto attemptStart = clock.monotonic();
        auto lasted = [&] { return duration_cast<milliseconds>(clock.monotonic() - attemptStart); };
        try {
            if (needList) {
                ListOptions listOptions;
                listOptions.labelSelector = options.labelSelector;
                listOptions.fieldSelector = options.fieldSelector;
                json list = given ? std::move(*given) : client.list(ref, ns, listOptions);
                given.reset();
                const auto items = list.find("items");
                set.replaceWith(items != list.end() ? *items : json::array(), listedBefore);
                listedBefore = true;
                version = resourceVersionOf(list);
                result.resourceVersion = version;
                needList = false;
                failuresInARow = 0;
                if (done(result.objects)) {
                    result.outcome = WaitOutcome::Satisfied;
                    return result;
                }
            }
            milliseconds left = options.watchChunk + kWatchGrace;
            if (hasDeadline) {
                left = duration_cast<milliseconds>(deadline - clock.monotonic());
                if (left.count() <= 0) {
                    result.outcome = WaitOutcome::TimedOut;
                    return result;
                }
            }
            ListOptions watchOptions;
            watchOptions.labelSelector = options.labelSelector;
            watchOptions.fieldSelector = options.fieldSelector;
            watchOptions.resourceVersion = version;
            const auto leftSeconds = duration_cast<std::chrono::seconds>(left + milliseconds(999));
            watchOptions.timeoutSeconds =
                static_cast<int>(std::min(leftSeconds, options.watchChunk).count());
            bool satisfied = false;
            client.watch(
                ref, ns, watchOptions,
                [&](const WatchEvent& event) {
                    failuresInARow = 0;
                    const std::string eventVersion = resourceVersionOf(event.object);
                    if (!eventVersion.empty()) result.resourceVersion = version = eventVersion;
                    if (event.type == "BOOKMARK" || !set.apply(event)) return !cancelled();
                    satisfied = done(result.objects);
                    return !satisfied && !cancelled();
                },
                left);
            if (satisfied) {
                result.outcome = WaitOutcome::Satisfied;
                return result;
            }
            if (!cancelled() && !pauseBeforeRewatch(lasted())) {
                result.outcome = WaitOutcome::TimedOut;
                return result;
            }
        } catch (const TransportError& error) {
            if (error.kind() == TransportError::Kind::Cancelled) {
                result.outcome = WaitOutcome::Cancelled;
                return result;
            }
            if (commandOver()) throw;
            if (hasDeadline && clock.monotonic() >= deadline) {
                result.outcome = WaitOutcome::TimedOut;
                return result;
            }
            if (!backOff()) {
                if (cancelled()) continue;
                throw;
            }
        } catch (const ApiError& error) {
            if (error.code() == 410) {
                // Our version was compacted away; start over from a fresh LIST.
                ++result.relists;
                result.resourceVersion.clear();
                needList = true;
                if (!cancelled() && !pauseBeforeRewatch(lasted())) {
                    result.outcome = WaitOutcome::TimedOut;
                    return result;
                }
                continue;
            }
            if (!isOutage(error) || !backOff()) {
                if (cancelled()) continue;
                throw;
            }
        }
    }
}

WaitResult waitForObject(Client& client, const Clock& clock, const ResourceRef& ref,
                         const std::string& ns, const std::string& name, WaitOptions options,
                         const ObjectPredicate& done) {
    options.fieldSelector = "metadata.name=" + name;
    options.onlyName = name;
    return waitForSet(client, clock, ref, ns, options, [&](const ObjectSet& objects) {
        auto found = objects.find(name);
        if (found == objects.end()) return done(std::nullopt);
        return done(found->second);
    });
}

std::optional<json> findCondition(const json& object, const std::string& type) {
    if (!object.contains("status") || !object["status"].is_object()) return std::nullopt;
    const json conditions = object["status"].value("conditions", json::array());
    for (const auto& condition : conditions) {
        if (condition.value("type", "") == type) return condition;
    }
    return std::nullopt;
}

bool conditionTrue(const json& object, const std::string& type) {
    auto condition = findCondition(object, type);
    return condition && condition->value("status", "") == "True";
}

}  // namespace rossoctl::kube
