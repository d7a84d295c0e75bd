// What egress is judged by beyond the pod and its policies: what the project allows, the API
// server's addresses, the pods of the project the policies grant, the node's host-network
// listeners and probe hosts, and which namespaces admit a probe that names a host. Each read may
// be refused to a project user, and then narrows what can be named or leaves egress unproven.
#include <fmt/format.h>

#include <algorithm>

#include "json_access.hpp"
#include "rossoctl/app/project_dns.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/kube/transport.hpp"
#include "rossoctl/model/egress.hpp"
#include "rossoctl/model/project.hpp"
#include "sandbox_inputs.hpp"
#include "verification.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

std::vector<std::string> endpointAddresses(const json& endpoints) {
    std::vector<std::string> addresses;
    for (const auto& subset : endpoints.value("subsets", json::array()))
        for (const auto& address : subset.value("addresses", json::array()))
            addresses.push_back(address.value("ip", ""));
    return addresses;
}

// The `kubernetes` Service's cluster IPs on its port, then its endpoints' address:port;
// unreadable ones are left out (the live attempt then tries fewer, the static half is unchanged).
void readApiServerTargets(kube::Client& client, EgressInputs& egress) {
    try {
        const kube::ResourceRef services{"", "v1", "services", "Service", true};
        if (auto service = client.getIfExists(services, "default", "kubernetes")) {
            const json spec = service->value("spec", json::object());
            int port = 443;
            for (const auto& entry : spec.value("ports", json::array()))
                if (entry.contains("port") && entry["port"].is_number_integer())
                    port = entry["port"].get<int>();
            std::vector<std::string> ips;
            for (const auto& ip : spec.value("clusterIPs", json::array()))
                if (ip.is_string()) ips.push_back(ip.get<std::string>());
            if (ips.empty() && spec.contains("clusterIP") && spec["clusterIP"].is_string())
                ips.push_back(spec["clusterIP"].get<std::string>());
            for (const auto& ip : ips)
                if (!ip.empty() && ip != "None") egress.apiServerTargets.emplace_back(ip, port);
        }
    } catch (const kube::ApiError&) {
    }
    egress.apiServerServiceCount = egress.apiServerTargets.size();
    try {
        const kube::ResourceRef endpoints{"", "v1", "endpoints", "Endpoints", true};
        if (auto found = client.getIfExists(endpoints, "default", "kubernetes"))
            for (const auto& subset : found->value("subsets", json::array())) {
                std::vector<int> ports;
                for (const auto& entry : subset.value("ports", json::array()))
                    if (entry.contains("port") && entry["port"].is_number_integer())
                        ports.push_back(entry["port"].get<int>());
                for (const auto& address : subset.value("addresses", json::array()))
                    for (int port : ports)
                        egress.apiServerTargets.emplace_back(address.value("ip", ""), port);
            }
    } catch (const kube::ApiError&) {
    }
    // A cluster may publish them in EndpointSlices only (the local cluster's
    // kubernetes-localcluster): each slice labelled for the Service.
    try {
        const kube::ResourceRef slices{"discovery.k8s.io", "v1", "endpointslices", "EndpointSlice",
                                       true};
        kube::ListOptions options;
        options.labelSelector = "kubernetes.io/service-name=kubernetes";
        const json found = client.list(slices, "default", options);
        for (const auto& slice : found.value("items", json::array())) {
            std::vector<int> ports;
            for (const auto& entry : slice.value("ports", json::array()))
                if (entry.contains("port") && entry["port"].is_number_integer())
                    ports.push_back(entry["port"].get<int>());
            for (const auto& endpoint : slice.value("endpoints", json::array()))
                for (const auto& address : endpoint.value("addresses", json::array()))
                    for (int port : ports)
                        if (address.is_string()) {
                            const std::pair<std::string, int> target{address.get<std::string>(),
                                                                     port};
                            if (std::find(egress.apiServerTargets.begin(),
                                          egress.apiServerTargets.end(),
                                          target) == egress.apiServerTargets.end())
                                egress.apiServerTargets.push_back(target);
                        }
        }
    } catch (const kube::ApiError&) {
    }
}

// The addresses of the namespace's pods the pod's own policies let it reach: a connection held
// to one of them is the static half's to judge. A pod of the project the policies do not grant
// is no allowance (a relay with open egress of its own, attack 54 E4).
void readProjectPodAddresses(kube::Client& client, const std::string& ns, const json& pod,
                             const json& networkPolicies, const json& namespaceLabels,
                             EgressInputs& egress) {
    const model::EffectiveEgress granted =
        model::effectiveEgress(pod, networkPolicies, egress.ciliumPolicies);
    const auto grants = [&](const json& other) {
        return model::egressGrantsPod(
            granted, other.value("metadata", json::object()).value("labels", json()),
            namespaceLabels);
    };
    try {
        const json pods = client.list(kube::resources::pods(), ns);
        egress.namespacePods = pods;
        for (const auto& other : pods.value("items", json::array())) {
            if (!grants(other)) continue;
            for (const auto& ip :
                 other.value("status", json::object()).value("podIPs", json::array()))
                if (ip.contains("ip") && ip["ip"].is_string())
                    egress.projectPodAddresses.push_back(ip["ip"].get<std::string>());
        }
    } catch (const kube::ApiError&) {
        // Not read: a connection held to a pod of the project then fails, never passes.
    }
}

// Which namespaces admit a pod whose probe names a host, by their Pod Security labels and the
// server's version; refused to list namespaces, it is not known (attack 59 K1).
void readProbeHostNamespaces(kube::Client& client, EgressInputs& egress) {
    json version;
    try {
        version = client.getPath("/version");
    } catch (const kube::ApiError&) {
        // Unknown: no namespace counts as refusing (the rule needs a v1.34 server).
    }
    try {
        const json namespaces = client.list(kube::resources::namespaces(), "");
        egress.probeHostNamespaces = namespacesAdmittingProbeHosts(namespaces, version, egress);
        egress.hostAccessNamespaces = namespacesAdmittingHostAccess(namespaces, egress);
    } catch (const kube::ApiError& error) {
        egress.probeHostNamespacesUnread = fmt::format("namespaces not listed ({})", error.what());
    }
}

}  // namespace

namespace {

// The node's kubelet `seccompDefault`, from its configz through the API server (nodes/proxy).
void readSeccompDefault(kube::Client& client, const std::string& nodeName, EgressInputs& egress) {
    constexpr size_t kMostConfigBytes = 256 * 1024;
    // Another node's reading (the replacement's node) must not stand for this one's.
    egress.seccompDefault.reset();
    egress.seccompDefaultUnread.clear();
    egress.podCgroups.reset();
    try {
        const json config = client.getPath(
            "/api/v1/nodes/" + kube::urlEncode(nodeName) + "/proxy/configz", kMostConfigBytes);
        // Omitted, the kubelet's own default: on.
        if (const json& qos =
                json_access::at(json_access::at(config, "kubeletconfig"), "cgroupsPerQOS");
            qos.is_boolean() ||
            (qos.is_null() && json_access::at(config, "kubeletconfig").is_object()))
            egress.podCgroups = qos.is_boolean() ? qos.get<bool>() : true;
        const json& value =
            json_access::at(json_access::at(config, "kubeletconfig"), "seccompDefault");
        if (value.is_boolean())
            egress.seccompDefault = value.get<bool>();
        else if (json_access::at(config, "kubeletconfig").is_object() && value.is_null())
            egress.seccompDefault = false;  // omitted: the kubelet's own default, off
        else
            egress.seccompDefaultUnread = "its configz gives no seccompDefault";
    } catch (const kube::TransportError& error) {
        if (error.kind() == kube::TransportError::Kind::Cancelled) throw;
        egress.seccompDefaultUnread = fmt::format("its configz was not read: {}", error.what());
    } catch (const Error& error) {
        egress.seccompDefaultUnread = fmt::format("its configz was not read: {}", error.what());
    }
}

}  // namespace

void readHostListeners(kube::Client& client, const json& pod, EgressInputs& egress) {
    const std::string nodeName = json_access::stringAt(json_access::podSpec(pod), "nodeName");
    if (nodeName.empty()) {
        egress.hostListenersUnread = "the pod names no node";
        return;
    }
    readSeccompDefault(client, nodeName, egress);
    try {
        // Every pod, a page at a time: one with host access on any node reaches this pod's
        // files once it is moved there (review 61 #2).
        kube::ListOptions options;
        options.limit = 500;
        const std::string uid = json_access::stringAt(json_access::at(pod, "metadata"), "uid");
        bool holdsPod = false;
        client.listPages(kube::resources::pods(), "", options, [&](const json& page) {
            // Every page is of the first one's snapshot: its version is the list's.
            if (egress.podsVersion.empty())
                egress.podsVersion =
                    json_access::stringAt(json_access::at(page, "metadata"), "resourceVersion");
            addClusterPods(page, nodeName, egress);
            for (const auto& item : json_access::arrayAt(page, "items"))
                holdsPod = holdsPod ||
                           json_access::stringAt(json_access::at(item, "metadata"), "uid") == uid;
            return true;
        });
        // A list without the pod itself is not the cluster's (review 60 #6).
        if (!holdsPod)
            egress.hostListenersUnread =
                fmt::format("the cluster's pod list did not hold pod {} itself",
                            json_access::shortened(json_access::podName(pod), 253));
    } catch (const kube::TransportError& error) {
        if (error.kind() == kube::TransportError::Kind::Cancelled) throw;
        egress.hostListenersUnread = fmt::format("pods not listed ({})", error.what());
    } catch (const Error& error) {
        // Refused, or past the bounds a list may take: not known, never nothing there.
        egress.hostListenersUnread = fmt::format("pods not listed ({})", error.what());
    }
}

// The namespaces the cluster's admin vouches for (review 61 #4): only someone who may write
// kube-system's ConfigMaps can name them; not readable, none is trusted.
void readTrustedNamespaces(kube::Client& client, EgressInputs& egress) {
    try {
        if (const auto found =
                client.getIfExists(kube::resources::configMaps(), "kube-system", "rossoctl-verify"))
            egress.trustedNamespaces = trustedNamespacesOf(*found);
    } catch (const kube::ApiError&) {
    }
}

// The PersistentVolumes of a node's files, a page at a time (review 61 #6).
void readHostPathVolumes(kube::Client& client, EgressInputs& egress) {
    try {
        const kube::ResourceRef volumes{"", "v1", "persistentvolumes", "PersistentVolume", false};
        kube::ListOptions options;
        options.limit = 500;
        client.listPages(volumes, "", options, [&](const json& page) {
            addHostPathVolumes(page, egress);
            return true;
        });
    } catch (const kube::TransportError& error) {
        if (error.kind() == kube::TransportError::Kind::Cancelled) throw;
        egress.hostPathVolumesUnread =
            fmt::format("persistent volumes not listed ({})", error.what());
    } catch (const Error& error) {
        egress.hostPathVolumesUnread =
            fmt::format("persistent volumes not listed ({})", error.what());
    }
}

namespace {

// The ranges of one pool object, by its kind's shape; empty when not all are understood.
std::vector<std::string> poolRanges(const std::string& kind, const json& item) {
    std::vector<std::string> ranges;
    bool unread = false;
    const json& spec = json_access::at(item, "spec");
    const auto add = [&](const json& value) {
        if (value.is_string())
            ranges.push_back(value.get<std::string>());
        else
            unread = true;
    };
    if (kind == "IPPool" && spec.contains("ipRanges")) {  // Antrea
        // A {start, end} range is not a CIDR: an address the pool gives from it is not known
        // to be pod network, so the pool is not read (review 64 M3).
        for (const auto& range : json_access::arrayAt(spec, "ipRanges"))
            add(json_access::at(range, "cidr"));
    } else if (kind == "IPPool") {  // Calico
        add(json_access::at(spec, "cidr"));
    } else if (kind == "CiliumPodIPPool") {  // multi-pool: a pod annotated for it gets one
        for (const char* family : {"ipv4", "ipv6"})
            for (const auto& range : json_access::arrayAt(json_access::at(spec, family), "cidrs"))
                add(range);
    } else {  // CiliumNode
        const json& ipam = json_access::at(spec, "ipam");
        for (const auto& range : json_access::arrayAt(ipam, "podCIDRs")) add(range);
        for (const auto& pool : json_access::arrayAt(json_access::at(ipam, "pools"), "allocated"))
            for (const auto& range : json_access::arrayAt(pool, "cidrs")) add(range);
        // ENI and Azure modes: the node's pod addresses one by one, as the keys of its pool.
        const json& addresses = json_access::at(ipam, "pool");
        if (addresses.is_object())
            for (const auto& [address, owner] : addresses.items())
                ranges.push_back(address.find(':') == std::string::npos ? address + "/32"
                                                                        : address + "/128");
    }
    if (unread) ranges.clear();
    return ranges;
}

// Adds the address pools of the network plugins that are served to ranges; false, with
// unknown saying why, when one cannot be listed or holds a pool whose ranges are not read.
bool addPluginPools(kube::Client& client, std::vector<std::pair<std::string, std::string>>& ranges,
                    std::string& unknown) {
    static const kube::ResourceRef kinds[] = {
        {"crd.projectcalico.org", "v1", "ippools", "IPPool", false},
        {"projectcalico.org", "v3", "ippools", "IPPool", false},
        {"cilium.io", "v2", "ciliumnodes", "CiliumNode", false},
        {"crd.antrea.io", "v1beta1", "ippools", "IPPool", false},
        {"cilium.io", "v2alpha1", "ciliumpodippools", "CiliumPodIPPool", false},
    };
    for (const auto& kind : kinds) {
        json items;
        try {
            items = client.list(kind, "").value("items", json::array());
        } catch (const kube::ApiError& error) {
            if (error.isNotFound()) continue;  // not served
            unknown = fmt::format("{} not listed ({})", kind.qualifiedName(), error.what());
            return false;
        }
        for (const auto& item : items) {
            const std::string name = json_access::shortened(
                json_access::stringAt(json_access::at(item, "metadata"), "name", "?"), 63);
            const auto own = poolRanges(kind.kind, item);
            if (own.empty()) {
                unknown =
                    fmt::format("{} {} names no range verify reads", kind.qualifiedName(), name);
                return false;
            }
            for (const auto& range : own)
                ranges.emplace_back(range, fmt::format("{} {}", kind.qualifiedName(), name));
        }
    }
    return true;
}

// A pod address the ranges read do not hold, as "why not known"; "" when each is held. An IPAM
// verify does not read (Kube-OVN subnets, Whereabouts, a newer pool kind) gives pods addresses
// outside the nodes' ranges, and more of them later (review 66 L1).
std::string podOutsideRanges(const std::vector<std::pair<std::string, std::string>>& ranges,
                             const EgressInputs& egress) {
    if (!egress.hostListenersUnread.empty())
        return fmt::format(
            "the cluster's pods, whose addresses would show an IPAM verify does "
            "not read, were not listed ({})",
            egress.hostListenersUnread);
    std::vector<model::AddressSet> held;
    for (const auto& [range, whose] : ranges) {
        try {
            held.push_back(model::AddressSet::parse(range));
        } catch (const Error&) {
            return fmt::format("{} is not a range verify reads", json_access::shortened(range, 50));
        }
    }
    for (const auto& [address, whose] : egress.podAddresses) {
        model::AddressSet one;
        try {
            one = model::AddressSet::parse(address);
        } catch (const Error&) {
            return fmt::format("{} has address {}, which verify cannot read", whose,
                               json_access::shortened(address, 50));
        }
        if (std::none_of(held.begin(), held.end(), [&](const model::AddressSet& range) {
                return !range.intersect(one).empty();
            }))
            return fmt::format(
                "{} has address {}, outside every pod range read: an IPAM verify "
                "does not read gives pods addresses elsewhere",
                whose, json_access::shortened(address, 50));
    }
    return "";
}

}  // namespace

// Every node's pod ranges (spec.podCIDRs) and the network plugin's pools; not all known, why
// (attack 62 C1b).
void readPodRanges(kube::Client& client, EgressInputs& egress) {
    try {
        std::vector<std::pair<std::string, std::string>> ranges;
        const kube::ResourceRef nodeRef{"", "v1", "nodes", "Node", false};
        const json nodes = client.list(nodeRef, "");
        for (const auto& node : json_access::arrayAt(nodes, "items")) {
            const std::string name = json_access::shortened(
                json_access::stringAt(json_access::at(node, "metadata"), "name", "?"), 63);
            const json& spec = json_access::at(node, "spec");
            std::vector<std::string> own;
            for (const auto& range : json_access::arrayAt(spec, "podCIDRs"))
                if (range.is_string()) own.push_back(range.get<std::string>());
            if (own.empty() && json_access::at(spec, "podCIDR").is_string())
                own.push_back(json_access::stringAt(spec, "podCIDR"));
            if (own.empty()) {
                egress.podRangesUnknown =
                    fmt::format("node {} names no pod range (spec.podCIDRs)", name);
                return;
            }
            for (const auto& range : own)
                ranges.emplace_back(range, fmt::format("node {}'s pod range", name));
        }
        // A network plugin with address pools of its own gives pods addresses outside the
        // nodes' ranges (attack 63, read: Calico, Cilium's cluster pool, Antrea).
        if (!addPluginPools(client, ranges, egress.podRangesUnknown)) return;
        egress.podRangesUnknown = podOutsideRanges(ranges, egress);
        if (egress.podRangesUnknown.empty()) egress.podRanges = std::move(ranges);
    } catch (const kube::ApiError& error) {
        egress.podRangesUnknown = fmt::format("nodes not listed ({})", error.what());
    }
}

// What the project allows and the ranges called out by name; each read may be forbidden
// to a project user, and then only narrows what can be named, never what is judged.
void Verification::readEgressInputs() {
    auto& egress = inputs_.egress;
    egress.probedPort = options_.egressTarget.port;
    // Cilium policies add allowances: unreadable, they leave egress unproven.
    egress.ciliumPolicies =
        optionalList(client_, kube::resources::ciliumNetworkPolicies(), ns_, egress.unreadPolicies);
    inputs_.unevaluatedPolicies = unevaluatedPolicyKinds(client_, ns_);
    for (const auto& line : inputs_.unevaluatedPolicies) egress.unreadPolicies.push_back(line);
    json firewall;
    try {
        firewall = client_.getIfExists(kube::resources::egressFirewalls(), ns_, "default")
                       .value_or(json());
    } catch (const kube::ApiError&) {
    }
    json namespaceLabels;
    try {
        const auto namespaceObject = client_.getIfExists(kube::resources::namespaces(), "", ns_);
        if (namespaceObject)
            namespaceLabels =
                namespaceObject->value("metadata", json::object()).value("labels", json());
        egress.allowance = model::projectAllowance(namespaceObject.value_or(json()), firewall);
        inputs_.deadline = deadlineBound(namespaceObject.value_or(json()));
        // The one read every check and the end's re-check use (review 66 L3).
        inputs_.namespaceObject = namespaceObject;
    } catch (const kube::ApiError& error) {
        egress.readProblems.push_back(fmt::format(
            "could not read namespace {} ({}): judged against DNS only", ns_, error.what()));
    }
    egress.clusterDns = app::readClusterDns(client_);
    try {
        const kube::ResourceRef endpoints{"", "v1", "endpoints", "Endpoints", true};
        if (auto found = client_.getIfExists(endpoints, "default", "kubernetes"))
            egress.apiServerAddresses = endpointAddresses(*found);
    } catch (const kube::ApiError&) {
        // Not allowed to read them: the public and metadata ranges are still named.
    }
    readApiServerTargets(client_, egress);
    readTrustedNamespaces(client_, egress);
    // Never the namespace verified: its own pods are what a tenant makes (review 64 M4).
    std::erase(egress.trustedNamespaces, ns_);
    readHostListeners(client_, inputs_.pod, egress);
    readHostPathVolumes(client_, egress);
    readProbeHostNamespaces(client_, egress);
    if (!egress.allowance.addresses.empty()) readPodRanges(client_, egress);
    readProjectPodAddresses(client_, ns_, inputs_.pod, inputs_.networkPolicies, namespaceLabels,
                            egress);
}

}  // namespace rossoctl::verify
