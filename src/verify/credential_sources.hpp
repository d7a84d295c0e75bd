#pragma once
// What the pod holds beyond what verify reads: Secrets and ConfigMaps gone or rewritten since
// its containers started, and volumes whose content no Secret shows (CSI, podCertificate,
// hostPath, claims and network filesystems). Each is unproven, never passed; a bootstrap-token
// Secret fails.
#include <vector>

#include "rossoctl/verify/pod_checks.hpp"
#include "rossoctl/verify/volume_claims.hpp"

namespace rossoctl::verify {

void judgeSources(const nlohmann::json& pod, const std::vector<CredentialSource>& sources,
                  const VolumeBindings& volumes, Finding& finding);

}  // namespace rossoctl::verify
