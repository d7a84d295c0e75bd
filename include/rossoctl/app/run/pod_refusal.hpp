#pragma once
// Why the cluster refused or ended a run's pod, said with what to do next: the apiserver's own
// words name the refusal but not the way out (a misspelled namespace or RuntimeClass, a quota
// without room), and a pod that ended before it ran says why only in its status or events.
#include <nlohmann/json.hpp>
#include <string>

#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::app::run {

// The refusal of the run pod's POST, explained: a namespace that does not exist (the nearest
// one, or how to create it), a ResourceQuota without room (what is asked, what is left, what
// to do), a RuntimeClass that does not exist (the nearest one). "" when it is none of these,
// and the server's error stands. At most one LIST, on this failure path only.
std::string explainRunPodRefusal(kube::Client& client, const kube::ApiError& error,
                                 const std::string& ns, const RunPodShape& shape);

// Why a run pod that ended before its command ran did: its container's terminated reason and
// message ("container run: StartError (exit 128): failed to create containerd task: ..."),
// else the pod's newest Warning event ("Failed: Error: ..."); "" when neither says. The text is
// the server's: one line, bounded. One LIST of events when the status says nothing; a refused
// one is skipped.
std::string runPodEndDetail(kube::Client& client, const std::string& ns, const nlohmann::json& pod);

}  // namespace rossoctl::app::run
