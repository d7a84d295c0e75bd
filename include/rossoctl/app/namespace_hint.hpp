#pragma once
// A namespace given with -n that does not exist lists as empty, as kubectl shows it; the empty
// answer is then worth one more request to say why, and which namespace was meant.
#include <string>

#include "rossoctl/kube/client.hpp"

namespace rossoctl::app {

// "namespace \"team2\" does not exist; did you mean \"team1\"?" (the nearest name, when one is
// near) when ns is not among the cluster's namespaces; "" when it is, or when they cannot be
// listed. One LIST of namespaces; never throws.
std::string missingNamespaceHint(kube::Client& client, const std::string& ns);

// For a namespace the server said does not exist: "namespace \"team2\" not found; did you
// mean \"team1\"?" when a name is near, else "...; run \"rossoctl project create team2\" first"
// (never the advice to create a misspelled name when the meant one exists). One LIST.
std::string missingNamespaceMessage(kube::Client& client, const std::string& ns);

}  // namespace rossoctl::app
