#pragma once
// The List and watch-event bodies most unit tests serve, written once so every copy agrees.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rossoctl::testing {

// A List of items (a vector: a braced single json would be copied, not wrapped); `next`, when
// given, is its continue token.
// Namespace team1 as `project create` leaves it: labelled a project, its gate image recorded.
inline const std::string kProjectNamespace =
    R"({"metadata":{"name":"team1","labels":{"rossoctl.dev/sandbox-project":"true"},)"
    R"("annotations":{"rossoctl.dev/gate-image":"busybox:1.36"}}})";

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

// A condition as the controller writes it, observed at generation `generation`.
inline nlohmann::json condition(const std::string& type, const std::string& status,
                                int64_t generation = 2) {
    return {{"type", type}, {"status", status}, {"observedGeneration", generation}};
}

// Sandbox "orders" at generation 2 in operatingMode `mode`, its status carrying `conditions`.
inline nlohmann::json ordersSandbox(const std::string& mode,
                                    const std::vector<nlohmann::json>& conditions) {
    nlohmann::json container = {{"name", "agent"}, {"image", "ghcr.io/acme/orders:1.4"}};
    nlohmann::json podTemplate = {{"spec", {{"containers", nlohmann::json::array({container})}}}};
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", "orders"},
              {"namespace", "team1"},
              {"uid", "uid-orders"},
              {"generation", 2},
              {"resourceVersion", "5"},
              {"creationTimestamp", "2023-11-14T22:00:00Z"}}},
            {"spec", {{"operatingMode", mode}, {"podTemplate", podTemplate}}},
            {"status",
             {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
              {"conditions", nlohmann::json(conditions)}}}};
}

// Sandbox "orders", suspended, as rossoctl imported it; and what a command on it advises.
inline nlohmann::json suspendedOrdersSandbox() {
    nlohmann::json sandbox =
        ordersSandbox("Suspended", {condition("Ready", "False"), condition("Suspended", "True")});
    sandbox["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "rossoctl"}};
    return sandbox;
}
inline const std::string kResumeOrdersAdvice =
    "resume it with \"rossoctl sandbox resume orders -n team1\"";

}  // namespace rossoctl::testing
