#pragma once
// The cluster a request-budget test scripts: a v1beta1 Sandbox "orders"-like object, its pod,
// Lists and watch events, as the TestHost's routed server answers them.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "json_fixtures.hpp"
#include "test_host.hpp"

namespace rossoctl::testing::budget {

using nlohmann::json;
using testing::list;
using testing::watchEvent;

inline const std::string kDiscovery = "GET /apis/agents.x-k8s.io";
inline const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
inline const std::string kPods = "/api/v1/namespaces/team1/pods";

inline json readyCondition() {
    return json::array({{{"type", "Ready"}, {"status", "True"}, {"reason", "Ready"}}});
}

inline json sandboxObject(const std::string& name) {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", name},
              {"namespace", "team1"},
              {"uid", "uid-" + name},
              {"resourceVersion", "5"},
              {"creationTimestamp", "2023-11-14T22:00:00Z"}}},
            {"spec",
             {{"podTemplate",
               {{"spec",
                 {{"containers",
                   {{{"name", "agent"},
                     {"image", "ghcr.io/acme/orders:1.4"},
                     {"env", {{{"name", "LOG_LEVEL"}, {"value", "debug"}}}}}}}}}}}}},
            {"status",
             {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
              {"conditions", readyCondition()}}}};
}

inline json podOf(const std::string& sandbox, const std::string& uid) {
    return {{"metadata",
             {{"name", sandbox},
              {"namespace", "team1"},
              {"uid", uid},
              {"resourceVersion", "7"},
              {"creationTimestamp", "2023-11-14T22:00:05Z"},
              {"labels", {{"agents.x-k8s.io/sandbox-name-hash", "abc"}}},
              {"ownerReferences",
               {{{"kind", "Sandbox"},
                 {"name", sandbox},
                 {"uid", "uid-" + sandbox},
                 {"controller", true}}}}}},
            {"spec", {{"containers", {{{"name", "agent"}}}}}},
            {"status", {{"phase", "Running"}, {"conditions", readyCondition()}}}};
}

inline const std::string kReaperList = "GET " + kPods + "?labelSelector=rossoctl.dev%2Frun%3Dtrue";
inline const std::string kExtensions = "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/team1";
inline const std::string kClaims = kExtensions + "/sandboxclaims";

// Calls `watched` with the count so far at each pod watch, before it is answered (to script
// what the next watches bring).
inline void onPodWatch(TestHost& host, std::function<void(int podWatches)> watched) {
    host.server.onRequest = [watched = std::move(watched),
                             count = 0](const kube::HttpRequest& request) mutable {
        if (request.method == "GET" && request.url.find("/pods?") != std::string::npos &&
            request.url.find("watch=true") != std::string::npos)
            watched(++count);
    };
}

}  // namespace rossoctl::testing::budget
