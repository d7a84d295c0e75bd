#pragma once
// Why a pod's containers cannot start until someone changes its spec (an image that cannot
// be pulled, a configuration error): what waiting for it would only time out on.
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace rossoctl::model {

// "image X cannot be pulled (ErrImagePull): MESSAGE" for the first container (init
// containers included) waiting on its image; nullopt while every image may still come.
std::optional<std::string> podImageFailure(const nlohmann::json& pod);

// A container (init containers included) that has failed again (a non-zero exit) after a
// restart, or that the kubelet holds in CrashLoopBackOff: "container C keeps exiting (exit 3, 3
// restarts)", with the reason when it says more than the code (OOMKilled). nullopt while none does.
std::optional<std::string> podCrashLoop(const nlohmann::json& pod);

// How long a container must have run before a Ready pod counts as up: one that exits at once
// reads Ready for a moment after each start, longer after a crash than after a first start.
inline constexpr std::chrono::seconds kSettle{3};
inline constexpr std::chrono::seconds kSettleAfterCrash{10};

// When every running container of the pod has run for kSettle since it started (kSettleAfterCrash
// when it restarted after a non-zero exit), by the pod's startedAt times; the epoch when no
// container says when it started.
std::chrono::system_clock::time_point podSettledAt(const nlohmann::json& pod);

// podImageFailure, podCrashLoop, or a container stuck in CreateContainerConfigError/
// CreateContainerError ("container C cannot be created (REASON): MESSAGE").
std::optional<std::string> podStartFailure(const nlohmann::json& pod);

// An admission refusal that ends by itself in a namespace made a moment ago: quota admission
// until the quota controller has counted usage ("status unknown for quota"), ServiceAccount
// admission until the "default" ServiceAccount exists. Not a blocker; the controller retries.
bool admissionNotYetReady(const std::string& message);

// A controller that cannot create the pod at all says so in the workload's status: a Sandbox's
// Ready=False ReconcilerError "pods ... is forbidden: exceeded quota" (or a LimitRange's
// maximum), a Deployment's ReplicaFailure=True. The message; nullopt when there is none.
std::optional<std::string> workloadCreateFailure(const nlohmann::json& workload);

// The first Warning event of `events` (a List) that says a pod cannot be created (FailedCreate
// refused as forbidden: quota, LimitRange, pod security) and was last seen at `since` or later:
// "FailedCreate: MESSAGE".
std::optional<std::string> createFailureEvent(const nlohmann::json& events,
                                              std::chrono::system_clock::time_point since);

}  // namespace rossoctl::model
