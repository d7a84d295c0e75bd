#include "rossoctl/app/list_watch.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

#include "rossoctl/kube/wait.hpp"

namespace rossoctl::app {

using nlohmann::json;

void followList(kube::Client& client, const Clock& clock, const kube::ResourceRef& ref,
                const std::string& ns, const std::string& selector, const kube::CancelFlag* cancel,
                json list, bool watchOnly, const std::function<void(const json&)>& changed) {
    if (!watchOnly)
        for (const auto& object : list.value("items", json::array())) changed(object);
    // The wait's set is the one copy: each change comes as it is applied, never from a scan of
    // the whole set per event (quadratic in the set's size).
    kube::WaitOptions wait;
    wait.labelSelector = selector;
    wait.cancel = cancel;
    wait.initialList = std::move(list);
    wait.keyByNamespace = ns.empty();
    wait.onChange = changed;
    kube::waitForSet(client, clock, ref, ns, wait, [](const kube::ObjectSet&) { return false; });
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
