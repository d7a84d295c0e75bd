#pragma once
// What the two directions of sandbox cp share (not a public header).
#include <string>
#include <vector>

#include "rossoctl/app/copy.hpp"
#include "rossoctl/kube/exec.hpp"

namespace rossoctl::app::copy {

kube::ExecRequest execRequest(const PodTarget& target, std::vector<std::string> command);
// sh -c SCRIPT sh ARGS...: values travel as positional parameters, never parsed as shell text.
std::vector<std::string> shCommand(const std::string& script, std::vector<std::string> args);
// Throws Error naming `what` when the command did not exit 0 (its stderr, escaped, cut short).
void checkExit(const kube::ExecResult& result, const std::string& stderrText,
               const std::string& what);

}  // namespace rossoctl::app::copy
