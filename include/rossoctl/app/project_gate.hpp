#pragma once
// Which egress gate (model/egress_gate.hpp) a pod rossoctl writes for a Sandbox starts with.
#include <string>

#include "rossoctl/kube/client.hpp"

namespace rossoctl::app {

// Namespace ns's rossoctl.dev/gate-image (project create's --check-image); "" (no gate) when
// the namespace has none or is missing: nothing there denies the API server the gate waits for;
// model::kDefaultGateImage when it may not be read (a project member, most likely).
std::string projectGateImage(kube::Client& client, const std::string& ns);

}  // namespace rossoctl::app
