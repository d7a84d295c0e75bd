#include "rossoctl/kube/wait.hpp"

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

// A watch that outlives its server-side timeout by this much is a dead connection.
constexpr std::chrono::seconds kWatchGrace{30};

}  // namespace

WaitResult waitForSet(Client& client, const Clock& clock, const ResourceRef& ref,
                      const std::string& ns, const WaitOptions& options, const SetPredicate& done) {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    WaitResult result;
    const bool hasDeadline = options.timeout.count() > 0;
    const auto deadline = clock.monotonic() + options.timeout;
    auto cancelled = [&] { return options.cancel && options.cancel->cancelled(); };

    std::optional<json> given = options.initialList;
    std::string version;
    bool needList = true;
    try {
        while (true) {
            if (cancelled()) {
                result.outcome = WaitOutcome::Cancelled;
                return result;
            }
            if (needList) {
                ListOptions listOptions;
                listOptions.labelSelector = options.labelSelector;
                listOptions.fieldSelector = options.fieldSelector;
                json list = given ? std::move(*given) : client.list(ref, ns, listOptions);
                given.reset();
                result.objects.clear();
                for (const auto& item : list.value("items", json::array()))
                    result.objects[nameOf(item)] = item;
                version = resourceVersionOf(list);
                needList = false;
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
            try {
                client.watch(
                    ref, ns, watchOptions,
                    [&](const WatchEvent& event) {
                        const std::string eventVersion = resourceVersionOf(event.object);
                        if (!eventVersion.empty()) version = eventVersion;
                        if (event.type == "BOOKMARK") return !cancelled();
                        if (event.type == "DELETED")
                            result.objects.erase(nameOf(event.object));
                        else
                            result.objects[nameOf(event.object)] = event.object;
                        satisfied = done(result.objects);
                        return !satisfied && !cancelled();
                    },
                    left);
            } catch (const ApiError& error) {
                // 410 Gone: our version was compacted away; start over from a fresh LIST.
                if (error.code() != 410) throw;
                ++result.relists;
                needList = true;
                continue;
            }
            if (satisfied) {
                result.outcome = WaitOutcome::Satisfied;
                return result;
            }
        }
    } catch (const TransportError& error) {
        if (error.kind() != TransportError::Kind::Cancelled) throw;
        result.outcome = WaitOutcome::Cancelled;
        return result;
    }
}

WaitResult waitForObject(Client& client, const Clock& clock, const ResourceRef& ref,
                         const std::string& ns, const std::string& name, WaitOptions options,
                         const ObjectPredicate& done) {
    options.fieldSelector = "metadata.name=" + name;
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
