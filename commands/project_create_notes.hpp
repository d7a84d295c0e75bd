#pragma once
// What project create says beside its objects: a re-run that changed the egress policy, the
// quota or the limits; a cluster DNS that recurses; and the command line to run again.
#include <string>
#include <vector>

#include "rossoctl/app/context.hpp"

namespace rossoctl::commands {

// A re-run writes exactly this run's --allow-host/--allow-cidr: an earlier run's are not kept.
void warnEgressChanged(app::Context& context, const std::string& project,
                       const std::vector<std::string>& hosts, const std::vector<std::string>& cidrs,
                       bool noDns);

// The same for the quota and the limits: `changes` as "--memory 4Gi → 8Gi".
void warnLimitsChanged(app::Context& context, const std::string& project,
                       const std::vector<std::string>& changes);

// Allowed DNS is a channel out when kube-dns recurses: say so, and what closes it, once.
void warnClusterDnsRecursion(app::Context& context, const std::string& project);

// "rossoctl ARG…" with each word quoted for a POSIX shell where it needs it.
std::string shellCommandLine(const std::vector<std::string>& arguments);

}  // namespace rossoctl::commands
