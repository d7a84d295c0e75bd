// A token spelled out by the names of Services (attack 57): the kubelet writes every Service of
// the pod's namespace into its env unless the pod sets enableServiceLinks false (T5:
// `S00_<HEX>_SERVICE_HOST`), and the cluster DNS answers a cluster IP's PTR with the Service's
// name, whatever its namespace (T5b). Evidence names the Services, never the value.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "credential_forms.hpp"
#include "credential_places.hpp"
#include "json_access.hpp"
#include "rossoctl/verify/external_names.hpp"
#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

// What the kubelet makes of a Service's name for its env: upper case, '-' as '_'.
std::string serviceEnvName(const std::string& name) {
    std::string env = name;
    for (char& c : env)
        c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return env;
}

// An IPv4 cluster IP as a number for PTR order (a pod walks the addresses); others after, as
// text.
std::pair<int, std::string> ipOrder(const std::string& ip) {
    std::array<unsigned, 4> octets{};
    char tail = 0;
    if (std::sscanf(ip.c_str(), "%u.%u.%u.%u%c", &octets[0], &octets[1], &octets[2], &octets[3],
                    &tail) == 4 &&
        std::all_of(octets.begin(), octets.end(), [](unsigned o) { return o < 256; }))
        return {0, fmt::format("{:03}{:03}{:03}{:03}", octets[0], octets[1], octets[2], octets[3])};
    return {1, ip};
}

bool hasAddress(const ServiceName& service) {
    return !service.clusterIP.empty() && service.clusterIP != "None";
}

// The Services read and the pods' hostnames their headless ones publish, by namespace and name.
std::vector<ServiceName> withPublishedHostnames(const ExternalNames& read,
                                                const EgressInputs& egress) {
    std::vector<ServiceName> names = read.names;
    std::set<std::pair<std::string, std::string>> headless;
    for (const auto& service : read.names)
        if (service.pod.empty() && service.clusterIP == "None")
            headless.emplace(service.ns, service.name);
    for (const auto& published : egress.podHostnames)
        if (headless.contains({published.ns, published.subdomain})) {
            names.push_back({published.ns, published.hostname, published.address, {}});
            names.back().pod = published.pod;
            names.back().publishedBy = published.subdomain;
        }
    std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) {
        return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
    });
    return names;
}

// "3 Services", "3 Services and 18 pod hostnames" of a group.
template <typename Names>
std::string countedNames(const Names& group) {
    size_t hostnames = 0;
    for (const auto& name : group) hostnames += name->pod.empty() ? 0 : 1;
    const size_t services = group.size() - hostnames;
    std::string counted = fmt::format("{} Service{}", services, services == 1 ? "" : "s");
    if (hostnames > 0)
        counted += fmt::format(" and {} pod hostname{}", hostnames, hostnames == 1 ? "" : "s");
    return counted;
}

}  // namespace

Finding serviceNamesStatic(const json& pod, const ExternalNames& names,
                           const std::string& clusterIssuer) {
    return serviceNamesStatic(pod, names, EgressInputs(), clusterIssuer);
}

Finding serviceNamesStatic(const json& pod, const ExternalNames& read, const EgressInputs& egress,
                           const std::string& clusterIssuer) {
    Finding finding;
    finding.verdict = Verdict::Pass;
    if (!read.read) return finding;
    ExternalNames names;
    names.ns = read.ns;
    names.othersProblem = read.othersProblem;
    names.names = withPublishedHostnames(read, egress);
    const size_t headless = static_cast<size_t>(
        std::count_if(read.names.begin(), read.names.end(),
                      [](const ServiceName& service) { return service.clusterIP == "None"; }));
    if (headless > 0 && !egress.hostListenersUnread.empty()) {
        finding.verdict = Verdict::Unproven;
        finding.evidence.push_back(fmt::format(
            "the pod hostnames that {} headless Service{} publish through the cluster DNS were "
            "not read ({})",
            headless, headless == 1 ? "" : "s", egress.hostListenersUnread));
    }
    const json& links = at(at(pod, "spec"), "enableServiceLinks");
    const bool serviceLinks = !(links.is_boolean() && !links.get<bool>());  // unset: true
    auto readThrough = [&](const std::string& ns) {
        return serviceLinks && ns == names.ns
                   ? "in the pod's env (service links) and as PTR answers of the cluster DNS"
                   : "as PTR answers of the cluster DNS";
    };
    size_t inflateBudget = kInflatedPerPod;
    auto worstOfJoins = [&](const std::vector<std::string>& joins) {
        CredentialShape worst;
        for (const auto& join : joins) {
            auto shape = credentialShape(join, clusterIssuer, inflateBudget);
            if (worstOf(worst.verdict, shape.verdict) != worst.verdict) worst = std::move(shape);
        }
        return worst;
    };
    auto note = [&](const std::string& where, const char* verb, const CredentialShape& shape) {
        finding.verdict = worstOf(finding.verdict, shape.verdict);
        finding.evidence.push_back(
            fmt::format("{} {} {}", redactedCredentials(where), verb, shape.what));
    };
    std::set<std::string> judged;  // namespaces with a Service name already not a pass
    for (const auto& service : names.names) {
        auto shape = credentialShape(service.name, clusterIssuer, inflateBudget);
        if (shape.verdict == Verdict::Pass)
            shape = worstOfJoins(joinedPieces(nonEmptyPieces(service.name, '-')));
        if (shape.verdict == Verdict::Pass) continue;
        judged.insert(service.ns);
        note(service.pod.empty()
                 ? fmt::format("the name of Service {}/{} (read {})", service.ns, service.name,
                               readThrough(service.ns))
                 // Not the pod's name: a StatefulSet's is its hostname (review 67 M3).
                 : fmt::format("the hostname of a pod of namespace {} (published by headless "
                               "Service {}, read as PTR answers of the cluster DNS)",
                               service.ns, service.publishedBy),
             "holds", shape);
    }
    // With service links, a Service's port names are env names too (`S_SERVICE_PORT_<NAME>`),
    // in env order: each Service's, and the namespace's in the env's order of Services.
    std::vector<std::pair<std::string, std::vector<std::string>>> linkedPorts;  // env order
    for (const auto& service : names.names) {
        if (!serviceLinks || service.ns != names.ns || service.ports.empty()) continue;
        std::vector<std::string> ports = service.ports;
        std::sort(ports.begin(), ports.end(), [](const auto& a, const auto& b) {
            return serviceEnvName(a) < serviceEnvName(b);
        });
        std::vector<std::string> pieces;
        for (const auto& port : ports)
            for (auto& piece : nonEmptyPieces(port, '-')) pieces.push_back(std::move(piece));
        const auto shape = worstOfJoins(joinedPieces(pieces));
        if (shape.verdict != Verdict::Pass) {
            judged.insert(service.ns);
            note(fmt::format("the port names of Service {}/{} (in the pod's env through service "
                             "links) joined",
                             service.ns, service.name),
                 "hold", shape);
        }
        linkedPorts.emplace_back(serviceEnvName(service.name), std::move(pieces));
    }
    if (linkedPorts.size() > 1 && !judged.contains(names.ns)) {
        std::sort(linkedPorts.begin(), linkedPorts.end());
        std::vector<std::string> pieces;
        for (auto& [env, ports] : linkedPorts)
            for (auto& piece : ports) pieces.push_back(std::move(piece));
        const auto shape = worstOfJoins(joinedPieces(pieces));
        if (shape.verdict != Verdict::Pass)
            note(fmt::format("the port names of namespace {}'s {} Services (in the pod's env "
                             "through service links) joined in env order",
                             names.ns, linkedPorts.size()),
                 "hold", shape);
    }
    // Split over several Services: their names' pieces in each order a pod reads them.
    using Group = std::vector<const ServiceName*>;
    auto judgeJoined = [&](Group group, bool envOrder, const std::string& where) {
        constexpr size_t kLongestJoin = 1024 * 1024;
        if (group.size() < 2) return;
        std::vector<std::vector<std::string>> orders;
        auto add = [&](const Group& ordered) {
            std::vector<std::string> pieces;
            size_t length = 0;
            for (const auto* service : ordered) {
                length += service->name.size();
                for (auto& piece : nonEmptyPieces(service->name, '-'))
                    pieces.push_back(std::move(piece));
            }
            if (length <= kLongestJoin &&
                std::find(orders.begin(), orders.end(), pieces) == orders.end())
                orders.push_back(std::move(pieces));
        };
        auto namespaceThen = [](const auto& before) {
            return [before](const ServiceName* a, const ServiceName* b) {
                return a->ns == b->ns ? before(*a, *b) : a->ns < b->ns;
            };
        };
        add(group);  // as listed: namespace, then name as text sorts
        std::stable_sort(group.begin(), group.end(),
                         namespaceThen([](const auto& a, const auto& b) {
                             return numberedBefore(a.name, b.name);
                         }));
        add(group);
        if (envOrder) {
            std::stable_sort(group.begin(), group.end(), [](const auto* a, const auto* b) {
                return serviceEnvName(a->name) < serviceEnvName(b->name);
            });
            add(group);
        }
        Group addressed;
        for (const auto* service : group)
            if (hasAddress(*service)) addressed.push_back(service);
        std::stable_sort(addressed.begin(), addressed.end(), [](const auto* a, const auto* b) {
            return ipOrder(a->clusterIP) < ipOrder(b->clusterIP);
        });
        if (addressed.size() > 1) add(addressed);
        std::vector<std::string> joins;
        for (const auto& pieces : orders)
            for (auto& join : joinedPieces(pieces)) joins.push_back(std::move(join));
        const auto shape = worstOfJoins(joins);
        if (shape.verdict != Verdict::Pass) note(where, "hold", shape);
    };
    std::map<std::string, Group> byNamespace;
    for (const auto& service : names.names) byNamespace[service.ns].push_back(&service);
    for (const auto& [ns, group] : byNamespace)
        if (!judged.contains(ns))
            judgeJoined(group, serviceLinks && ns == names.ns,
                        fmt::format("the names of namespace {}'s {} (read {}) joined in "
                                    "{} order",
                                    ns, countedNames(group), readThrough(ns),
                                    serviceLinks && ns == names.ns ? "name, cluster IP or env"
                                                                   : "name or cluster IP"));
    // The hostnames one headless Service publishes, apart from the names around them.
    std::map<std::pair<std::string, std::string>, Group> byPublisher;
    for (const auto& name : names.names)
        if (!name.pod.empty()) byPublisher[{name.ns, name.publishedBy}].push_back(&name);
    for (const auto& [publisher, group] : byPublisher)
        if (!judged.contains(publisher.first))
            judgeJoined(group, false,
                        fmt::format("the hostnames of {} pods that headless Service {}/{} "
                                    "publishes (read as PTR answers of the cluster DNS) joined in "
                                    "name or address order",
                                    group.size(), publisher.first, publisher.second));
    if (byNamespace.size() > 1 && judged.empty()) {
        Group all;
        for (const auto& service : names.names) all.push_back(&service);
        judgeJoined(all, false,
                    fmt::format("the names of all {} read (as PTR answers of the "
                                "cluster DNS) joined in cluster IP or namespace and name order",
                                countedNames(all)));
    }
    // Port numbers as bytes (attack 58 T7: 341 ports, 2 bytes each, read back through SRV
    // answers): each namespace's, in port-name order and as listed, two bytes or one per port.
    std::map<std::string, std::vector<const ServiceName*>> portsByNamespace;
    for (const auto& service : names.names)
        if (!service.portNumbers.empty()) portsByNamespace[service.ns].push_back(&service);
    for (const auto& [ns, group] : portsByNamespace) {
        if (judged.contains(ns)) continue;
        std::vector<std::pair<std::string, int>> listed;
        for (const auto* service : group)
            listed.insert(listed.end(), service->portNumbers.begin(), service->portNumbers.end());
        if (listed.size() < 2) continue;
        auto byName = listed;
        std::stable_sort(byName.begin(), byName.end(), [](const auto& a, const auto& b) {
            return numberedBefore(a.first, b.first);
        });
        std::vector<std::string> bytes;
        for (const auto* order : {&byName, &listed}) {
            std::string two, one;
            for (const auto& [name, number] : *order) {
                two += static_cast<char>((number >> 8) & 0xff);
                two += static_cast<char>(number & 0xff);
                one += static_cast<char>(number & 0xff);
            }
            bytes.push_back(std::move(two));
            bytes.push_back(std::move(one));
        }
        const auto shape = worstOfJoins(bytes);
        if (shape.verdict != Verdict::Pass)
            note(fmt::format("the port numbers of namespace {}'s {} Services (read as SRV answers "
                             "of the cluster DNS{}) as bytes in port-name or listed order",
                             ns, group.size(),
                             serviceLinks && ns == names.ns ? ", and in the pod's env" : ""),
                 "hold", shape);
    }
    // Any encoding of them at all: the pod's namespace's port numbers and cluster IPs, which its
    // editors choose (review 58 T7x, T12), count against the numbers' budget with the pod's own
    // (review 59 #6). N ports of D distinct numbers carry at most the D numbers (16 bits each)
    // and which one each port has (log2 D bits): a hundred Sandboxes' Services all on 8080
    // carry two bytes. A chosen cluster IP carries up to 20 bits (the API server's largest
    // service range, /12 or /108), one for each family.
    size_t ports = 0, addresses = 0;
    std::set<int> distinct;
    for (const auto& service : names.names)
        if (service.ns == names.ns) {
            ports += service.portNumbers.size();
            for (const auto& [name, number] : service.portNumbers) distinct.insert(number);
            addresses += service.clusterIPCount;
        }
    const double bits =
        16.0 * static_cast<double>(distinct.size()) +
        (distinct.size() > 1 ? static_cast<double>(ports) * std::log2(distinct.size()) : 0.0) +
        20.0 * static_cast<double>(addresses);
    const size_t serviceBytes = static_cast<size_t>(std::ceil(bits / 8));
    size_t specBytes = 0;
    std::string specListed;
    for (const auto& [where, bytes] : specNumberChannels(pod)) {
        specBytes += bytes;
        specListed += fmt::format(", {} bytes in {}", bytes, where);
    }
    // Past the budget alone, the pod's own numbers are the token check's to say.
    if (serviceBytes > 0 && specBytes <= kMostNumberBytes &&
        serviceBytes + specBytes > kMostNumberBytes) {
        finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
        finding.evidence.push_back(fmt::format(
            "the port numbers and cluster IPs of namespace {}'s Services, which its editors "
            "choose and the pod reads through the cluster DNS, can carry {} bytes ({} ports of {} "
            "numbers, {} cluster IPs){}: more than the {} a credential cannot fit in, and an "
            "encoding of them other than their bytes is not searched",
            names.ns, serviceBytes + specBytes, ports, distinct.size(), addresses,
            specBytes == 0 ? std::string()
                           : fmt::format(" with the pod's own numbers{}", specListed),
            kMostNumberBytes));
    }
    std::vector<const ServiceName*> everyName;
    for (const auto& name : names.names) everyName.push_back(&name);
    if (finding.verdict == Verdict::Pass && !names.names.empty())
        finding.evidence.push_back(fmt::format(
            "no credential by shape (alone, its '-' pieces joined, or a namespace's Service "
            "names joined in name, cluster IP or env order; their port numbers as bytes) in the "
            "names of {} of {}, "
            "which the pod reads as PTR answers of the cluster DNS{}",
            countedNames(everyName),
            names.othersProblem.empty() ? std::string("every namespace")
                                        : fmt::format("namespace {}", names.ns),
            serviceLinks ? fmt::format(" and, namespace {}'s with their port names, in its env "
                                       "(service links)",
                                       names.ns)
                         : std::string()));
    return finding;
}

}  // namespace rossoctl::verify
