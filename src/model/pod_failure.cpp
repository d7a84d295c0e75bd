#include "rossoctl/model/pod_failure.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

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

std::optional<std::string> podStartFailure(const json& pod) {
    if (auto image = podImageFailure(pod)) return image;
    return firstWaiting(pod,
                        [](const json& container, const std::string& reason,
                           const std::string& message) -> std::optional<std::string> {
                            if (!oneOf(reason, kCreateReasons)) return std::nullopt;
                            return fmt::format("container {} cannot be created ({}): {}",
                                               container.value("name", "?"), reason,
                                               message.empty() ? "no message" : message);
                        });
}

}  // namespace rossoctl::model
