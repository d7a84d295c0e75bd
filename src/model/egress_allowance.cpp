// What a project allows (recorded by `project create` on its namespace) and what of a pod's
// effective egress lies beyond it.
#include <fmt/format.h>

#include <algorithm>

#include "rossoctl/errors.hpp"
#include "rossoctl/kube/json_depth.hpp"
#include "rossoctl/model/egress.hpp"

namespace rossoctl::model {

using nlohmann::json;

namespace {

PodPeer dnsPeer(const std::string& ns, const std::string& key, const std::string& value) {
    return {json{{"matchLabels", {{"kubernetes.io/metadata.name", ns}}}},
            json{{"matchLabels", {{key, value}}}}};
}

PortSet dnsPorts(int port) {
    PortSet ports;
    ports.add(Protocol::UDP, port, port);
    ports.add(Protocol::TCP, port, port);
    return ports;
}

PortSet portsOf(const json& port) {
    if (!port.is_number_integer()) return PortSet::all();
    PortSet ports;
    ports.add(Protocol::TCP, port.get<int>(), port.get<int>());
    return ports;
}

// The firewall `project create` writes: Allow rules for recorded hosts and CIDRs only, then
// deny everything. Anything else and the firewall does not close the public internet.
bool firewallClosesTheRest(const json& firewall, const std::vector<std::string>& hosts,
                           const std::vector<std::string>& cidrs) {
    if (!firewall.is_object()) return false;
    bool deniedV4 = false, deniedV6 = false;
    for (const auto& rule : firewall.value("spec", json::object()).value("egress", json::array())) {
        if (!rule.is_object()) return false;
        const std::string type = rule.value("type", "");
        const json to = rule.value("to", json::object());
        const std::string dnsName = to.value("dnsName", "");
        const std::string cidr = to.value("cidrSelector", "");
        if (type == "Deny") {
            deniedV4 = deniedV4 || (cidr == "0.0.0.0/0" && !rule.contains("ports"));
            deniedV6 = deniedV6 || (cidr == "::/0" && !rule.contains("ports"));
            continue;
        }
        if (deniedV4 && deniedV6) continue;  // after deny-all nothing matches
        const bool recorded =
            (!dnsName.empty() && std::find(hosts.begin(), hosts.end(), dnsName) != hosts.end()) ||
            (!cidr.empty() && std::find(cidrs.begin(), cidrs.end(), cidr) != cidrs.end());
        if (!recorded) return false;
    }
    return deniedV4 && deniedV6;
}

}  // namespace

std::string allowedEgressAnnotation(
    bool dns, bool openshiftDns, const std::vector<std::string>& cidrs,
    const std::vector<std::pair<std::string, std::optional<int>>>& hosts,
    const std::vector<std::vector<std::string>>& pinnedAddresses) {
    json value = {{"dns", dns}, {"cidrs", cidrs}, {"hosts", json::array()}};
    if (openshiftDns) value["openshiftDns"] = true;
    for (size_t i = 0; i < hosts.size(); ++i) {
        json host = {{"host", hosts[i].first}};
        if (hosts[i].second) host["port"] = *hosts[i].second;
        if (i < pinnedAddresses.size()) host["addresses"] = pinnedAddresses[i];
        value["hosts"].push_back(host);
    }
    return value.dump();
}

EgressAllowance projectAllowance(const json& namespaceObject, const json& egressFirewall) {
    EgressAllowance allowance;
    json recorded;
    if (namespaceObject.is_object()) {
        const json annotations =
            namespaceObject.value("metadata", json::object()).value("annotations", json::object());
        // Deeper than any allowance nests: read as no annotation (the strictest allowance), not
        // parsed (copying it would recurse once per level).
        if (annotations.contains(kAllowedEgressAnnotation) &&
            annotations[kAllowedEgressAnnotation].is_string() &&
            !kube::nestsDeeperThan(
                annotations[kAllowedEgressAnnotation].get_ref<const std::string&>()))
            recorded = json::parse(annotations[kAllowedEgressAnnotation].get<std::string>(),
                                   nullptr, false);
    }
    if (!recorded.is_object()) {
        allowance.origin = fmt::format("DNS to kube-dns only (no {} annotation on the namespace)",
                                       kAllowedEgressAnnotation);
        allowance.pods.push_back({dnsPeer("kube-system", "k8s-app", "kube-dns"), dnsPorts(53)});
        return allowance;
    }
    std::vector<std::string> parts;
    if (recorded.value("dns", false)) {
        allowance.pods.push_back({dnsPeer("kube-system", "k8s-app", "kube-dns"), dnsPorts(53)});
        parts.push_back("DNS to kube-dns");
    }
    if (recorded.value("openshiftDns", false))
        allowance.pods.push_back(
            {dnsPeer("openshift-dns", "dns.operator.openshift.io/daemonset-dns", "default"),
             dnsPorts(5353)});
    std::vector<std::string> cidrs, hosts;
    for (const auto& cidr : recorded.value("cidrs", json::array())) {
        if (!cidr.is_string()) continue;
        try {
            allowance.addresses.push_back(
                {AddressSet::parse(cidr.get<std::string>()), PortSet::all()});
            cidrs.push_back(cidr.get<std::string>());
            parts.push_back(cidr.get<std::string>());
        } catch (const Error&) {
        }
    }
    PortSet publicPorts;
    for (const auto& host : recorded.value("hosts", json::array())) {
        if (!host.is_object()) continue;
        const std::string name = host.value("host", "");
        const PortSet ports = portsOf(host.value("port", json()));
        hosts.push_back(name);
        allowance.hostNames.push_back(name);
        publicPorts.add(ports);
        parts.push_back(name + (host.contains("port") ? ":" + host["port"].dump() : ""));
        for (const auto& address : host.value("addresses", json::array())) {
            try {
                allowance.addresses.push_back(
                    {AddressSet::parse(address.get<std::string>()), ports});
            } catch (const std::exception&) {
            }
        }
    }
    if (!hosts.empty() && firewallClosesTheRest(egressFirewall, hosts, cidrs)) {
        allowance.addresses.push_back({publicAddresses(), publicPorts});
        parts.push_back("public addresses behind egressfirewall/default");
    }
    std::string list;
    for (const auto& part : parts) list += (list.empty() ? "" : ", ") + part;
    allowance.origin = "the project allows " + (list.empty() ? "nothing" : list);
    return allowance;
}

AddressSet publicAddresses() {
    AddressSet set = AddressSet::allV4();
    for (const char* cidr : {"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8",
                             "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16", "224.0.0.0/3"})
        set = set.minus(AddressSet::parse(cidr));
    set.add(AddressSet::parse("2000::/3"));
    return set;
}

std::vector<NamedRange> calledOutRanges(const std::vector<std::string>& apiServerAddresses,
                                        const std::vector<std::string>& nodeAddresses) {
    std::vector<NamedRange> ranges;
    AddressSet metadata = AddressSet::parse("169.254.169.254");
    metadata.add(AddressSet::parse("fd00:ec2::254"));
    ranges.push_back({"the cloud metadata address 169.254.169.254", metadata});
    auto named = [&](const std::vector<std::string>& addresses, const std::string& what) {
        AddressSet set;
        std::string list;
        for (const auto& address : addresses) {
            try {
                set.add(AddressSet::parse(address));
                list += (list.empty() ? "" : ", ") + address;
            } catch (const Error&) {
            }
        }
        if (!set.empty()) ranges.push_back({fmt::format("{} ({})", what, list), set});
    };
    named(apiServerAddresses, "the API server");
    named(nodeAddresses, "the node network");
    ranges.push_back({"public addresses", publicAddresses()});
    return ranges;
}

namespace {

bool samePeer(const PodPeer& a, const PodPeer& b) {
    return a.namespaceSelector == b.namespaceSelector && a.podSelector == b.podSelector;
}

std::string exampleOf(const std::vector<std::pair<AddressSet, PortSet>>& open,
                      std::optional<std::pair<Protocol, int>> probedPort) {
    static const AddressSet metadata = AddressSet::parse("169.254.169.254");
    static const AddressSet world = publicAddresses();
    const std::pair<AddressSet, PortSet>* chosen = nullptr;
    AddressSet where;
    for (const auto& wanted : {metadata, world}) {
        for (const auto& piece : open) {
            AddressSet hit = piece.first.intersect(wanted);
            if (!hit.empty()) {
                chosen = &piece;
                where = hit;
                break;
            }
        }
        if (chosen) break;
    }
    if (!chosen) {
        chosen = &open.front();
        where = chosen->first;
    }
    const auto [protocol, port] = chosen->second.example(probedPort);
    return fmt::format("{} {} {}", where.firstAddress(), protocolName(protocol), port);
}

}  // namespace

std::vector<EgressExcess> beyondAllowance(const EffectiveEgress& egress,
                                          const EgressAllowance& allowance,
                                          std::optional<std::pair<Protocol, int>> probedPort) {
    std::vector<EgressExcess> out;
    for (const auto& grant : egress.grants) {
        EgressExcess excess{grant.source, grant.text, {}, {}, {}};
        std::vector<std::pair<AddressSet, PortSet>> pieces;
        if (!grant.addresses.empty()) pieces.push_back({grant.addresses, grant.ports});
        for (const auto& [allowedAddresses, allowedPorts] : allowance.addresses) {
            std::vector<std::pair<AddressSet, PortSet>> next;
            for (const auto& [addresses, ports] : pieces) {
                AddressSet outside = addresses.minus(allowedAddresses);
                AddressSet inside = addresses.intersect(allowedAddresses);
                if (!outside.empty()) next.push_back({outside, ports});
                PortSet left = ports.minus(allowedPorts);
                if (!inside.empty() && !left.empty()) next.push_back({inside, left});
            }
            pieces = std::move(next);
        }
        excess.open = pieces;
        std::vector<std::string> pods;
        if (grant.everyPod) pods.push_back("every pod in every namespace");
        for (const auto& peer : grant.pods) {
            bool allowed = false;
            for (const auto& [allowedPeer, allowedPorts] : allowance.pods)
                allowed =
                    allowed || (samePeer(peer, allowedPeer) && allowedPorts.contains(grant.ports));
            if (!allowed)
                pods.push_back(fmt::format("pods {} in namespaces {}", peer.podSelector.dump(),
                                           peer.namespaceSelector.is_object()
                                               ? peer.namespaceSelector.dump()
                                               : "(own namespace)"));
        }
        for (const auto& host : grant.hostNames)
            if (std::find(allowance.hostNames.begin(), allowance.hostNames.end(), host) ==
                allowance.hostNames.end())
                pods.push_back("host " + host + " (not recorded by the project)");
        for (const auto& text : pods)
            excess.podsText += (excess.podsText.empty() ? "" : "; ") + text;
        if (excess.open.empty() && excess.podsText.empty()) continue;
        if (!excess.open.empty()) excess.example = exampleOf(excess.open, probedPort);
        out.push_back(std::move(excess));
    }
    return out;
}

}  // namespace rossoctl::model
