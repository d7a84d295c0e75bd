#pragma once
// A pod's STATUS as `kubectl get pods` prints it: the phase, unless a container tells more
// (ImagePullBackOff, CrashLoopBackOff, OOMKilled, Init:1/2, Terminating).
#include <nlohmann/json.hpp>
#include <string>

namespace rossoctl::model {

// kubectl's STATUS column for `pod`: its phase or status.reason, then the first init container
// not done ("Init:ErrImagePull", "Init:0/1"), else the last app container waiting or terminated
// with a reason ("ImagePullBackOff", "OOMKilled", "ExitCode:3"), "Terminating" once deleted.
std::string podStatusText(const nlohmann::json& pod);

}  // namespace rossoctl::model
