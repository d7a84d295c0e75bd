#pragma once
// Why a pod's containers cannot start until someone changes its spec (an image that cannot
// be pulled, a configuration error): what waiting for it would only time out on.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace rossoctl::model {

// "image X cannot be pulled (ErrImagePull): MESSAGE" for the first container (init
// containers included) waiting on its image; nullopt while every image may still come.
std::optional<std::string> podImageFailure(const nlohmann::json& pod);

// podImageFailure, or a container stuck in CreateContainerConfigError/CreateContainerError
// ("container C cannot be created (REASON): MESSAGE").
std::optional<std::string> podStartFailure(const nlohmann::json& pod);

}  // namespace rossoctl::model
