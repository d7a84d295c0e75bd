#pragma once
// What the pod holds beyond what verify reads: Secrets and ConfigMaps gone or rewritten since
// its containers started, and volumes whose content no Secret shows (CSI, podCertificate,
// hostPath). Each is unproven, never passed; a bootstrap-token Secret fails.
#include <vector>

#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

void judgeSources(const nlohmann::json& pod, const std::vector<CredentialSource>& sources,
                  Finding& finding);

}  // namespace rossoctl::verify
