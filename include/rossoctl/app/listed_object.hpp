#pragma once
// What a command may do by name with an object a LIST returned: a server picks the names and
// namespaces in its answer, and an empty name once made DELETE .../pods (deletecollection).
#include <nlohmann/json.hpp>
#include <string>

namespace rossoctl::app {

// Why `object`, listed in listedNs ("" = every namespace), cannot be acted on by name: its
// metadata.name is empty or no valid path segment, or its metadata.namespace is neither empty
// nor listedNs (with "", it must itself be valid). "" when it can.
std::string unusableListedObject(const nlohmann::json& object, const std::string& listedNs);

// The namespace to act on it in: listedNs, or the object's own for a list over every namespace.
std::string actingNamespace(const nlohmann::json& object, const std::string& listedNs);

// metadata.name, or "" when missing or not a string.
std::string listedName(const nlohmann::json& object);

}  // namespace rossoctl::app
