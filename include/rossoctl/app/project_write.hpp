#pragma once
// Writing a project plan (`project create`): refuse a namespace rossoctl did not make, apply
// each object with server-side apply (riding out an API outage), prune what an earlier run
// wrote and this one no longer wants, and wait briefly for the quota controller.
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/app/context.hpp"
#include "rossoctl/model/project.hpp"

namespace rossoctl::app {

// On a namespace `project create --adopt` made a project: it existed before rossoctl, so
// `project delete` removes only rossoctl's objects and labels from it, never the namespace.
inline constexpr const char* kAdoptedAnnotation = "rossoctl.dev/adopted";
bool isAdoptedProject(const nlohmann::json& namespaceObject);

struct ProjectWriteOptions {
    bool serverDryRun = false;  // dryRun=All: the apiserver checks, stores nothing
    bool adopt = false;         // accept an existing namespace without the project label
    // How long to wait for the quota controller to count usage (pods are refused until then).
    std::chrono::milliseconds quotaTimeout{std::chrono::seconds(15)};
};

struct ProjectWriteResult {
    nlohmann::json objects = nlohmann::json::array();  // as the apiserver returned them
    std::vector<std::string> lines;                    // "namespace/team1 created", in write order
    // Server dry run into a namespace not there yet: only the namespace was checked.
    bool onlyNamespaceChecked = false;
    bool egressChanged = false;  // a re-run changed an existing project's egress policy
    // What a re-run changed in the quota and limits, by flag: "--memory 4Gi → 8Gi".
    std::vector<std::string> limitChanges;
    bool quotaCounted = true;  // false: the quota controller did not count usage in time
    std::chrono::milliseconds quotaWaited{0};  // how long that wait took
};

// Throws Error for a namespace being deleted or not a project (without adopt), and an error
// naming what was written before it when a request fails.
ProjectWriteResult writeProject(Context& context, const model::ProjectPlan& plan,
                                const std::string& project, const ProjectWriteOptions& options);

}  // namespace rossoctl::app
