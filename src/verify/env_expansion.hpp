#pragma once
// What a container's environment and command line hold once the kubelet has expanded their
// $(VAR) references: a token split over two env values is whole in the running process.
#include <string>
#include <vector>

#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

// The expanded values of `container` (env values and command/args that reference others),
// each named after `where` (e.g. "container agent"); values without a reference are left out.
std::vector<ReadableValue> expandedValues(const nlohmann::json& container, const std::string& where,
                                          const std::vector<CredentialSource>& sources);

}  // namespace rossoctl::verify
