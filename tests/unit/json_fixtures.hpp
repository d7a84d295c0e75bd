#pragma once
// The List and watch-event bodies most unit tests serve, written once so every copy agrees.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rossoctl::testing {

// A List of items (a vector: a braced single json would be copied, not wrapped); `next`, when
// given, is its continue token.
inline nlohmann::json list(const std::vector<nlohmann::json>& items, const std::string& next = "") {
    nlohmann::json metadata = {{"resourceVersion", "10"}};
    if (!next.empty()) metadata["continue"] = next;
    return {{"kind", "List"}, {"metadata", metadata}, {"items", items}};
}

// One line of a watch stream: an event of `type` carrying `object`.
inline std::string watchEvent(const std::string& type, const nlohmann::json& object) {
    return nlohmann::json{{"type", type}, {"object", object}}.dump() + "\n";
}

}  // namespace rossoctl::testing
