#pragma once
// Writing what `agents import` planned: the lifetime a sandbox or job gets by default, the
// refusals made before anything is created (an agent of that name, a LimitRange the pod would
// break), then each object created in order, never overwritten.
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/app/agent_import.hpp"
#include "rossoctl/app/context.hpp"

namespace rossoctl::app {

// The lifetime when --lifetime is not given and the namespace carries no valid annotation.
inline constexpr std::chrono::hours kFallbackLifetime{24};

// Namespace ns's rossoctl.dev/default-lifetime, else kFallbackLifetime (also when the
// namespace may not be read); throws Error when the annotation is no lifetime, and when the
// namespace is missing unless `mayNotExist` (a client dry run, which needs no namespace: it
// then gets kFallbackLifetime and a note on the context's stderr).
std::chrono::seconds defaultLifetime(Context& context, const std::string& ns,
                                     bool mayNotExist = false);

// Throws Error for an existing agent and UsageError for cpu/memory a LimitRange refuses, both
// before writing anything; then creates `planned` in order (dryRun=All with serverDryRun) and
// returns the objects as the apiserver returned them. A create failing after the first names
// what exists and how to remove it.
std::vector<nlohmann::json> importAgent(Context& context, const ImportRequest& request,
                                        const std::vector<PlannedObject>& planned,
                                        bool serverDryRun);

}  // namespace rossoctl::app
