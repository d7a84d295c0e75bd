#pragma once
// Reading an env file named on the command line (--envVarsFile, --from-env-file), for every
// command that takes one.
#include <string>
#include <vector>

#include "rossoctl/model/validation.hpp"

namespace rossoctl::app {

// The variables of the K=V file at path (model::parseEnvFile's rules); throws UsageError
// naming `flag` when it is a directory, cannot be read or has a bad line.
std::vector<model::EnvVar> readEnvFile(const std::string& path, const std::string& flag);

}  // namespace rossoctl::app
