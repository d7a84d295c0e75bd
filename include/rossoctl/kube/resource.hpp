#pragma once
// ResourceRef names a REST collection (group, version, plural); paths are built from it.
#include <string>
#include <string_view>

namespace rossoctl::kube {

struct ResourceRef {
    std::string group;  // "" for the core group
    std::string version;
    std::string resource;  // plural
    std::string kind;
    bool namespaced = true;

    std::string apiVersion() const { return group.empty() ? version : group + "/" + version; }
    // "sandboxes.agents.x-k8s.io", the way kubectl names a resource in messages.
    std::string qualifiedName() const { return group.empty() ? resource : resource + "." + group; }
};

// Why `segment` cannot name one object or namespace in a REST path ("" when it can): empty,
// "." or "..", or holding '/' or '%' (Kubernetes refuses such names too).
std::string invalidPathSegment(std::string_view segment);

// /api/v1/namespaces/NS/pods or /apis/G/V/...: a collection (list, watch, create); ns "" =
// every namespace. A non-empty ns that is not a valid segment is refused (Error).
std::string collectionPath(const ResourceRef& ref, std::string_view ns);

// /api/v1/namespaces/NS/pods/NAME[/SUB]: one object (get, put, patch, delete, exec, ...). An
// empty or invalid name, or a namespaced ref without a valid ns, throws Error: a verb on one
// object must never become a verb on the whole collection (DELETE = deletecollection).
std::string objectPath(const ResourceRef& ref, std::string_view ns, std::string_view name,
                       std::string_view subresource = {});

// Percent-encodes a query value.
std::string urlEncode(std::string_view value);

namespace resources {
ResourceRef namespaces();
ResourceRef pods();
ResourceRef services();
ResourceRef serviceAccounts();
ResourceRef configMaps();
ResourceRef secrets();
ResourceRef persistentVolumeClaims();
ResourceRef resourceQuotas();
ResourceRef limitRanges();
ResourceRef events();
ResourceRef runtimeClasses();
ResourceRef deployments();
ResourceRef statefulSets();
ResourceRef jobs();
ResourceRef networkPolicies();
ResourceRef customResourceDefinitions();
ResourceRef selfSubjectAccessReviews();
// agents.x-k8s.io Sandbox at the given served version (v1beta1 or v1alpha1).
ResourceRef sandboxes(const std::string& version);
ResourceRef sandboxWarmPools(const std::string& version);
ResourceRef agentRuntimes();
ResourceRef projectRequests();
ResourceRef projects();
ResourceRef egressFirewalls();
ResourceRef ciliumNetworkPolicies();
}  // namespace resources

}  // namespace rossoctl::kube
