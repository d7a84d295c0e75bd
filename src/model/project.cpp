// The objects `project create` writes, in the order it writes them.
#include "rossoctl/model/project.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "rossoctl/errors.hpp"
#include "rossoctl/model/egress.hpp"
#include "rossoctl/model/pod.hpp"

namespace rossoctl::model {

using nlohmann::json;
namespace resources = kube::resources;

namespace {

kube::ResourceRef validatingAdmissionPolicies() {
    return {"admissionregistration.k8s.io", "v1", "validatingadmissionpolicies",
            "ValidatingAdmissionPolicy", false};
}
kube::ResourceRef validatingAdmissionPolicyBindings() {
    return {"admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
            "ValidatingAdmissionPolicyBinding", false};
}

// Ranges the EgressFirewall half never opens: in-cluster pods and services, node and cloud
// metadata addresses. --allow-cidr opens them explicitly.
const std::vector<std::string> kPrivateIpv4 = {"10.0.0.0/8",     "100.64.0.0/10", "127.0.0.0/8",
                                               "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16"};
const std::vector<std::string> kPrivateIpv6 = {"::1/128", "fc00::/7", "fe80::/10"};

json managedMetadata(const std::string& name, const std::string& namespaceName) {
    json metadata = {{"name", name}, {"labels", {{kManagedByLabel, kManagedByValue}}}};
    if (!namespaceName.empty()) metadata["namespace"] = namespaceName;
    return metadata;
}

json networkPolicy(const std::string& name, const std::string& namespaceName, json spec) {
    return {{"apiVersion", "networking.k8s.io/v1"},
            {"kind", "NetworkPolicy"},
            {"metadata", managedMetadata(name, namespaceName)},
            {"spec", std::move(spec)}};
}

json tcpPorts(const std::optional<int>& port) {
    if (!port) return json::array();
    return json::array({{{"protocol", "TCP"}, {"port", *port}}});
}

std::string hostText(const AllowedHost& host) {
    return host.port ? fmt::format("{} TCP/{}", host.host, *host.port) : host.host + " (all ports)";
}

std::string hostCidr(const std::string& address) {
    return address + (address.find(':') == std::string::npos ? "/32" : "/128");
}

}  // namespace

std::string PlannedObject::displayName() const {
    std::string kind = ref.kind;
    std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
    return kind + "/" + object.value("metadata", json::object()).value("name", "");
}

json buildProjectNamespace(const ProjectOptions& options) {
    json metadata = managedMetadata(options.name, "");
    auto& labels = metadata["labels"];
    for (const char* mode : {"enforce", "warn", "audit"})
        labels[std::string("pod-security.kubernetes.io/") + mode] = options.podSecurity;
    labels[kSandboxProjectLabel] = "true";
    metadata["annotations"] = {{kDefaultLifetimeAnnotation, options.defaultLifetime}};
    if (!options.runtimeClass.empty())
        metadata["annotations"][kRuntimeClassAnnotation] = options.runtimeClass;
    if (!options.gateImage.empty())
        metadata["annotations"][kGateImageAnnotation] = options.gateImage;
    std::string registries;
    for (const auto& registry : options.allowRegistries)
        registries += (registries.empty() ? "" : ",") + registry;
    if (!registries.empty()) metadata["annotations"][kAllowedRegistriesAnnotation] = registries;
    return {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", metadata}};
}

json buildRuntimeClassPolicy(const ProjectOptions& options) {
    const std::string name = kRuntimeClassPolicyPrefix + options.name;
    // Both names are DNS labels or subdomains (validated), so they quote safely into CEL.
    return {{"apiVersion", "admissionregistration.k8s.io/v1"},
            {"kind", "ValidatingAdmissionPolicy"},
            {"metadata", managedMetadata(name, "")},
            {"spec",
             {{"failurePolicy", "Fail"},
              {"matchConstraints",
               {{"resourceRules", json::array({{{"apiGroups", {""}},
                                                {"apiVersions", {"v1"}},
                                                {"operations", {"CREATE"}},
                                                {"resources", {"pods"}}}})}}},
              {"validations",
               json::array({{{"expression", fmt::format("has(object.spec.runtimeClassName) && "
                                                        "object.spec.runtimeClassName == '{}'",
                                                        options.runtimeClass)},
                             {"message", fmt::format("pods in project {} must run with "
                                                     "runtimeClassName {} (rossoctl project "
                                                     "create --runtime-class; sandbox run "
                                                     "--runtime-class {})",
                                                     options.name, options.runtimeClass,
                                                     options.runtimeClass)}}})}}}};
}

json buildRuntimeClassPolicyBinding(const ProjectOptions& options) {
    const std::string name = kRuntimeClassPolicyPrefix + options.name;
    return {{"apiVersion", "admissionregistration.k8s.io/v1"},
            {"kind", "ValidatingAdmissionPolicyBinding"},
            {"metadata", managedMetadata(name, "")},
            {"spec",
             {{"policyName", name},
              {"validationActions", {"Deny"}},
              {"matchResources",
               {{"namespaceSelector",
                 {{"matchLabels", {{"kubernetes.io/metadata.name", options.name}}}}}}}}}};
}

json buildProjectRequest(const ProjectOptions& options) {
    return {{"apiVersion", "project.openshift.io/v1"},
            {"kind", "ProjectRequest"},
            {"metadata", {{"name", options.name}}},
            {"displayName", options.name},
            {"description", "rossoctl sandbox project"}};
}

json buildResourceQuota(const ProjectOptions& options) {
    return {{"apiVersion", "v1"},
            {"kind", "ResourceQuota"},
            {"metadata", managedMetadata(kQuotaName, options.name)},
            {"spec",
             {{"hard",
               {{"requests.cpu", options.cpu},
                {"limits.cpu", options.cpu},
                {"requests.memory", options.memory},
                {"limits.memory", options.memory},
                {"pods", options.pods},
                {"requests.storage", options.storage},
                {"persistentvolumeclaims", options.persistentVolumeClaims}}}}}};
}

json buildLimitRange(const ProjectOptions& options) {
    json defaults = {{"cpu", options.containerCpu}, {"memory", options.containerMemory}};
    json limit = {
        {"type", "Container"},
        {"default", defaults},
        {"defaultRequest", defaults},
        {"max", {{"cpu", options.maxContainerCpu}, {"memory", options.maxContainerMemory}}}};
    return {{"apiVersion", "v1"},
            {"kind", "LimitRange"},
            {"metadata", managedMetadata(kLimitRangeName, options.name)},
            {"spec", {{"limits", json::array({limit})}}}};
}

json buildDefaultDeny(const std::string& namespaceName) {
    return networkPolicy(
        kDefaultDenyName, namespaceName,
        {{"podSelector", json::object()}, {"policyTypes", json::array({"Ingress", "Egress"})}});
}

json buildAllowDns(const std::string& namespaceName, bool openshift) {
    auto dnsRule = [](const std::string& ns, const std::string& key, const std::string& value,
                      int port) {
        return json{{"to", json::array({{{"namespaceSelector",
                                          {{"matchLabels", {{"kubernetes.io/metadata.name", ns}}}}},
                                         {"podSelector", {{"matchLabels", {{key, value}}}}}}})},
                    {"ports", json::array({{{"protocol", "UDP"}, {"port", port}},
                                           {{"protocol", "TCP"}, {"port", port}}})}};
    };
    json egress = json::array({dnsRule("kube-system", "k8s-app", "kube-dns", 53)});
    // OpenShift's DNS pods listen on 5353 in openshift-dns; policies see the pod port.
    if (openshift)
        egress.push_back(
            dnsRule("openshift-dns", "dns.operator.openshift.io/daemonset-dns", "default", 5353));
    return networkPolicy(kAllowDnsName, namespaceName,
                         {{"podSelector", json::object()},
                          {"policyTypes", json::array({"Egress"})},
                          {"egress", egress}});
}

json buildAllowCidrs(const std::string& namespaceName, const std::vector<std::string>& cidrs) {
    json peers = json::array();
    for (const auto& cidr : cidrs) peers.push_back({{"ipBlock", {{"cidr", cidr}}}});
    return networkPolicy(kAllowCidrsName, namespaceName,
                         {{"podSelector", json::object()},
                          {"policyTypes", json::array({"Egress"})},
                          {"egress", json::array({{{"to", peers}}})}});
}

json buildAllowHostsPinned(const std::string& namespaceName, const std::vector<AllowedHost>& hosts,
                           const std::vector<std::vector<std::string>>& addresses) {
    json egress = json::array();
    for (size_t i = 0; i < hosts.size(); ++i) {
        json peers = json::array();
        for (const auto& address : addresses.at(i))
            peers.push_back({{"ipBlock", {{"cidr", hostCidr(address)}}}});
        json rule = {{"to", peers}};
        if (hosts[i].port) rule["ports"] = tcpPorts(hosts[i].port);
        egress.push_back(rule);
    }
    return networkPolicy(kAllowHostsName, namespaceName,
                         {{"podSelector", json::object()},
                          {"policyTypes", json::array({"Egress"})},
                          {"egress", egress}});
}

json buildAllowHostsForFirewall(const std::string& namespaceName,
                                const std::vector<AllowedHost>& hosts) {
    json peers = json::array({{{"ipBlock", {{"cidr", "0.0.0.0/0"}, {"except", kPrivateIpv4}}}},
                              {{"ipBlock", {{"cidr", "::/0"}, {"except", kPrivateIpv6}}}}});
    json rule = {{"to", peers}};
    bool everyHostHasPort = std::all_of(
        hosts.begin(), hosts.end(), [](const AllowedHost& host) { return host.port.has_value(); });
    if (everyHostHasPort) {
        std::set<int> ports;
        for (const auto& host : hosts) ports.insert(*host.port);
        json list = json::array();
        for (int port : ports) list.push_back({{"protocol", "TCP"}, {"port", port}});
        rule["ports"] = list;
    }
    return networkPolicy(kAllowHostsName, namespaceName,
                         {{"podSelector", json::object()},
                          {"policyTypes", json::array({"Egress"})},
                          {"egress", json::array({rule})}});
}

json buildEgressFirewall(const std::string& namespaceName, const std::vector<AllowedHost>& hosts,
                         const std::vector<std::string>& cidrs) {
    json egress = json::array();
    for (const auto& host : hosts) {
        json rule = {{"type", "Allow"}, {"to", {{"dnsName", host.host}}}};
        if (host.port) rule["ports"] = tcpPorts(host.port);
        egress.push_back(rule);
    }
    for (const auto& cidr : cidrs)
        egress.push_back({{"type", "Allow"}, {"to", {{"cidrSelector", cidr}}}});
    egress.push_back({{"type", "Deny"}, {"to", {{"cidrSelector", "0.0.0.0/0"}}}});
    egress.push_back({{"type", "Deny"}, {"to", {{"cidrSelector", "::/0"}}}});
    return {{"apiVersion", "k8s.ovn.org/v1"},
            {"kind", "EgressFirewall"},
            {"metadata", managedMetadata(kEgressFirewallName, namespaceName)},
            {"spec", {{"egress", egress}}}};
}

json buildCiliumAllowHosts(const std::string& namespaceName,
                           const std::vector<AllowedHost>& hosts) {
    // toFQDNs only learns addresses from lookups its DNS proxy sees: send DNS through it.
    json dnsThroughProxy = {
        {"toEndpoints", json::array({{{"matchLabels",
                                       {{"k8s:io.kubernetes.pod.namespace", "kube-system"},
                                        {"k8s:k8s-app", "kube-dns"}}}}})},
        {"toPorts", json::array({{{"ports", json::array({{{"port", "53"}, {"protocol", "ANY"}}})},
                                  {"rules", {{"dns", json::array({{{"matchPattern", "*"}}})}}}}})}};
    json egress = json::array({dnsThroughProxy});
    for (const auto& host : hosts) {
        json rule = {{"toFQDNs", json::array({{{"matchName", host.host}}})}};
        if (host.port)
            rule["toPorts"] = json::array(
                {{{"ports",
                   json::array({{{"port", std::to_string(*host.port)}, {"protocol", "TCP"}}})}}});
        egress.push_back(rule);
    }
    return {{"apiVersion", "cilium.io/v2"},
            {"kind", "CiliumNetworkPolicy"},
            {"metadata", managedMetadata(kAllowHostsName, namespaceName)},
            {"spec", {{"endpointSelector", json::object()}, {"egress", egress}}}};
}

namespace {
ProjectPlan planObjects(const ProjectOptions& options, EgressMechanism mechanism,
                        HostResolver& resolver, std::vector<std::vector<std::string>>& pinned);
}  // namespace

ProjectPlan planProject(const ProjectOptions& options, EgressMechanism mechanism,
                        HostResolver& resolver) {
    std::vector<std::vector<std::string>> pinned;
    ProjectPlan plan = planObjects(options, mechanism, resolver, pinned);
    // What the project allows, recorded where sandbox verify reads it back (a namespace is
    // not writable by the project's own users, unlike its NetworkPolicies).
    std::vector<std::pair<std::string, std::optional<int>>> hosts;
    for (const auto& host : options.allowHosts) hosts.push_back({host.host, host.port});
    for (auto& planned : plan.objects)
        if (planned.object.value("kind", "") == "Namespace")
            planned.object["metadata"]["annotations"][kAllowedEgressAnnotation] =
                allowedEgressAnnotation(options.allowDns, options.allowDns && options.openshift,
                                        options.allowCidrs, hosts, pinned);
    return plan;
}

namespace {
ProjectPlan planObjects(const ProjectOptions& options, EgressMechanism mechanism,
                        HostResolver& resolver, std::vector<std::vector<std::string>>& pinned) {
    ProjectPlan plan;
    plan.mechanism = mechanism;
    const std::string& ns = options.name;
    if (options.openshift)
        plan.objects.push_back({resources::projectRequests(), buildProjectRequest(options), true});
    plan.objects.push_back({resources::namespaces(), buildProjectNamespace(options)});
    if (!options.runtimeClass.empty()) {
        // Before any pod can be made: the policy, then the binding that puts it to work.
        plan.objects.push_back({validatingAdmissionPolicies(), buildRuntimeClassPolicy(options)});
        plan.objects.push_back(
            {validatingAdmissionPolicyBindings(), buildRuntimeClassPolicyBinding(options)});
    }
    // Isolation first: a run stopped half-way leaves a namespace that is denied, not open.
    plan.objects.push_back({resources::networkPolicies(), buildDefaultDeny(ns)});
    if (options.allowDns) {
        plan.objects.push_back(
            {resources::networkPolicies(), buildAllowDns(ns, options.openshift)});
        plan.egressSummary.push_back("DNS to kube-system/kube-dns (UDP and TCP 53)");
    }
    plan.objects.push_back({resources::resourceQuotas(), buildResourceQuota(options)});
    plan.objects.push_back({resources::limitRanges(), buildLimitRange(options)});
    if (!options.allowCidrs.empty()) {
        plan.objects.push_back(
            {resources::networkPolicies(), buildAllowCidrs(ns, options.allowCidrs)});
        for (const auto& cidr : options.allowCidrs)
            plan.egressSummary.push_back(cidr + " (all ports)");
    }
    if (options.allowHosts.empty()) return plan;
    for (const auto& host : options.allowHosts) plan.egressSummary.push_back(hostText(host));
    switch (mechanism) {
        case EgressMechanism::EgressFirewall:
            // The firewall first: the NetworkPolicy half alone would open every public address.
            plan.objects.push_back(
                {resources::egressFirewalls(),
                 buildEgressFirewall(ns, options.allowHosts, options.allowCidrs)});
            plan.objects.push_back(
                {resources::networkPolicies(), buildAllowHostsForFirewall(ns, options.allowHosts)});
            break;
        case EgressMechanism::Cilium:
            plan.objects.push_back({resources::ciliumNetworkPolicies(),
                                    buildCiliumAllowHosts(ns, options.allowHosts)});
            break;
        default: {
            std::vector<std::vector<std::string>> addresses;
            for (const auto& host : options.allowHosts) {
                try {
                    addresses.push_back(resolver.resolve(host.host));
                } catch (const Error& error) {
                    throw Error(fmt::format("--allow-host {}: {}", host.host, error.what()));
                }
                std::string list;
                for (const auto& address : addresses.back())
                    list += (list.empty() ? "" : ", ") + address;
                plan.warnings.push_back(fmt::format(
                    "--allow-host {} is pinned to {} as resolved now; if its addresses change, "
                    "run this command again",
                    host.host, list));
            }
            plan.objects.push_back({resources::networkPolicies(),
                                    buildAllowHostsPinned(ns, options.allowHosts, addresses)});
            pinned = addresses;
        }
    }
    return plan;
}
}  // namespace

std::vector<PlannedObject> optionalProjectObjects(const std::string& namespaceName) {
    auto named = [&](const kube::ResourceRef& ref, const std::string& kind, const char* name) {
        return PlannedObject{
            ref, {{"kind", kind}, {"metadata", {{"name", name}, {"namespace", namespaceName}}}}};
    };
    const std::string policy = kRuntimeClassPolicyPrefix + namespaceName;
    auto cluster = [&](const kube::ResourceRef& ref, const std::string& kind) {
        return PlannedObject{ref, {{"kind", kind}, {"metadata", {{"name", policy}}}}};
    };
    return {cluster(validatingAdmissionPolicyBindings(), "ValidatingAdmissionPolicyBinding"),
            cluster(validatingAdmissionPolicies(), "ValidatingAdmissionPolicy"),
            named(resources::ciliumNetworkPolicies(), "CiliumNetworkPolicy", kAllowHostsName),
            named(resources::egressFirewalls(), "EgressFirewall", kEgressFirewallName),
            named(resources::networkPolicies(), "NetworkPolicy", kAllowHostsName),
            named(resources::networkPolicies(), "NetworkPolicy", kAllowCidrsName),
            named(resources::networkPolicies(), "NetworkPolicy", kAllowDnsName)};
}

bool isSandboxProject(const nlohmann::json& namespaceObject) {
    const auto& metadata = namespaceObject.value("metadata", nlohmann::json::object());
    const auto& labels = metadata.value("labels", nlohmann::json::object());
    return labels.value(kSandboxProjectLabel, "") == "true";
}

}  // namespace rossoctl::model
