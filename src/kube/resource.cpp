#include "rossoctl/kube/resource.hpp"

#include <fmt/format.h>

#include <string>

#include "rossoctl/errors.hpp"

namespace rossoctl::kube {

namespace {

bool isUnreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

void appendSegment(std::string& path, std::string_view segment) {
    path += '/';
    path += urlEncode(segment);
}

std::string groupVersionPath(const ResourceRef& ref) {
    return ref.group.empty() ? "/api/" + ref.version : "/apis/" + ref.group + "/" + ref.version;
}

// A segment from a server or a user, shown in an error: kept short and printable.
std::string quoted(std::string_view segment) {
    std::string shown;
    for (unsigned char c : segment.substr(0, 64))
        shown += c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
    return "\"" + shown + (segment.size() > 64 ? "...\"" : "\"");
}

// The namespace part of a path, checked: "" for a cluster-scoped ref whatever ns is.
void appendNamespace(std::string& path, const ResourceRef& ref, std::string_view ns,
                     bool required) {
    if (!ref.namespaced) return;
    if (ns.empty() && !required) return;
    if (const std::string why = invalidPathSegment(ns); !why.empty())
        throw Error(fmt::format("refused: namespace {} for {} {}", quoted(ns), ref.resource, why));
    path += "/namespaces";
    appendSegment(path, ns);
}

ResourceRef ref(std::string group, std::string version, std::string resource, std::string kind,
                bool namespaced) {
    return ResourceRef{std::move(group), std::move(version), std::move(resource), std::move(kind),
                       namespaced};
}

}  // namespace

std::string urlEncode(std::string_view value) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(value.size());
    for (unsigned char c : value) {
        if (isUnreserved(c)) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 0x0F];
        }
    }
    return out;
}

std::string invalidPathSegment(std::string_view segment) {
    if (segment.empty()) return "is empty";
    if (segment == "." || segment == "..") return "is not a name";
    // Other bytes are percent-encoded into the one segment (the server answers 404 for them).
    if (segment.find_first_of("/%") != std::string_view::npos) return "holds '/' or '%'";
    return {};
}

std::string collectionPath(const ResourceRef& ref, std::string_view ns) {
    std::string path = groupVersionPath(ref);
    appendNamespace(path, ref, ns, /*required=*/false);
    appendSegment(path, ref.resource);
    return path;
}

std::string objectPath(const ResourceRef& ref, std::string_view ns, std::string_view name,
                       std::string_view subresource) {
    if (const std::string why = invalidPathSegment(name); !why.empty())
        throw Error(fmt::format("refused: {} name {} {}", ref.kind, quoted(name), why));
    std::string path = groupVersionPath(ref);
    appendNamespace(path, ref, ns, /*required=*/true);
    appendSegment(path, ref.resource);
    appendSegment(path, name);
    if (!subresource.empty()) appendSegment(path, subresource);
    return path;
}

namespace resources {

ResourceRef namespaces() {
    return ref("", "v1", "namespaces", "Namespace", false);
}
ResourceRef pods() {
    return ref("", "v1", "pods", "Pod", true);
}
ResourceRef services() {
    return ref("", "v1", "services", "Service", true);
}
ResourceRef serviceAccounts() {
    return ref("", "v1", "serviceaccounts", "ServiceAccount", true);
}
ResourceRef configMaps() {
    return ref("", "v1", "configmaps", "ConfigMap", true);
}
ResourceRef secrets() {
    return ref("", "v1", "secrets", "Secret", true);
}
ResourceRef persistentVolumeClaims() {
    return ref("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true);
}
ResourceRef resourceQuotas() {
    return ref("", "v1", "resourcequotas", "ResourceQuota", true);
}
ResourceRef limitRanges() {
    return ref("", "v1", "limitranges", "LimitRange", true);
}
ResourceRef events() {
    return ref("", "v1", "events", "Event", true);
}
ResourceRef runtimeClasses() {
    return ref("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", false);
}
ResourceRef deployments() {
    return ref("apps", "v1", "deployments", "Deployment", true);
}
ResourceRef statefulSets() {
    return ref("apps", "v1", "statefulsets", "StatefulSet", true);
}
ResourceRef jobs() {
    return ref("batch", "v1", "jobs", "Job", true);
}
ResourceRef networkPolicies() {
    return ref("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", true);
}
ResourceRef customResourceDefinitions() {
    return ref("apiextensions.k8s.io", "v1", "customresourcedefinitions",
               "CustomResourceDefinition", false);
}
ResourceRef selfSubjectAccessReviews() {
    return ref("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview",
               false);
}
ResourceRef sandboxes(const std::string& version) {
    return ref("agents.x-k8s.io", version, "sandboxes", "Sandbox", true);
}
ResourceRef sandboxWarmPools(const std::string& version) {
    return ref("extensions.agents.x-k8s.io", version, "sandboxwarmpools", "SandboxWarmPool", true);
}
ResourceRef agentRuntimes() {
    return ref("agent.rossoctl.dev", "v1alpha1", "agentruntimes", "AgentRuntime", true);
}
ResourceRef projectRequests() {
    return ref("project.openshift.io", "v1", "projectrequests", "ProjectRequest", false);
}
ResourceRef projects() {
    return ref("project.openshift.io", "v1", "projects", "Project", false);
}
ResourceRef egressFirewalls() {
    return ref("k8s.ovn.org", "v1", "egressfirewalls", "EgressFirewall", true);
}
ResourceRef ciliumNetworkPolicies() {
    return ref("cilium.io", "v2", "ciliumnetworkpolicies", "CiliumNetworkPolicy", true);
}

}  // namespace resources

}  // namespace rossoctl::kube
