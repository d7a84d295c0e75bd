// Policies in words: what a NetworkPolicy, EgressFirewall or CiliumNetworkPolicy allows.
#include <fmt/format.h>

#include "rossoctl/model/project.hpp"

namespace rossoctl::model {

using nlohmann::json;

namespace {

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
    std::string out;
    for (const auto& part : parts) out += (out.empty() ? "" : separator) + part;
    return out;
}

std::string labelsText(const json& selector) {
    std::vector<std::string> parts;
    if (selector.contains("matchLabels"))
        for (const auto& [key, value] : selector["matchLabels"].items())
            parts.push_back(key + "=" + value.get<std::string>());
    if (selector.contains("matchExpressions"))
        parts.push_back(fmt::format("{} expression(s)", selector["matchExpressions"].size()));
    return parts.empty() ? "all" : join(parts, ",");
}

std::string peerText(const json& peer) {
    if (peer.contains("ipBlock")) {
        std::string text = peer["ipBlock"].value("cidr", "?");
        if (peer["ipBlock"].contains("except")) {
            std::vector<std::string> except;
            for (const auto& cidr : peer["ipBlock"]["except"]) except.push_back(cidr);
            text += " except " + join(except, ",");
        }
        return text;
    }
    std::vector<std::string> parts;
    if (peer.contains("namespaceSelector"))
        parts.push_back("namespaces " + labelsText(peer["namespaceSelector"]));
    if (peer.contains("podSelector")) parts.push_back("pods " + labelsText(peer["podSelector"]));
    return join(parts, " / ");
}

std::string portsText(const json& ports) {
    if (!ports.is_array() || ports.empty()) return "all ports";
    std::vector<std::string> parts;
    for (const auto& port : ports) {
        std::string number =
            port.contains("port")
                ? (port["port"].is_string() ? port["port"].get<std::string>()
                                            : std::to_string(port["port"].get<long>()))
                : "*";
        parts.push_back(port.value("protocol", "TCP") + "/" + number);
    }
    return join(parts, ", ");
}

std::vector<std::string> networkPolicyText(const json& spec) {
    std::vector<std::string> lines;
    bool ingress = false, egress = false;
    for (const auto& type : spec.value("policyTypes", json::array())) {
        ingress |= type == "Ingress";
        egress |= type == "Egress";
    }
    if (ingress && spec.value("ingress", json::array()).empty())
        lines.push_back("denies all ingress");
    if (egress && spec.value("egress", json::array()).empty()) lines.push_back("denies all egress");
    for (const auto& rule : spec.value("egress", json::array())) {
        std::vector<std::string> peers;
        for (const auto& peer : rule.value("to", json::array())) peers.push_back(peerText(peer));
        lines.push_back(fmt::format("egress to {} on {}",
                                    peers.empty() ? "anywhere" : join(peers, "; "),
                                    portsText(rule.value("ports", json::array()))));
    }
    for (const auto& rule : spec.value("ingress", json::array())) {
        std::vector<std::string> peers;
        for (const auto& peer : rule.value("from", json::array())) peers.push_back(peerText(peer));
        lines.push_back(fmt::format("ingress from {} on {}",
                                    peers.empty() ? "anywhere" : join(peers, "; "),
                                    portsText(rule.value("ports", json::array()))));
    }
    return lines;
}

std::vector<std::string> egressFirewallText(const json& spec) {
    std::vector<std::string> lines;
    for (const auto& rule : spec.value("egress", json::array())) {
        const json& to = rule.value("to", json::object());
        std::string target = to.contains("dnsName")        ? to["dnsName"].get<std::string>()
                             : to.contains("cidrSelector") ? to["cidrSelector"].get<std::string>()
                                                           : "selected nodes";
        lines.push_back(fmt::format("{} {} on {}",
                                    rule.value("type", "?") == "Deny" ? "deny" : "allow", target,
                                    portsText(rule.value("ports", json::array()))));
    }
    return lines;
}

std::vector<std::string> ciliumText(const json& spec) {
    std::vector<std::string> lines;
    for (const auto& rule : spec.value("egress", json::array())) {
        std::vector<std::string> targets;
        for (const auto& fqdn : rule.value("toFQDNs", json::array()))
            targets.push_back(fqdn.value("matchName", fqdn.value("matchPattern", "?")));
        for (const auto& endpoints : rule.value("toEndpoints", json::array()))
            targets.push_back("endpoints " + labelsText(endpoints));
        for (const auto& cidr : rule.value("toCIDR", json::array())) targets.push_back(cidr);
        json ports = json::array();
        bool dnsProxy = false;
        for (const auto& toPort : rule.value("toPorts", json::array())) {
            for (const auto& port : toPort.value("ports", json::array())) ports.push_back(port);
            dnsProxy |= toPort.contains("rules") && toPort["rules"].contains("dns");
        }
        lines.push_back(fmt::format("egress to {} on {}{}", join(targets, "; "), portsText(ports),
                                    dnsProxy ? " (DNS through Cilium's proxy)" : ""));
    }
    return lines;
}

}  // namespace

std::vector<std::string> describePolicy(const json& object) {
    const std::string kind = object.value("kind", "");
    const json& spec = object.contains("spec") ? object["spec"] : json::object();
    if (kind == "NetworkPolicy") return networkPolicyText(spec);
    if (kind == "EgressFirewall") return egressFirewallText(spec);
    if (kind == "CiliumNetworkPolicy") return ciliumText(spec);
    return {};
}

}  // namespace rossoctl::model
