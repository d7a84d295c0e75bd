#pragma once
// A pod's effective egress: the union of every NetworkPolicy (and CiliumNetworkPolicy) rule
// that selects it, as sets of addresses and ports, and what of it lies beyond what the project
// allows. Pure set arithmetic; `sandbox verify` turns the result into evidence.
#include <array>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rossoctl::model {

// A range of addresses of one family (IPv4 values fit in the low 32 bits).
struct AddressRange {
    bool v6 = false;
    unsigned __int128 first = 0;
    unsigned __int128 last = 0;
};

class AddressSet {
  public:
    static AddressSet allV4();
    static AddressSet allV6();
    static AddressSet everything();
    // "10.0.0.0/8", "fc00::/7", a bare address; throws Error on anything else.
    static AddressSet parse(const std::string& cidr);
    void add(const AddressSet& other);
    AddressSet minus(const AddressSet& other) const;
    AddressSet intersect(const AddressSet& other) const;
    bool empty() const { return ranges_.empty(); }
    bool contains(const AddressSet& other) const { return other.minus(*this).empty(); }
    const std::vector<AddressRange>& ranges() const { return ranges_; }
    // The fewest CIDRs covering exactly this set, at most `limit` of them ("…" after).
    std::string describe(size_t limit = 4) const;
    std::string firstAddress() const;

  private:
    void normalise();
    std::vector<AddressRange> ranges_;  // sorted by (v6, first), disjoint, not adjacent
};

std::string addressText(bool v6, unsigned __int128 value);

enum class Protocol { TCP = 0, UDP = 1, SCTP = 2 };
std::string protocolName(Protocol protocol);

class PortSet {
  public:
    static PortSet all();  // every port of every protocol
    void add(Protocol protocol, int first, int last);
    void add(const PortSet& other);
    PortSet minus(const PortSet& other) const;
    bool empty() const;
    bool contains(Protocol protocol, int port) const;
    bool contains(const PortSet& other) const { return other.minus(*this).empty(); }
    // "TCP 443", "UDP 1-65535", "TCP 1-442, 444-65535"
    std::string describe() const;
    // The first (protocol, port), preferring `preferred` when it is in the set.
    std::pair<Protocol, int> example(std::optional<std::pair<Protocol, int>> preferred) const;

  private:
    std::array<std::vector<std::pair<int, int>>, 3> ranges_;
};

// A metav1.LabelSelector (matchLabels and matchExpressions) against a label map; null selects
// nothing, an operator not known selects nothing.
bool labelSelectorMatches(const nlohmann::json& selector, const nlohmann::json& labels);
// A NetworkPolicy spec's policyTypes, with the API server's defaulting when it has none.
std::vector<std::string> policyTypes(const nlohmann::json& spec);

// The specs of a CiliumNetworkPolicy (spec and specs) whose endpointSelector selects a pod with
// these labels, with the policy's name ("ciliumnetworkpolicy/x"). A spec without one (not a
// host policy) is listed too: what it selects is not known. mayMatch: also those whose
// selector verify cannot evaluate (Cilium-derived keys, other sources), for a doubt; never for
// what isolates the pod.
std::vector<std::pair<std::string, nlohmann::json>> ciliumSpecsSelecting(
    const nlohmann::json& policy, const nlohmann::json& podLabels, bool mayMatch = false);

// A pod peer: pods matching podSelector in the namespaces namespaceSelector matches (null
// namespaceSelector: the policy's own namespace).
struct PodPeer {
    nlohmann::json namespaceSelector;
    nlohmann::json podSelector;
};

// What one rule (or one peer of it) opens.
struct EgressGrant {
    std::string source;  // "networkpolicy/x rule 1"
    std::string text;    // "0.0.0.0/1 on TCP 443"
    AddressSet addresses;
    std::vector<PodPeer> pods;
    bool everyPod = false;
    std::vector<std::string> hostNames;  // Cilium toFQDNs
    PortSet ports;
    // Named ports (not in `ports` until resolveNamedPorts finds their numbers).
    std::vector<std::pair<Protocol, std::string>> namedPorts;
    std::vector<std::string> notes;  // e.g. what a named port resolved to
};

struct EffectiveEgress {
    bool isolated = false;  // some policy with Egress in policyTypes selects the pod
    std::vector<std::string> isolatingPolicies;
    std::vector<EgressGrant> grants;
    std::vector<std::string> unevaluable;  // what could not be evaluated (never a pass)
};

// networkPolicies / ciliumPolicies: a List's items (ciliumPolicies may be null: not served).
EffectiveEgress effectiveEgress(const nlohmann::json& pod, const nlohmann::json& networkPolicies,
                                const nlohmann::json& ciliumPolicies = nullptr);

// Whether a grant of `egress` selects a pod with these labels in a namespace with these labels
// (every pod, or a pod peer whose selectors match; null namespaceSelector: the policy's own
// namespace, which the caller's pods share).
bool egressGrantsPod(const EffectiveEgress& egress, const nlohmann::json& podLabels,
                     const nlohmann::json& namespaceLabels);

// The pods a peer selects (nullopt: they could not be listed).
using PodsOfPeer = std::function<std::optional<std::vector<nlohmann::json>>(const PodPeer& peer)>;
std::string podPeerKey(const PodPeer& peer);  // the same for the same selectors
// Adds to each grant's ports the numbers its named ports have on the pods its peers select; a
// named port towards addresses, or to pods that could not be listed, is unevaluable.
void resolveNamedPorts(EffectiveEgress& egress, const PodsOfPeer& podsOf);

// What the project allows, from the namespace's kAllowedEgressAnnotation (written by
// `project create`); DNS to kube-dns only when the annotation is absent.
inline constexpr const char* kAllowedEgressAnnotation = "rossoctl.dev/allowed-egress";
struct EgressAllowance {
    std::vector<std::pair<AddressSet, PortSet>> addresses;
    std::vector<std::pair<PodPeer, PortSet>> pods;  // DNS
    std::vector<std::string> hostNames;             // FQDN rules (EgressFirewall, Cilium)
    std::string origin;                             // for evidence
};
// egressFirewall: the namespace's EgressFirewall "default" (null: none or not served); public
// addresses count as allowed for the recorded hosts only when it ends in deny-all and allows
// nothing unrecorded.
EgressAllowance projectAllowance(const nlohmann::json& namespaceObject,
                                 const nlohmann::json& egressFirewall = nullptr);
// The annotation's value for what `project create` writes.
std::string allowedEgressAnnotation(
    bool dns, bool openshiftDns, const std::vector<std::string>& cidrs,
    const std::vector<std::pair<std::string, std::optional<int>>>& hosts,
    const std::vector<std::vector<std::string>>& pinnedAddresses);

// One grant's part beyond the allowance.
struct EgressExcess {
    std::string source;
    std::string text;
    std::vector<std::pair<AddressSet, PortSet>> open;  // addresses with the ports open there
    std::string podsText;                              // pod peers beyond (empty: none)
    std::string example;                               // "8.8.8.8 TCP 443"
};
std::vector<EgressExcess> beyondAllowance(const EffectiveEgress& egress,
                                          const EgressAllowance& allowance,
                                          std::optional<std::pair<Protocol, int>> probedPort);

// Ranges every report calls out by name when they are open.
struct NamedRange {
    std::string name;  // "the cloud metadata address 169.254.169.254"
    AddressSet addresses;
};
AddressSet publicAddresses();
std::vector<NamedRange> calledOutRanges(const std::vector<std::string>& apiServerAddresses,
                                        const std::vector<std::string>& nodeAddresses);

}  // namespace rossoctl::model
