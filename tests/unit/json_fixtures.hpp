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

// Sandbox `name` in team1 with no spec and a Ready condition of `reason` (True only when it is
// "Ready"): what a list's STATUS and REASON columns print.
inline nlohmann::json sandboxWithReason(const std::string& name, const std::string& version = "5",
                                        const std::string& reason = "Ready") {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", name},
              {"namespace", "team1"},
              {"uid", "uid-" + name},
              {"resourceVersion", version},
              {"creationTimestamp", "2023-11-14T22:00:00Z"}}},
            {"spec", nlohmann::json::object()},
            {"status",
             {{"conditions",
               {{{"type", "Ready"},
                 {"status", reason == "Ready" ? "True" : "False"},
                 {"reason", reason}}}}}}};
}

}  // namespace rossoctl::testing
