#include "rossoctl/model/env_edit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "rossoctl/errors.hpp"

namespace rossoctl::model {

using nlohmann::json;

EnvChange parseEnvChange(const std::vector<std::string>& arguments,
                         const std::vector<EnvVar>& fromFile) {
    EnvChange change;
    std::vector<EnvVar> assignments;
    for (const auto& argument : arguments) {
        if (argument.size() > 1 && argument.back() == '-' &&
            argument.find('=') == std::string::npos) {
            std::string name = argument.substr(0, argument.size() - 1);
            validateEnvName(name, "argument \"" + argument + "\"");
            change.remove.push_back(name);
            continue;
        }
        if (argument.find('=') == std::string::npos)
            throw UsageError(fmt::format(
                "argument \"{}\": expected NAME=VALUE to set a variable or NAME- to remove one",
                argument));
        EnvVar assignment = parseEnvAssignment(argument, "argument \"" + argument + "\"");
        validateEnvName(assignment.name, "argument \"" + argument + "\"");
        for (const auto& earlier : assignments)
            if (earlier.name == assignment.name)
                throw UsageError(
                    fmt::format("{} is given twice; give each variable once", assignment.name));
        assignments.push_back(std::move(assignment));
    }
    change.set = mergeEnv(fromFile, assignments);
    for (const auto& name : change.remove) {
        auto same = [&](const EnvVar& var) { return var.name == name; };
        if (std::any_of(change.set.begin(), change.set.end(), same))
            throw UsageError(fmt::format("{} is both set and removed; pick one", name));
    }
    return change;
}

EnvEditResult applyEnvChange(json& container, const EnvChange& change) {
    EnvEditResult result;
    json env =
        container.contains("env") && container["env"].is_array() ? container["env"] : json::array();
    for (const auto& var : change.set) {
        bool found = false;
        bool differs = false;
        for (auto& entry : env) {
            if (entry.value("name", "") != var.name) continue;
            found = true;
            const bool sameValue = entry.contains("value") && entry["value"] == var.value;
            if (sameValue && !entry.contains("valueFrom")) continue;
            differs = true;
            entry.erase("valueFrom");
            entry["value"] = var.value;
        }
        if (!found) {
            env.push_back({{"name", var.name}, {"value", var.value}});
            result.added.push_back(var.name);
        } else if (differs) {
            result.updated.push_back(var.name);
        }
    }
    for (const auto& name : change.remove) {
        const auto before = env.size();
        json kept = json::array();
        for (auto& entry : env) {
            if (entry.value("name", "") != name) kept.push_back(std::move(entry));
        }
        env = std::move(kept);
        if (env.size() != before) result.removed.push_back(name);
    }
    if (!result.changed()) return result;
    if (env.empty())
        container.erase("env");
    else
        container["env"] = std::move(env);
    return result;
}

std::vector<std::string> containerNames(const json& podSpec) {
    std::vector<std::string> names;
    for (const auto& container : podSpec.value("containers", json::array()))
        names.push_back(container.value("name", ""));
    return names;
}

json& selectContainer(json& podSpec, const std::string& requested, const std::string& owner) {
    const auto names = containerNames(podSpec);
    std::string wanted = requested;
    if (wanted.empty()) {
        if (std::find(names.begin(), names.end(), "agent") != names.end())
            wanted = "agent";
        else if (names.size() == 1)
            wanted = names.front();
    }
    const std::string listed = names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
    if (wanted.empty())
        throw Error(fmt::format("{} has {} containers ({}); choose one with -c", owner,
                                names.size(), listed));
    for (auto& container : podSpec["containers"]) {
        if (container.value("name", "") == wanted) return container;
    }
    throw Error(
        fmt::format("{} has no container \"{}\"; its containers: {}", owner, wanted, listed));
}

namespace {

std::string describeSource(const json& valueFrom) {
    if (valueFrom.contains("secretKeyRef")) {
        const auto& ref = valueFrom["secretKeyRef"];
        return fmt::format("secret {}/{}", ref.value("name", ""), ref.value("key", ""));
    }
    if (valueFrom.contains("configMapKeyRef")) {
        const auto& ref = valueFrom["configMapKeyRef"];
        return fmt::format("configmap {}/{}", ref.value("name", ""), ref.value("key", ""));
    }
    if (valueFrom.contains("fieldRef"))
        return "field " + valueFrom["fieldRef"].value("fieldPath", "");
    if (valueFrom.contains("resourceFieldRef")) {
        const auto& ref = valueFrom["resourceFieldRef"];
        std::string text = "resource " + ref.value("resource", "");
        if (ref.contains("containerName")) text += " of " + ref.value("containerName", "");
        return text;
    }
    if (!valueFrom.empty()) return valueFrom.begin().key();
    return "an unknown source";
}

}  // namespace

std::vector<std::string> describeEnv(const json& container) {
    std::vector<std::string> lines;
    for (const auto& source : container.value("envFrom", json::array())) {
        std::string prefix = source.value("prefix", "");
        std::string suffix = prefix.empty() ? "" : fmt::format(" (prefix {})", prefix);
        if (source.contains("secretRef"))
            lines.push_back("# all keys from secret " + source["secretRef"].value("name", "") +
                            suffix);
        else if (source.contains("configMapRef"))
            lines.push_back("# all keys from configmap " +
                            source["configMapRef"].value("name", "") + suffix);
    }
    for (const auto& entry : container.value("env", json::array())) {
        const std::string name = entry.value("name", "");
        if (entry.contains("valueFrom"))
            lines.push_back(name + " from " + describeSource(entry["valueFrom"]));
        else
            lines.push_back(name + "=" + entry.value("value", ""));
    }
    return lines;
}

std::string summarizeEnvEdit(const EnvEditResult& result) {
    std::vector<std::string> parts;
    for (const auto& name : result.updated) parts.push_back(name + " updated");
    for (const auto& name : result.added) parts.push_back(name + " added");
    for (const auto& name : result.removed) parts.push_back(name + " removed");
    return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace rossoctl::model
