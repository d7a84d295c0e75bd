#pragma once
// What verify reads beyond the pod for issue 35's checks: the Secrets and ConfigMaps a pod can
// read, the pods a named port's peer selects, and policy kinds it does not evaluate. Each read
// that is refused becomes "not known", never "nothing there".
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/kube/client.hpp"
#include "rossoctl/model/egress.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "rossoctl/verify/volume_claims.hpp"

namespace rossoctl::verify {

// A list that may be forbidden or not served: its items, or null with the reason in problems
// (a list the server does not serve adds none).
nlohmann::json optionalList(kube::Client& client, const kube::ResourceRef& ref,
                            const std::string& ns, std::vector<std::string>& problems,
                            const kube::ListOptions& options = {});

// Adds each Secret and ConfigMap pod references that `sources` lacks, as read (or why not).
void readCredentialSources(kube::Client& client, const std::string& ns, const nlohmann::json& pod,
                           std::vector<CredentialSource>& sources);

// Adds, for each claim-backed volume of pod that bindings lacks, its claim and bound
// PersistentVolume as read (or why not).
void readVolumeBindings(kube::Client& client, const std::string& ns, const nlohmann::json& pod,
                        VolumeBindings& bindings);

// The CAs the API server takes client certificates from (the front proxy's too), as the
// server publishes them in kube-system; nullopt when that cannot be read.
std::optional<std::string> readClientAuthorities(kube::Client& client);

// The pods a peer selects (its namespaceSelector null: namespace ns); nullopt when refused.
std::optional<std::vector<nlohmann::json>> podsSelectedBy(kube::Client& client,
                                                          const std::string& ns,
                                                          const model::PodPeer& peer);

struct EgressInputs;
// The cluster's pods as pod sees them from its node (addClusterPods); not listed, or the list
// lacks pod itself, hostListenersUnread says why.
void readHostListeners(kube::Client& client, const nlohmann::json& pod, EgressInputs& egress);

// AdminNetworkPolicy, BaselineAdminNetworkPolicy, Cilium clusterwide, Calico and Antrea
// policies: for each kind that is served and has objects (or cannot be listed), one line of
// what is not evaluated.
std::vector<std::string> unevaluatedPolicyKinds(kube::Client& client, const std::string& ns);

}  // namespace rossoctl::verify
