#include "rossoctl/app/list_watch.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "rossoctl/kube/wait.hpp"

namespace rossoctl::app {

using nlohmann::json;

void followList(kube::Client& client, const Clock& clock, const kube::ResourceRef& ref,
                const std::string& ns, const std::string& selector, const kube::CancelFlag* cancel,
                json list, bool watchOnly, const std::function<void(const json&)>& changed) {
    // Keys as waitForSet makes them: names collide across namespaces.
    auto keyOf = [&](const json& object) {
        const json& meta = object["metadata"];
        const std::string objectNs = meta.value("namespace", "");
        const std::string name = meta.value("name", "");
        return ns.empty() && !objectNs.empty() ? objectNs + "/" + name : name;
    };
    auto version = [](const json& object) {
        return object["metadata"].value("resourceVersion", "");
    };
    std::map<std::string, json> seen;  // key → last object shown
    for (const auto& object : list.value("items", json::array())) {
        seen[keyOf(object)] = object;
        if (!watchOnly) changed(object);
    }
    kube::WaitOptions wait;
    wait.labelSelector = selector;
    wait.cancel = cancel;
    wait.initialList = std::move(list);
    wait.keyByNamespace = ns.empty();
    kube::waitForSet(client, clock, ref, ns, wait, [&](const kube::ObjectSet& objects) {
        for (const auto& [key, object] : objects) {
            auto known = seen.find(key);
            if (known != seen.end() && version(known->second) == version(object)) continue;
            seen[key] = object;
            changed(object);
        }
        for (auto it = seen.begin(); it != seen.end();) {
            if (objects.count(it->first)) {
                ++it;
                continue;
            }
            changed(it->second);  // deleted: its last state, as kubectl -w shows it
            it = seen.erase(it);
        }
        return false;
    });
}

void followAgents(kube::Client& client,
                  const std::function<std::unique_ptr<kube::Client>()>& newClient,
                  const Clock& clock, kube::Discovery& discovery, const std::string& ns,
                  const std::string& selector, const kube::CancelFlag* cancel, bool watchOnly,
                  const std::function<void(const std::vector<Agent>&)>& changed) {
    kube::ListOptions options;
    options.labelSelector = agentSelector(selector);
    std::vector<std::pair<AgentKind, json>> lists;
    std::vector<Agent> agents;
    for (const auto& kind : servedAgentKinds(discovery)) {
        lists.emplace_back(kind, client.list(kind.ref, ns, options));
        for (const auto& item : lists.back().second.value("items", json::array()))
            agents.push_back({kind, item});
    }
    std::stable_sort(agents.begin(), agents.end(), [](const Agent& a, const Agent& b) {
        return std::make_pair(a.namespaceName(), a.name()) <
               std::make_pair(b.namespaceName(), b.name());
    });
    if (!watchOnly && !agents.empty()) changed(agents);

    kube::CancelFlag stop(cancel);  // one watch failing ends the others
    std::mutex mutex;               // guards `changed` and `failure`
    std::exception_ptr failure;
    std::vector<std::unique_ptr<kube::Client>> clients;
    for (size_t i = 0; i < lists.size(); ++i) clients.push_back(newClient());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < lists.size(); ++i) {
        threads.emplace_back([&, i] {
            const AgentKind& kind = lists[i].first;
            try {
                followList(*clients[i], clock, kind.ref, ns, options.labelSelector, &stop,
                           std::move(lists[i].second), true, [&](const json& object) {
                               std::lock_guard lock(mutex);
                               changed({{kind, object}});
                           });
            } catch (...) {
                std::lock_guard lock(mutex);
                if (!failure) failure = std::current_exception();
                stop.cancel();
            }
        });
    }
    for (auto& thread : threads) thread.join();
    if (failure) std::rethrow_exception(failure);
}

}  // namespace rossoctl::app
