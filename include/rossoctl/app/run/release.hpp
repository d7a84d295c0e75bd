#pragma once
// The claim of a warm run whose command has ended, deleted without holding up the exit
// (issue 31): a child process of its own sends the DELETE while this one exits.
#include <string>

#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/clock.hpp"

namespace rossoctl::app::run {

// Call with every thread but the caller's ended and stdout and stderr flushed: the child
// starts from a copy of this process. It leaves the terminal and the caller's pipes at once
// (a `$(rossoctl ...)` returns when this process exits), deletes the claim (riding out a short
// API outage) and exits. Should it die first, the claim's own shutdownTime (--timeout plus a
// margin, shutdownPolicy Delete) removes the claim, its Sandbox and pod. Returns false when no
// child could be started: the caller then deletes the claim itself.
bool releaseClaimAfterExit(const ClientFactory& cleanupClient, const Clock& clock,
                           const std::string& ns, const std::string& claim);

}  // namespace rossoctl::app::run
