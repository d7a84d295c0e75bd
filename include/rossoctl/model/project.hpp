#pragma once
// A sandbox project: the namespace and the quota, limits and egress policies that make it a
// safe place for sandboxes (DESIGN.md section 3). Builders only; commands do the writing.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/kube/resource.hpp"
#include "rossoctl/model/egress_gate.hpp"
#include "rossoctl/model/host_resolver.hpp"

namespace rossoctl::model {

inline constexpr const char* kSandboxProjectLabel = "rossoctl.dev/sandbox-project";
inline constexpr const char* kDefaultLifetimeAnnotation = "rossoctl.dev/default-lifetime";
// The RuntimeClass every pod of the project must run with (project create --runtime-class);
// sandbox verify judges kernel isolation against it.
inline constexpr const char* kRuntimeClassAnnotation = "rossoctl.dev/runtime-class";
inline constexpr const char* kRuntimeClassPolicyPrefix = "rossoctl-runtime-class-";
// The registries images may come from (project create --allow-registry), comma-separated.
inline constexpr const char* kAllowedRegistriesAnnotation = "rossoctl.dev/allowed-registries";
inline constexpr const char* kQuotaName = "sandbox-quota";
inline constexpr const char* kLimitRangeName = "sandbox-limits";
inline constexpr const char* kDefaultDenyName = "default-deny";
inline constexpr const char* kAllowDnsName = "allow-dns";
inline constexpr const char* kAllowHostsName = "allow-hosts";
inline constexpr const char* kAllowCidrsName = "allow-cidrs";
inline constexpr const char* kEgressFirewallName = "default";  // OVN allows only this name

enum class EgressMechanism { Auto, NetworkPolicy, EgressFirewall, Cilium };

// --allow-host H[:PORT]: a DNS name, TCP to PORT (every port when none is given).
struct AllowedHost {
    std::string host;
    std::optional<int> port;
};

struct ProjectOptions {
    std::string name;
    std::string cpu = "4";
    std::string memory = "8Gi";
    std::string pods = "20";
    std::string storage = "10Gi";
    std::string persistentVolumeClaims = "5";
    std::string containerCpu = "500m";
    std::string containerMemory = "512Mi";
    std::string maxContainerCpu;     // empty: the smaller of 2 and --cpu
    std::string maxContainerMemory;  // empty: the smaller of 4Gi and --memory
    std::string defaultLifetime = "24h";
    std::vector<AllowedHost> allowHosts;
    std::vector<std::string> allowCidrs;  // canonical CIDRs
    bool allowDns = true;
    std::string podSecurity = "restricted";
    std::string runtimeClass;                   // non-empty: recorded and enforced by admission
    std::string gateImage = kDefaultGateImage;  // the sandboxes' egress gate: recorded
    std::vector<std::string> allowRegistries;   // "docker.io", "ghcr.io/team": recorded
    EgressMechanism egress = EgressMechanism::Auto;
    bool openshift = false;  // project.openshift.io served: ProjectRequest, OpenShift DNS pods
};

// Input checks (all throw UsageError with one line naming the flag).
AllowedHost parseAllowedHost(const std::string& text);
// IPv4 or IPv6, with or without /PREFIX (a bare address is /32 or /128); host bits must be 0.
std::string parseCidr(const std::string& text);
EgressMechanism parseEgressMechanism(const std::string& text);
std::string egressMechanismName(EgressMechanism mechanism);
// Project names: DNS-1123 labels that are not kube-*, openshift-* or default.
void validateProjectName(const std::string& name);
// Checks every field and fills the container maxima when they are empty.
void validateProjectOptions(ProjectOptions& options);

// One object to write; createOnly objects (ProjectRequest) are POSTed once, never applied.
struct PlannedObject {
    kube::ResourceRef ref;
    nlohmann::json object;
    bool createOnly = false;
    std::string displayName() const;  // "networkpolicy/allow-dns"
};

struct ProjectPlan {
    std::vector<PlannedObject> objects;  // in write order
    EgressMechanism mechanism = EgressMechanism::NetworkPolicy;
    std::vector<std::string> warnings;
    std::vector<std::string> egressSummary;  // one line per destination allowed
};

// mechanism must not be Auto. The resolver is used only for the NetworkPolicy mechanism.
ProjectPlan planProject(const ProjectOptions& options, EgressMechanism mechanism,
                        HostResolver& resolver);

// Objects a project may carry that are optional: what project delete and the prune of a
// re-run look for, in delete order (host rules first).
std::vector<PlannedObject> optionalProjectObjects(const std::string& namespaceName);

// Labelled rossoctl.dev/sandbox-project=true: a namespace rossoctl made (or was told to adopt).
bool isSandboxProject(const nlohmann::json& namespaceObject);

// Builders, each carrying app.kubernetes.io/managed-by=rossoctl.
nlohmann::json buildProjectNamespace(const ProjectOptions& options);
nlohmann::json buildProjectRequest(const ProjectOptions& options);
nlohmann::json buildResourceQuota(const ProjectOptions& options);
nlohmann::json buildLimitRange(const ProjectOptions& options);
nlohmann::json buildDefaultDeny(const std::string& namespaceName);
nlohmann::json buildAllowDns(const std::string& namespaceName, bool openshift);
nlohmann::json buildAllowCidrs(const std::string& namespaceName,
                               const std::vector<std::string>& cidrs);
// Plain NetworkPolicy: every resolved address pinned as /32 or /128, port-scoped.
nlohmann::json buildAllowHostsPinned(const std::string& namespaceName,
                                     const std::vector<AllowedHost>& hosts,
                                     const std::vector<std::vector<std::string>>& addresses);
// The NetworkPolicy half of the EgressFirewall mechanism: the ports of the hosts, to
// addresses outside private and link-local ranges (the EgressFirewall narrows it to names).
nlohmann::json buildAllowHostsForFirewall(const std::string& namespaceName,
                                          const std::vector<AllowedHost>& hosts);
nlohmann::json buildEgressFirewall(const std::string& namespaceName,
                                   const std::vector<AllowedHost>& hosts,
                                   const std::vector<std::string>& cidrs);
// A ValidatingAdmissionPolicy (and its binding, to the project's namespace only) that refuses
// a pod whose runtimeClassName is not options.runtimeClass.
nlohmann::json buildRuntimeClassPolicy(const ProjectOptions& options);
nlohmann::json buildRuntimeClassPolicyBinding(const ProjectOptions& options);
nlohmann::json buildCiliumAllowHosts(const std::string& namespaceName,
                                     const std::vector<AllowedHost>& hosts);

// What a NetworkPolicy, EgressFirewall or CiliumNetworkPolicy allows, one line per rule,
// for summaries and `project describe`.
std::vector<std::string> describePolicy(const nlohmann::json& object);

}  // namespace rossoctl::model
