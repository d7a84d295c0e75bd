// A pod's effective egress from the policies that select it, and what of it the project did
// not allow. Anything not understood is recorded as unevaluable, never as closed.
#include "rossoctl/model/egress.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rossoctl/errors.hpp"

namespace rossoctl::model {

using nlohmann::json;

namespace {

const json& member(const json& object, const char* key) {
    static const json null;
    if (!object.is_object()) return null;
    auto it = object.find(key);
    return it == object.end() ? null : *it;
}
const json& arrayMember(const json& object, const char* key) {
    static const json empty = json::array();
    const json& value = member(object, key);
    return value.is_array() ? value : empty;
}
std::string stringMember(const json& object, const char* key, const std::string& fallback = "") {
    const json& value = member(object, key);
    return value.is_string() ? value.get<std::string>() : fallback;
}

std::optional<Protocol> parseProtocol(const std::string& text) {
    if (text.empty() || text == "TCP") return Protocol::TCP;
    if (text == "UDP") return Protocol::UDP;
    if (text == "SCTP") return Protocol::SCTP;
    return std::nullopt;
}

bool isPortNumberText(const std::string& text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The ports of a NetworkPolicy rule (or a Cilium toPorts entry): none listed = every port.
// Named ports go to `named` (resolved later against the destination pods), not into the set.
PortSet rulePorts(const json& ports, std::vector<std::string>& notes, bool cilium,
                  std::vector<std::pair<Protocol, std::string>>& named) {
    if (!ports.is_array() || ports.empty()) return PortSet::all();
    PortSet set;
    for (const auto& port : ports) {
        const std::string protocolText = stringMember(port, "protocol");
        std::vector<Protocol> protocols;
        if (cilium && (protocolText == "ANY" || protocolText.empty()))
            protocols = {Protocol::TCP, Protocol::UDP, Protocol::SCTP};
        else if (auto protocol = parseProtocol(protocolText))
            protocols = {*protocol};
        else {
            notes.push_back(
                fmt::format("unknown protocol {:?}: counted as every protocol", protocolText));
            protocols = {Protocol::TCP, Protocol::UDP, Protocol::SCTP};
        }
        const json& number = member(port, "port");
        int first = 1, last = 65535;
        if (number.is_number_integer()) {
            first = last = number.get<int>();
        } else if (number.is_string() && isPortNumberText(number.get<std::string>())) {
            first = last = std::stoi(number.get<std::string>());
        } else if (number.is_string() && number.get<std::string>() != "0") {
            // A named port means the number each destination pod gives that name.
            for (auto protocol : protocols) named.push_back({protocol, number.get<std::string>()});
            continue;
        }
        const json& end = member(port, "endPort");
        if (end.is_number_integer() && first == last) last = end.get<int>();
        if (end.is_string() && isPortNumberText(end.get<std::string>()) && first == last)
            last = std::stoi(end.get<std::string>());
        if (first == 0) first = 1, last = 65535;  // Cilium's "0" is every port
        for (auto protocol : protocols) set.add(protocol, first, last);
    }
    return set;
}

std::string namedPortsText(const EgressGrant& grant) {
    std::string text;
    for (const auto& [protocol, name] : grant.namedPorts)
        text += fmt::format("{}{} named port {:?}", text.empty() ? "" : ", ",
                            protocolName(protocol), name);
    return text;
}

// "TCP 443", "UDP named port \"dns\"", or both.
std::string portsText(const EgressGrant& grant) {
    if (grant.namedPorts.empty()) return grant.ports.describe();
    if (grant.ports.empty()) return namedPortsText(grant);
    return grant.ports.describe() + "; " + namedPortsText(grant);
}

// An ipBlock not understood opens what it says, which is not known: never "nothing".
AddressSet ipBlockSet(const json& block, const std::string& source, EffectiveEgress& out) {
    AddressSet set;
    try {
        set = AddressSet::parse(stringMember(block, "cidr"));
        for (const auto& except : arrayMember(block, "except"))
            if (except.is_string()) set = set.minus(AddressSet::parse(except.get<std::string>()));
    } catch (const Error& error) {
        out.unevaluable.push_back(
            fmt::format("{}: ipBlock {} not understood ({})", source, block.dump(), error.what()));
    }
    return set;
}

std::string selectorText(const json& selector) {
    return selector.is_object() ? selector.dump() : "(own namespace)";
}

void addNetworkPolicy(const json& policy, const json& podLabels, EffectiveEgress& out) {
    const json& spec = member(policy, "spec");
    if (!labelSelectorMatches(member(spec, "podSelector"), podLabels)) return;
    const auto types = policyTypes(spec);
    if (std::find(types.begin(), types.end(), "Egress") == types.end()) return;
    const std::string name =
        "networkpolicy/" + stringMember(member(policy, "metadata"), "name", "?");
    out.isolated = true;
    out.isolatingPolicies.push_back(name);
    int index = 0;
    for (const auto& rule : arrayMember(spec, "egress")) {
        ++index;
        EgressGrant grant;
        grant.source = fmt::format("{} rule {}", name, index);
        grant.ports = rulePorts(member(rule, "ports"), grant.notes, false, grant.namedPorts);
        const json& peers = arrayMember(rule, "to");
        std::vector<std::string> peerTexts;
        if (peers.empty()) {
            grant.addresses = AddressSet::everything();
            grant.everyPod = true;
            peerTexts.push_back("every destination");
        }
        for (const auto& peer : peers) {
            if (member(peer, "ipBlock").is_object()) {
                grant.addresses.add(ipBlockSet(peer["ipBlock"], grant.source, out));
                std::string text = stringMember(peer["ipBlock"], "cidr", "?");
                std::string except;
                for (const auto& cidr : arrayMember(peer["ipBlock"], "except"))
                    except += (except.empty() ? "" : ",") + cidr.get<std::string>();
                peerTexts.push_back(except.empty() ? text : text + " except " + except);
            } else if (member(peer, "podSelector").is_object() ||
                       member(peer, "namespaceSelector").is_object()) {
                PodPeer pods{member(peer, "namespaceSelector"), member(peer, "podSelector")};
                if (!pods.podSelector.is_object()) pods.podSelector = json::object();
                grant.pods.push_back(pods);
                peerTexts.push_back(fmt::format("pods {} in namespaces {}", pods.podSelector.dump(),
                                                selectorText(pods.namespaceSelector)));
            } else {
                out.unevaluable.push_back(grant.source + ": a peer with no known selector");
            }
        }
        std::string to;
        for (const auto& text : peerTexts) to += (to.empty() ? "" : "; ") + text;
        grant.text = to + " on " + portsText(grant);
        out.grants.push_back(std::move(grant));
    }
}

// Cilium's labels carry a source prefix ("k8s:app"); policies may use either spelling.
json withoutSourcePrefix(const json& selector) {
    json out = selector;
    if (!member(selector, "matchLabels").is_object()) return out;
    out["matchLabels"] = json::object();
    for (const auto& [key, value] : selector["matchLabels"].items())
        out["matchLabels"][key.rfind("k8s:", 0) == 0 ? key.substr(4) : key] = value;
    return out;
}

PodPeer ciliumEndpointPeer(const json& selector) {
    json pods = withoutSourcePrefix(selector);
    const char* namespaceKey = "io.kubernetes.pod.namespace";
    PodPeer peer{nullptr, pods};
    if (member(pods, "matchLabels").is_object() && pods["matchLabels"].contains(namespaceKey)) {
        peer.namespaceSelector = {
            {"matchLabels", {{"kubernetes.io/metadata.name", pods["matchLabels"][namespaceKey]}}}};
        peer.podSelector["matchLabels"].erase(namespaceKey);
    }
    return peer;
}

void addCiliumRule(const json& rule, const std::string& source, EffectiveEgress& out) {
    EgressGrant grant;
    grant.source = source;
    PortSet ports;
    bool anyPorts = false;
    for (const auto& entry : arrayMember(rule, "toPorts")) {
        anyPorts = true;
        ports.add(rulePorts(member(entry, "ports"), grant.notes, true, grant.namedPorts));
    }
    grant.ports = anyPorts ? ports : PortSet::all();
    bool anyPeer = false;
    for (const auto& cidr : arrayMember(rule, "toCIDR")) {
        anyPeer = true;
        grant.addresses.add(ipBlockSet({{"cidr", cidr}}, source, out));
    }
    for (const auto& set : arrayMember(rule, "toCIDRSet")) {
        anyPeer = true;
        grant.addresses.add(ipBlockSet(set, source, out));
    }
    for (const auto& selector : arrayMember(rule, "toEndpoints")) {
        anyPeer = true;
        grant.pods.push_back(ciliumEndpointPeer(selector));
    }
    for (const auto& fqdn : arrayMember(rule, "toFQDNs")) {
        anyPeer = true;
        const std::string name = stringMember(fqdn, "matchName");
        grant.hostNames.push_back(name.empty() ? "pattern " + stringMember(fqdn, "matchPattern")
                                               : name);
    }
    for (const auto& entity : arrayMember(rule, "toEntities")) {
        anyPeer = true;
        const std::string text = entity.is_string() ? entity.get<std::string>() : entity.dump();
        if (text == "world" || text == "all") grant.addresses.add(AddressSet::everything());
        if (text == "all" || text == "cluster") grant.everyPod = true;
        if (text != "world" && text != "all" && text != "cluster")
            out.unevaluable.push_back(fmt::format("{} allows entity {:?}", source, text));
    }
    for (const char* unknown : {"toServices", "toGroups", "toRequires", "toNodes"})
        if (member(rule, unknown).is_array()) {
            anyPeer = true;
            out.unevaluable.push_back(fmt::format("{} uses {}", source, unknown));
        }
    if (!anyPeer) {  // only toPorts: every destination on those ports
        grant.addresses = AddressSet::everything();
        grant.everyPod = true;
    }
    grant.text = fmt::format("{} on {}", rule.dump(), portsText(grant));
    if (grant.text.size() > 160) grant.text = grant.text.substr(0, 157) + "...";
    out.grants.push_back(std::move(grant));
}

void addCiliumPolicy(const json& policy, const json& podLabels, EffectiveEgress& out) {
    for (const auto& [name, spec] : ciliumSpecsSelecting(policy, podLabels)) {
        if (!member(spec, "endpointSelector").is_object()) {
            out.unevaluable.push_back(name + " has no endpointSelector");
            continue;
        }
        // Deny-only policies do not isolate the endpoint, so they never count as closing it.
        if (!member(spec, "egress").is_array()) continue;
        out.isolated = true;
        out.isolatingPolicies.push_back(name);
        int index = 0;
        for (const auto& rule : arrayMember(spec, "egress"))
            addCiliumRule(rule, fmt::format("{} egress rule {}", name, ++index), out);
    }
}

}  // namespace

namespace {

// Whether a Cilium endpointSelector might select a pod with these labels: its keys' source
// prefixes (k8s:, any:) dropped in matchLabels and matchExpressions alike; a key Cilium derives
// (io.cilium.*, io.kubernetes.*) or of another source is not known here, so it might.
bool ciliumMaySelect(const json& selector, const json& podLabels) {
    json plain = selector;
    auto unprefixed = [](std::string key) {
        for (const char* prefix : {"k8s:", "any:"})
            if (key.rfind(prefix, 0) == 0) key = key.substr(std::string(prefix).size());
        return key;
    };
    auto unknown = [](const std::string& key) {
        return key.find(':') != std::string::npos || key.rfind("io.cilium.", 0) == 0 ||
               key.rfind("io.kubernetes.", 0) == 0;
    };
    if (member(selector, "matchLabels").is_object()) {
        plain["matchLabels"] = json::object();
        for (const auto& [key, value] : selector["matchLabels"].items()) {
            if (unknown(unprefixed(key))) return true;
            plain["matchLabels"][unprefixed(key)] = value;
        }
    }
    if (member(selector, "matchExpressions").is_array()) {
        plain["matchExpressions"] = json::array();
        for (auto expression : selector["matchExpressions"]) {
            const std::string key = unprefixed(stringMember(expression, "key"));
            if (unknown(key)) return true;
            if (expression.is_object()) expression["key"] = key;
            plain["matchExpressions"].push_back(std::move(expression));
        }
    }
    return labelSelectorMatches(plain, podLabels);
}

}  // namespace

std::vector<std::pair<std::string, json>> ciliumSpecsSelecting(const json& policy,
                                                               const json& podLabels,
                                                               bool mayMatch) {
    const std::string name =
        "ciliumnetworkpolicy/" + stringMember(member(policy, "metadata"), "name", "?");
    std::vector<json> specs;
    if (member(policy, "spec").is_object()) specs.push_back(policy["spec"]);
    for (const auto& spec : arrayMember(policy, "specs")) specs.push_back(spec);
    std::vector<std::pair<std::string, json>> out;
    for (auto& spec : specs) {
        const json& selector = member(spec, "endpointSelector");
        if (!selector.is_object() && member(spec, "nodeSelector").is_object()) continue;  // host
        if (selector.is_object() &&
            !(mayMatch ? ciliumMaySelect(selector, podLabels)
                       : labelSelectorMatches(withoutSourcePrefix(selector), podLabels)))
            continue;
        out.emplace_back(name, std::move(spec));
    }
    return out;
}

std::vector<std::string> policyTypes(const json& spec) {
    std::vector<std::string> types;
    if (member(spec, "policyTypes").is_array()) {
        for (const auto& type : spec["policyTypes"])
            if (type.is_string()) types.push_back(type.get<std::string>());
        return types;
    }
    // The API server's defaulting: Ingress always, Egress when egress rules exist.
    types.push_back("Ingress");
    if (!arrayMember(spec, "egress").empty()) types.push_back("Egress");
    return types;
}

bool labelSelectorMatches(const json& selector, const json& labels) {
    if (!selector.is_object()) return false;
    auto labelValue = [&](const std::string& key) -> std::optional<std::string> {
        const json& value = member(labels, key.c_str());
        if (!value.is_string()) return std::nullopt;
        return value.get<std::string>();
    };
    if (member(selector, "matchLabels").is_object())
        for (const auto& [key, value] : selector["matchLabels"].items())
            if (!value.is_string() || labelValue(key) != value.get<std::string>()) return false;
    for (const auto& expression : arrayMember(selector, "matchExpressions")) {
        const auto actual = labelValue(stringMember(expression, "key"));
        const std::string op = stringMember(expression, "operator");
        const json& values = arrayMember(expression, "values");
        const bool listed =
            actual && std::find(values.begin(), values.end(), json(*actual)) != values.end();
        if ((op == "In" && !listed) || (op == "NotIn" && listed) || (op == "Exists" && !actual) ||
            (op == "DoesNotExist" && actual))
            return false;
        if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist") return false;
    }
    return true;
}

EffectiveEgress effectiveEgress(const json& pod, const json& networkPolicies,
                                const json& ciliumPolicies) {
    EffectiveEgress out;
    const json& labels = member(member(pod, "metadata"), "labels");
    if (networkPolicies.is_array())
        for (const auto& policy : networkPolicies) addNetworkPolicy(policy, labels, out);
    if (ciliumPolicies.is_array())
        for (const auto& policy : ciliumPolicies) addCiliumPolicy(policy, labels, out);
    if (!out.isolated) {
        // Nothing isolates egress: every destination is open. The source reads as the subject
        // of the evidence ("... allows every destination on every port").
        EgressGrant grant;
        grant.source = "Kubernetes' default (no policy limits this pod's egress)";
        grant.text = "every destination on every port";
        grant.addresses = AddressSet::everything();
        grant.everyPod = true;
        grant.ports = PortSet::all();
        out.grants.push_back(std::move(grant));
    }
    return out;
}

std::string podPeerKey(const PodPeer& peer) {
    return peer.namespaceSelector.dump() + " " + peer.podSelector.dump();
}

void resolveNamedPorts(EffectiveEgress& egress, const PodsOfPeer& podsOf) {
    for (auto& grant : egress.grants) {
        if (grant.namedPorts.empty()) continue;
        const std::string names = namedPortsText(grant);
        if (!grant.addresses.empty() || grant.everyPod || !grant.hostNames.empty()) {
            egress.unevaluable.push_back(fmt::format(
                "{}: {} towards addresses or every pod: which numbers carry it is not known",
                grant.source, names));
            continue;
        }
        for (const auto& peer : grant.pods) {
            const auto pods = podsOf(peer);
            if (!pods) {
                egress.unevaluable.push_back(
                    fmt::format("{}: {}: the pods {} selects could not be listed to resolve it",
                                grant.source, names, podPeerKey(peer)));
                continue;
            }
            PortSet resolved;
            for (const auto& pod : *pods)
                for (const char* kind : {"initContainers", "containers"})
                    for (const auto& container : arrayMember(member(pod, "spec"), kind))
                        for (const auto& port : arrayMember(container, "ports")) {
                            const auto protocol =
                                parseProtocol(stringMember(port, "protocol", "TCP"));
                            const json& number = member(port, "containerPort");
                            if (!protocol || !number.is_number_integer()) continue;
                            for (const auto& [wanted, name] : grant.namedPorts)
                                if (wanted == *protocol && stringMember(port, "name") == name)
                                    resolved.add(*protocol, number.get<int>(), number.get<int>());
                        }
            grant.ports.add(resolved);
            grant.notes.push_back(fmt::format("{} resolved on the {} pods {} selects: {}", names,
                                              pods->size(), podPeerKey(peer), resolved.describe()));
        }
    }
}

bool egressGrantsPod(const EffectiveEgress& egress, const json& podLabels,
                     const json& namespaceLabels) {
    for (const auto& grant : egress.grants) {
        if (grant.everyPod) return true;
        for (const auto& peer : grant.pods)
            if ((peer.namespaceSelector.is_null() ||
                 labelSelectorMatches(peer.namespaceSelector, namespaceLabels)) &&
                labelSelectorMatches(peer.podSelector, podLabels))
                return true;
    }
    return false;
}

}  // namespace rossoctl::model
