#include "rossoctl/model/pod_status.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rossoctl::model {

using nlohmann::json;

namespace {

json objectAt(const json& object, const char* key) {
    if (!object.is_object()) return json::object();
    const auto found = object.find(key);
    return found != object.end() && found->is_object() ? *found : json::object();
}

json arrayAt(const json& object, const char* key) {
    if (!object.is_object()) return json::array();
    const auto found = object.find(key);
    return found != object.end() && found->is_array() ? *found : json::array();
}

std::string textAt(const json& object, const char* key) {
    if (!object.is_object()) return "";
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

long numberAt(const json& object, const char* key) {
    const auto found = object.find(key);
    return found != object.end() && found->is_number_integer() ? found->get<long>() : 0;
}

// "Signal:9" or "ExitCode:3" for a container that ended without a reason.
std::string endedWithout(const json& terminated) {
    const long signal = numberAt(terminated, "signal");
    if (signal != 0) return fmt::format("Signal:{}", signal);
    return fmt::format("ExitCode:{}", numberAt(terminated, "exitCode"));
}

}  // namespace

std::string podStatusText(const json& pod) {
    const json status = objectAt(pod, "status");
    std::string reason = textAt(status, "phase");
    if (!textAt(status, "reason").empty()) reason = textAt(status, "reason");
    if (reason.empty()) reason = "Pending";

    const json initStatuses = arrayAt(status, "initContainerStatuses");
    const size_t initCount = arrayAt(objectAt(pod, "spec"), "initContainers").size();
    bool initializing = false;
    for (size_t i = 0; i < initStatuses.size(); ++i) {
        const json state = objectAt(initStatuses[i], "state");
        const json terminated = objectAt(state, "terminated");
        const std::string waiting = textAt(objectAt(state, "waiting"), "reason");
        if (state.contains("terminated") && numberAt(terminated, "exitCode") == 0) continue;
        initializing = true;
        if (state.contains("terminated"))
            reason =
                "Init:" + (textAt(terminated, "reason").empty() ? endedWithout(terminated)
                                                                : textAt(terminated, "reason"));
        else if (!waiting.empty() && waiting != "PodInitializing")
            reason = "Init:" + waiting;
        else
            reason = fmt::format("Init:{}/{}", i, std::max(initCount, initStatuses.size()));
        break;
    }
    if (!initializing) {
        bool running = false;
        const json statuses = arrayAt(status, "containerStatuses");
        for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
            const json state = objectAt(*it, "state");
            const json terminated = objectAt(state, "terminated");
            const std::string waiting = textAt(objectAt(state, "waiting"), "reason");
            if (!waiting.empty())
                reason = waiting;
            else if (state.contains("terminated"))
                reason = textAt(terminated, "reason").empty() ? endedWithout(terminated)
                                                              : textAt(terminated, "reason");
            else if (state.contains("running") && it->value("ready", false))
                running = true;
        }
        if (reason == "Completed" && running) reason = "Running";
    }
    const json metadata = objectAt(pod, "metadata");
    if (metadata.contains("deletionTimestamp") && !metadata["deletionTimestamp"].is_null())
        reason = textAt(status, "reason") == "NodeLost" ? "Unknown" : "Terminating";
    return reason;
}

}  // namespace rossoctl::model
