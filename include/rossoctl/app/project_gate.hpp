#pragma once
// Which egress gate (model/egress_gate.hpp) a pod rossoctl writes for a Sandbox starts with.
#include <string>

#include "rossoctl/kube/client.hpp"

namespace rossoctl::app {

struct ProjectGate {
    std::string image;    // "": no gate
    std::string whyNone;  // when there is none though the namespace exists: what to do about it
};

// Namespace ns's rossoctl.dev/gate-image (project create's --check-image); none when the
// namespace has none or is missing: nothing there denies the API server the gate waits for;
// model::kDefaultGateImage when it may not be read (a project member, most likely).
ProjectGate projectGate(kube::Client& client, const std::string& ns);
inline std::string projectGateImage(kube::Client& client, const std::string& ns) {
    return projectGate(client, ns).image;
}

}  // namespace rossoctl::app
