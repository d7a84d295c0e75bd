#pragma once
// `list -w`, as kubectl get -w: after the list, each change as it happens, until Ctrl-C.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/app/agents.hpp"
#include "rossoctl/clock.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::app {

// Calls `changed` with each object of `list` (a List with metadata.resourceVersion) unless
// `watchOnly`, then with each one added or modified (a new resourceVersion) and with the last
// state of each one deleted, until `cancel`. Outages are ridden out and a compacted version
// starts over from a fresh list (kube::waitForSet); ns "" is every namespace.
void followList(kube::Client& client, const Clock& clock, const kube::ResourceRef& ref,
                const std::string& ns, const std::string& selector, const kube::CancelFlag* cancel,
                nlohmann::json list, bool watchOnly,
                const std::function<void(const nlohmann::json&)>& changed);

// `agents list -w`: the agents of every served kind, sorted, in one call of `changed` (unless
// `watchOnly`), then each change in a call of its own, one watch per kind on a client of its
// own; `changed` is called by one thread at a time. Ends on `cancel` (or rethrows what ended
// one of the watches).
void followAgents(kube::Client& client,
                  const std::function<std::unique_ptr<kube::Client>()>& newClient,
                  const Clock& clock, kube::Discovery& discovery, const std::string& ns,
                  const std::string& selector, const kube::CancelFlag* cancel, bool watchOnly,
                  const std::function<void(const std::vector<Agent>&)>& changed);

}  // namespace rossoctl::app
