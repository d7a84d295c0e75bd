#include "rossoctl/kube/resource.hpp"

#include <string>

namespace rossoctl::kube {

namespace {

bool isUnreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

void appendSegment(std::string& path, std::string_view segment) {
    if (segment.empty()) return;
    path += '/';
    path += urlEncode(segment);
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

std::string resourcePath(const ResourceRef& ref, std::string_view ns, std::string_view name,
                         std::string_view subresource) {
    std::string path =
        ref.group.empty() ? "/api/" + ref.version : "/apis/" + ref.group + "/" + ref.version;
    // A cluster-scoped resource never takes a namespace segment, whatever the caller passes.
    if (ref.namespaced && !ns.empty()) {
        path += "/namespaces";
        appendSegment(path, ns);
    }
    appendSegment(path, ref.resource);
    appendSegment(path, name);
    appendSegment(path, subresource);
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
