#pragma once
// Edits of a container's env array (set K=V, remove K-), pure so they are unit-tested:
// what changed is reported, so an edit that changes nothing writes nothing.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/model/validation.hpp"

namespace rossoctl::model {

struct EnvChange {
    std::vector<EnvVar> set;          // in order; a later entry for the same name wins
    std::vector<std::string> remove;  // names
};

struct EnvEditResult {
    std::vector<std::string> added;
    std::vector<std::string> updated;
    std::vector<std::string> removed;
    bool changed() const { return !added.empty() || !updated.empty() || !removed.empty(); }
};

// Parses "K=V" and "K-" arguments (names validated; a name both set and removed is an error).
// Throws UsageError.
EnvChange parseEnvChange(const std::vector<std::string>& arguments,
                         const std::vector<EnvVar>& fromFile = {});

// Applies the change to container["env"]: a set replaces the value (and any valueFrom) of
// every entry of that name, or appends one; a remove drops every entry of that name.
EnvEditResult applyEnvChange(nlohmann::json& container, const EnvChange& change);

// The names of podSpec.containers, in order.
std::vector<std::string> containerNames(const nlohmann::json& podSpec);
// The container to edit: `requested`, else "agent", else the only container. Throws Error
// listing the containers when there is no such container or the choice is ambiguous.
nlohmann::json& selectContainer(nlohmann::json& podSpec, const std::string& requested,
                                const std::string& owner);

// One line per variable for --list: "K=V", "K from secret NAME/KEY", "K from field PATH";
// envFrom sources as "# all keys from secret NAME". Secret values are never resolved.
std::vector<std::string> describeEnv(const nlohmann::json& container);

// "MCP_URL updated, NEW_VAR added, OLD removed"
std::string summarizeEnvEdit(const EnvEditResult& result);

}  // namespace rossoctl::model
