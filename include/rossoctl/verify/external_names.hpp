#pragma once
// The ExternalName Services a pod resolves through the cluster DNS (attack 54, T2): kube-dns
// answers `NAME.NS.svc.<zone>` with the Service's externalName as a CNAME, whatever namespace
// it is in, so a token hex-encoded into those labels reaches a pod that may only ask kube-dns
// as well as one in an env value does. Evidence names the Service, never the value.
#include <string>
#include <vector>

#include "rossoctl/kube/client.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

struct ExternalNameService {
    std::string ns;
    std::string name;
    std::string externalName;
};

// Any Service's name (attack 57, T5/T5b): the kubelet writes those of the pod's namespace into its
// env (service links, `NAME_SERVICE_HOST`), and the cluster DNS answers a cluster IP's PTR with
// `NAME.NS.svc.<zone>`, for every namespace.
struct ServiceName {
    std::string ns;
    std::string name;
    std::string clusterIP;           // "" or "None": no PTR of its own
    std::vector<std::string> ports;  // its ports' names (`NAME_SERVICE_PORT_<PORT>` in env)
    // (name, number) of each port in spec order: SRV answers give the number (attack 58 T7).
    std::vector<std::pair<std::string, int>> portNumbers = {};
    // externalIPs, loadBalancerIP and the load balancer's ingress IPs: service proxies route
    // these from pods too, whoever else has the address (review 58 G2).
    std::vector<std::string> claimedAddresses = {};
    // Its cluster IPs (clusterIPs, else clusterIP; "None" is none): one a family.
    size_t clusterIPCount = 0;
    // Not a Service but a pod's hostname that headless Service `publishedBy` publishes ("" for a
    // Service): its address (clusterIP) answers PTR with it.
    std::string pod = {};
    std::string publishedBy = {};
};

struct ExternalNames {
    bool read = false;          // false: not looked at (nothing is said of them)
    std::string ns;             // the pod's namespace
    std::string problem;        // why the pod's namespace's Services could not be listed ("": read)
    std::string othersProblem;  // why other namespaces' were not listed ("": every one read)
    std::vector<ExternalNameService> services;  // by namespace, then name
    std::vector<ServiceName> names;             // every Service read, by namespace, then name
    std::string version;  // the list's resourceVersion: the end replays what was written since
    bool served = true;   // false: the server has no Services (their list is not found)
};

// One Service of a list into `names` (its name, ports, addresses; its externalName if any);
// sortNames puts them back in namespace and name order.
void addService(const nlohmann::json& service, ExternalNames& names);
void sortNames(ExternalNames& names);

// One list of every namespace's Services; when that is refused, one of the pod's namespace.
ExternalNames readExternalNames(kube::Client& client, const std::string& ns);

// Each externalName, its labels joined, and the labels of a namespace's Services (and of all
// read) joined in name order, judged by credentialShape: fail or unproven as a value the pod
// reads. The pod's namespace unread is unproven; other namespaces unread is said, not judged.
Finding externalNamesStatic(const ExternalNames& names, const std::string& clusterIssuer);

// Every Service's name read (service_names.cpp), alone, its '-' pieces joined, and the names of
// a namespace's Services (and of all read) joined in name order (as text sorts and as numbers
// count), cluster IP order and, for the pod's own namespace when `pod` leaves service links on,
// the order of its env: fail or unproven as a value the pod reads. Unread lists are said by
// externalNamesStatic.
// `egress` gives the pods' hostnames that headless Services publish (attack 65 T1), searched as
// Service names are; a headless Service read while the pods were not listed is unproven.
Finding serviceNamesStatic(const nlohmann::json& pod, const ExternalNames& names,
                           const std::string& clusterIssuer);
Finding serviceNamesStatic(const nlohmann::json& pod, const ExternalNames& names,
                           const EgressInputs& egress, const std::string& clusterIssuer);

// The names and externalNames evidence may print, for redactedWithin.
std::vector<std::string> externalNameStrings(const ExternalNames& names);

}  // namespace rossoctl::verify
