#include "rossoctl/model/pod_failure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "rossoctl/kube/timestamp.hpp"

namespace rossoctl::model {

using nlohmann::json;

namespace {

// Waiting reasons of a kubelet for an image it will not get without a change.
constexpr std::array<std::string_view, 4> kImageReasons = {"ErrImagePull", "ImagePullBackOff",
                                                           "InvalidImageName", "ErrImageNeverPull"};
constexpr std::array<std::string_view, 2> kCreateReasons = {"CreateContainerConfigError",
                                                            "CreateContainerError"};

template <std::size_t N>
bool oneOf(const std::string& reason, const std::array<std::string_view, N>& reasons) {
    for (auto known : reasons)
        if (reason == known) return true;
    return false;
}

// Each container status of the pod, init containers first, with its waiting state.
template <typename Visit>
std::optional<std::string> firstWaiting(const json& pod, Visit visit) {
    const json status = pod.value("status", json::object());
    for (const char* key : {"initContainerStatuses", "containerStatuses"}) {
        for (const auto& container : status.value(key, json::array())) {
            const json waiting =
                container.value("state", json::object()).value("waiting", json::object());
            if (auto found =
                    visit(container, waiting.value("reason", ""), waiting.value("message", "")))
                return found;
        }
    }
    return std::nullopt;
}

// A terminated state's exit code; nullopt when the server sent none (or not a number).
std::optional<int> exitCodeOf(const json& terminated) {
    const auto code = terminated.find("exitCode");
    if (code == terminated.end() || !code->is_number_integer()) return std::nullopt;
    return code->get<int>();
}

// A container status's restartCount; 0 when missing or not a number.
int restartsOf(const json& container) {
    const auto count = container.find("restartCount");
    return count != container.end() && count->is_number_integer() ? count->get<int>() : 0;
}

}  // namespace

std::optional<std::string> podImageFailure(const json& pod) {
    return firstWaiting(pod,
                        [](const json& container, const std::string& reason,
                           const std::string& message) -> std::optional<std::string> {
                            if (!oneOf(reason, kImageReasons)) return std::nullopt;
                            return fmt::format("image {} cannot be pulled ({}): {}",
                                               container.value("image", "?"), reason,
                                               message.empty() ? "no message" : message);
                        });
}

std::optional<std::string> podCrashLoop(const json& pod) {
    const json status = pod.value("status", json::object());
    for (const char* key : {"initContainerStatuses", "containerStatuses"}) {
        for (const auto& container : status.value(key, json::array())) {
            if (!container.is_object()) continue;
            const json state = container.value("state", json::object());
            const int restarts = restartsOf(container);
            const bool backingOff =
                state.value("waiting", json::object()).value("reason", "") == "CrashLoopBackOff";
            // Failed again after a restart: the kubelet is about to back off. (An init container
            // that completed again, as after a node restart, is no failure.)
            const bool endedAgain =
                state.contains("terminated") && restarts > 0 &&
                exitCodeOf(state.value("terminated", json::object())).value_or(0) != 0;
            if (!backingOff && !endedAgain) continue;
            const json ended = state.contains("terminated")
                                   ? state.value("terminated", json::object())
                                   : container.value("lastState", json::object())
                                         .value("terminated", json::object());
            std::string how;
            const std::string reason = ended.value("reason", "");
            // "Error" and "Completed" only restate the exit code.
            if (!reason.empty() && reason != "Error" && reason != "Completed") how = reason + ", ";
            if (auto code = exitCodeOf(ended)) how += fmt::format("exit {}, ", *code);
            return fmt::format("container {} keeps exiting ({}{} restart{})",
                               container.value("name", "?"), how, restarts,
                               restarts == 1 ? "" : "s");
        }
    }
    return std::nullopt;
}

std::chrono::system_clock::time_point podSettledAt(const json& pod) {
    std::chrono::system_clock::time_point settled{};
    const json status = pod.value("status", json::object());
    for (const auto& container : status.value("containerStatuses", json::array())) {
        if (!container.is_object()) continue;
        const json running =
            container.value("state", json::object()).value("running", json::object());
        const auto started = kube::parseTimestamp(running.value("startedAt", ""));
        if (!started) continue;
        const json lastEnded =
            container.value("lastState", json::object()).value("terminated", json::object());
        const bool crashedBefore =
            restartsOf(container) > 0 && exitCodeOf(lastEnded).value_or(0) != 0;
        settled = std::max(settled, *started + (crashedBefore ? kSettleAfterCrash : kSettle));
    }
    return settled;
}

std::optional<std::string> podStartFailure(const json& pod) {
    if (auto image = podImageFailure(pod)) return image;
    if (auto crashing = podCrashLoop(pod)) return crashing;
    return firstWaiting(pod,
                        [](const json& container, const std::string& reason,
                           const std::string& message) -> std::optional<std::string> {
                            if (!oneOf(reason, kCreateReasons)) return std::nullopt;
                            return fmt::format("container {} cannot be created ({}): {}",
                                               container.value("name", "?"), reason,
                                               message.empty() ? "no message" : message);
                        });
}

bool admissionNotYetReady(const std::string& message) {
    // Anchored to admission's own words: a webhook's message that merely contains them, or a
    // ServiceAccount the template names that does not exist, is a lasting refusal.
    return message.find(" is forbidden: status unknown for quota: ") != std::string::npos ||
           (message.find(" is forbidden: error looking up service account ") != std::string::npos &&
            message.find(": serviceaccount \"default\" not found") != std::string::npos);
}

namespace {

// A refusal that lasts until the spec, quota or LimitRange changes (not a conflict or outage,
// nor an admission that only waits for a controller of a namespace made a moment ago).
bool forbidden(const std::string& message) {
    return message.find(" is forbidden: ") != std::string::npos && !admissionNotYetReady(message);
}

// A string field, or "" when it is missing or null (events carry null times).
std::string text(const json& object, const char* key) {
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

std::optional<json> condition(const json& object, const std::string& type) {
    const auto status = object.find("status");
    if (status == object.end() || !status->is_object()) return std::nullopt;
    const auto conditions = status->find("conditions");
    if (conditions == status->end() || !conditions->is_array()) return std::nullopt;
    for (const auto& entry : *conditions)
        if (entry.is_object() && text(entry, "type") == type) return entry;
    return std::nullopt;
}

}  // namespace

std::optional<std::string> workloadCreateFailure(const json& workload) {
    if (auto ready = condition(workload, "Ready");
        ready && text(*ready, "status") == "False" && text(*ready, "reason") == "ReconcilerError") {
        std::string message = text(*ready, "message");
        if (message.rfind("Error seen: ", 0) == 0) message.erase(0, 12);
        if (forbidden(message)) return message;
    }
    if (auto failure = condition(workload, "ReplicaFailure");
        failure && text(*failure, "status") == "True")
        return text(*failure, "message").empty() ? "ReplicaFailure" : text(*failure, "message");
    return std::nullopt;
}

std::optional<std::string> createFailureEvent(const json& events,
                                              std::chrono::system_clock::time_point since) {
    const auto items = events.find("items");
    if (items == events.end() || !items->is_array()) return std::nullopt;
    for (const auto& event : *items) {
        if (!event.is_object() || text(event, "type") != "Warning" ||
            text(event, "reason") != "FailedCreate")
            continue;
        const std::string message = text(event, "message");
        if (!forbidden(message)) continue;
        // The newest of the times an event may carry (core/v1 or events.k8s.io writers).
        std::string seen = text(event, "lastTimestamp");
        if (seen.empty() && event.contains("series") && event["series"].is_object())
            seen = text(event["series"], "lastObservedTime");
        if (seen.empty()) seen = text(event, "eventTime");
        const auto when = kube::parseTimestamp(seen);
        if (!when || *when < since) continue;
        return "FailedCreate: " + message;
    }
    return std::nullopt;
}

}  // namespace rossoctl::model
