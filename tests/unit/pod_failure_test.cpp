#include "rossoctl/model/pod_failure.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using nlohmann::json;
using rossoctl::model::podImageFailure;
using rossoctl::model::podStartFailure;

namespace {

json podWaiting(const std::string& key, const std::string& reason, const std::string& message) {
    return {{"status",
             {{key,
               {{{"name", "agent"},
                 {"image", "nosuch:1"},
                 {"state", {{"waiting", {{"reason", reason}, {"message", message}}}}}}}}}}};
}

}  // namespace

TEST_CASE("an image that cannot be pulled is named with the kubelet's reason and message") {
    auto failure = podImageFailure(podWaiting("containerStatuses", "ErrImagePull", "not found"));
    REQUIRE(failure);
    CHECK(*failure == "image nosuch:1 cannot be pulled (ErrImagePull): not found");
    CHECK(podImageFailure(podWaiting("initContainerStatuses", "ImagePullBackOff", "Back-off")));
    CHECK(podImageFailure(podWaiting("containerStatuses", "ErrImageNeverPull", "not present")));
}

TEST_CASE("a pod still creating or crashing has no image failure") {
    CHECK_FALSE(podImageFailure(podWaiting("containerStatuses", "ContainerCreating", "")));
    CHECK_FALSE(podImageFailure(podWaiting("containerStatuses", "CrashLoopBackOff", "back-off")));
    CHECK_FALSE(podImageFailure(json::object()));
    CHECK_FALSE(podStartFailure(json{{"status", {{"phase", "Running"}}}}));
}

TEST_CASE("a configuration error is a start failure but not an image failure") {
    const auto pod = podWaiting("containerStatuses", "CreateContainerConfigError", "runAsNonRoot");
    CHECK_FALSE(podImageFailure(pod));
    auto failure = podStartFailure(pod);
    REQUIRE(failure);
    CHECK(*failure ==
          "container agent cannot be created (CreateContainerConfigError): runAsNonRoot");
}
