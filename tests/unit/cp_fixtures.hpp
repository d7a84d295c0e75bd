#pragma once
// The sandbox "orders" in team1 with one running pod (container "agent"), as the sandbox cp
// tests serve it.
#include <nlohmann/json.hpp>
#include <string>

#include "test_host.hpp"

namespace rossoctl::testing {

inline const std::string kCpSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
inline const std::string kCpPods = "/api/v1/namespaces/team1/pods";

inline nlohmann::json cpSandboxObject() {
    return {{"metadata", {{"name", "orders"}, {"namespace", "team1"}, {"uid", "uid-orders"}}},
            {"spec", nlohmann::json::object()},
            {"status", {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"}}}};
}

inline nlohmann::json cpPodList() {
    nlohmann::json pod = {
        {"metadata",
         {{"name", "orders"},
          {"namespace", "team1"},
          {"uid", "pod-uid"},
          {"creationTimestamp", "2023-11-14T22:00:05Z"},
          {"ownerReferences",
           {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}}},
        {"spec", {{"containers", {{{"name", "agent"}}}}}},
        {"status", {{"phase", "Running"}}}};
    return {{"kind", "List"}, {"metadata", {{"resourceVersion", "10"}}}, {"items", {pod}}};
}

inline void serveCpOrders(TestHost& host) {
    host.serveSandboxGroup();
    host.server.onJson("GET", kCpSandboxes + "/orders", 200, cpSandboxObject());
    host.server.onJson("GET", kCpPods, 200, cpPodList());
}

}  // namespace rossoctl::testing
