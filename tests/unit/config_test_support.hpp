#pragma once
// Shared helpers for the kubeconfig and auth tests: an injected environment and error text.
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "rossoctl/kube/config.hpp"
#include "temp_dir.hpp"

namespace rossoctl::testing {

// An Environment with only the given variables and a home with no ~/.kube/config.
inline kube::Environment fakeEnvironment(const TempDir& dir,
                                         std::map<std::string, std::string> vars = {}) {
    kube::Environment env;
    env.getenv = [vars](const std::string& name) -> std::optional<std::string> {
        auto found = vars.find(name);
        if (found == vars.end()) return std::nullopt;
        return found->second;
    };
    env.home = dir.file("home");
    env.inClusterDir = dir.file("no-serviceaccount");
    return env;
}

// The message of what action throws, or "(no error)".
inline std::string errorOf(const std::function<void()>& action) {
    try {
        action();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace rossoctl::testing
