#pragma once
// Reporting a write that failed part-way: which verb on which resource, and what had been
// written before it, so the user knows what a re-run will finish.
#include <string>
#include <vector>

#include "rossoctl/kube/resource.hpp"

namespace rossoctl::app {

// Rethrows the exception being handled (call inside a catch block), reworded to say which
// request failed and which objects had been written before it; Forbidden names the missing
// permission. ApiErrors stay ApiErrors so the exit code and prefix are kept.
[[noreturn]] void rethrowPartialWrite(const std::string& verb, const kube::ResourceRef& ref,
                                      const std::string& ns, const std::string& name,
                                      const std::vector<std::string>& done,
                                      const std::string& finishHint);

}  // namespace rossoctl::app
