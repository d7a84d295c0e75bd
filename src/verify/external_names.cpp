// A token in the externalName of ExternalName Services, read by the pod as CNAMEs from the
// cluster DNS it may ask (attack 54, T2). Evidence names the Service, never the value.
#include "rossoctl/verify/external_names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "credential_forms.hpp"
#include "credential_places.hpp"
#include "json_access.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

// "atk-t2" before "atk-t10": digits compared as numbers, the rest as text.
bool numberedBefore(const std::string& a, const std::string& b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit(static_cast<unsigned char>(a[i])) &&
            std::isdigit(static_cast<unsigned char>(b[j]))) {
            size_t iEnd = i, jEnd = j;
            while (iEnd < a.size() && std::isdigit(static_cast<unsigned char>(a[iEnd]))) ++iEnd;
            while (jEnd < b.size() && std::isdigit(static_cast<unsigned char>(b[jEnd]))) ++jEnd;
            std::string x = a.substr(i, iEnd - i), y = b.substr(j, jEnd - j);
            x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
            y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
            if (x.size() != y.size()) return x.size() < y.size();
            if (x != y) return x < y;
            i = iEnd, j = jEnd;
            continue;
        }
        if (a[i] != b[j]) return a[i] < b[j];
        ++i, ++j;
    }
    return a.size() - i < b.size() - j;
}

void addService(const json& service, ExternalNames& names) {
    const std::string& ns = names.ns;
    const json& meta = at(service, "metadata");
    names.names.push_back({stringAt(meta, "namespace", ns),
                           stringAt(meta, "name"),
                           stringAt(at(service, "spec"), "clusterIP"),
                           {}});
    for (const auto& port : arrayAt(at(service, "spec"), "ports")) {
        const std::string name = stringAt(port, "name");
        if (!name.empty()) names.names.back().ports.push_back(name);
        if (const json& number = at(port, "port"); number.is_number_integer())
            names.names.back().portNumbers.emplace_back(name, number.get<int>());
    }
    auto& count = names.names.back().clusterIPCount;
    for (const auto& ip : arrayAt(at(service, "spec"), "clusterIPs"))
        if (ip.is_string() && !ip.get<std::string>().empty() && ip != "None") ++count;
    if (count == 0 && !names.names.back().clusterIP.empty() &&
        names.names.back().clusterIP != "None")
        count = 1;
    auto& claimed = names.names.back().claimedAddresses;
    for (const auto& address : arrayAt(at(service, "spec"), "externalIPs"))
        if (address.is_string()) claimed.push_back(address.get<std::string>());
    if (const std::string address = stringAt(at(service, "spec"), "loadBalancerIP");
        !address.empty())
        claimed.push_back(address);
    for (const auto& ingress : arrayAt(at(at(service, "status"), "loadBalancer"), "ingress"))
        if (const std::string address = stringAt(ingress, "ip"); !address.empty())
            claimed.push_back(address);
    // Any Service with one, whatever its type says: reading more is never a false pass.
    const json& externalName = at(at(service, "spec"), "externalName");
    if (!externalName.is_string() || externalName.get<std::string>().empty()) return;
    const json& metadata = at(service, "metadata");
    names.services.push_back({stringAt(metadata, "namespace", ns), stringAt(metadata, "name"),
                              externalName.get<std::string>()});
}

void sortNames(ExternalNames& names) {
    std::sort(names.services.begin(), names.services.end(), [](const auto& a, const auto& b) {
        return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
    });
    std::sort(names.names.begin(), names.names.end(), [](const auto& a, const auto& b) {
        return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
    });
}

ExternalNames readExternalNames(kube::Client& client, const std::string& ns) {
    ExternalNames names;
    names.read = true;
    names.ns = ns;
    const auto services = kube::resources::services();
    json items = json::array();
    try {
        const json listed = client.list(services, "");
        items = listed.value("items", json::array());
        names.version = stringAt(at(listed, "metadata"), "resourceVersion");
    } catch (const kube::ApiError& everyNamespace) {
        names.othersProblem = everyNamespace.what();
        try {
            const json listed = client.list(services, ns);
            items = listed.value("items", json::array());
            names.version = stringAt(at(listed, "metadata"), "resourceVersion");
        } catch (const kube::ApiError& own) {
            // Not served (a server without Services) is none; any refusal leaves them unread.
            if (!own.isNotFound()) names.problem = own.what();
            names.served = !own.isNotFound();
        }
    }
    if (!items.is_array()) {
        // A list that is no list is not "no Services" (review 58 H1).
        if (names.problem.empty()) names.problem = "the API server's Service list has no items";
        return names;
    }
    for (const auto& service : items) addService(service, names);
    sortNames(names);
    return names;
}

Finding externalNamesStatic(const ExternalNames& names, const std::string& clusterIssuer) {
    Finding finding;
    finding.verdict = Verdict::Pass;
    if (!names.read) return finding;
    auto note = [&](const std::string& where, const char* verb, const CredentialShape& shape) {
        finding.verdict = worstOf(finding.verdict, shape.verdict);
        finding.evidence.push_back(
            fmt::format("{} {} {}", redactedCredentials(where), verb, shape.what));
    };
    auto worstOfJoins = [&](const std::vector<std::string>& joins, size_t& budget) {
        CredentialShape worst;
        for (const auto& join : joins) {
            auto shape = credentialShape(join, clusterIssuer, budget);
            if (worstOf(worst.verdict, shape.verdict) != worst.verdict) worst = std::move(shape);
        }
        return worst;
    };
    size_t inflateBudget = kInflatedPerPod;
    std::set<std::string> judged;  // namespaces with a Service already not a pass
    for (const auto& service : names.services) {
        const std::string where =
            fmt::format("Service {}/{} externalName", service.ns, service.name);
        auto shape = credentialShape(service.externalName, clusterIssuer, inflateBudget);
        const char* verb = "holds";
        if (shape.verdict == Verdict::Pass) {
            shape = worstOfJoins(joinedPieces(nonEmptyPieces(service.externalName, '.')),
                                 inflateBudget);
            verb = "labels joined hold";
        }
        if (shape.verdict == Verdict::Pass) continue;
        judged.insert(service.ns);
        note(where, verb, shape);
    }
    // Split over several Services: their labels in name order (as text sorts and as numbers
    // count, atk-t2 before atk-t10), a namespace's, then every one read, namespace by namespace.
    std::map<std::string, std::vector<const ExternalNameService*>> byNamespace;
    for (const auto& service : names.services) byNamespace[service.ns].push_back(&service);
    auto judgeJoined = [&](std::vector<const ExternalNameService*> group,
                           const std::string& where) {
        constexpr size_t kLongestJoin = 1024 * 1024;  // 4,000 names of 253 characters
        if (group.size() < 2) return;
        std::vector<std::vector<std::string>> orders(2);
        size_t length = 0;
        for (int order = 0; order < 2; ++order) {
            if (order == 1)
                std::stable_sort(group.begin(), group.end(), [](const auto* a, const auto* b) {
                    return a->ns == b->ns ? numberedBefore(a->name, b->name) : a->ns < b->ns;
                });
            for (const auto* service : group) {
                length += service->externalName.size();
                for (auto& label : nonEmptyPieces(service->externalName, '.'))
                    orders[order].push_back(std::move(label));
            }
        }
        if (length > 2 * kLongestJoin) return;
        std::vector<std::string> joins = joinedPieces(orders[0]);
        if (orders[1] != orders[0])
            for (auto& join : joinedPieces(orders[1])) joins.push_back(std::move(join));
        const auto shape = worstOfJoins(joins, inflateBudget);
        if (shape.verdict != Verdict::Pass) note(where, "hold", shape);
    };
    for (const auto& [ns, group] : byNamespace)
        if (!judged.contains(ns))
            judgeJoined(group, fmt::format("the externalNames of namespace {}'s {} Services "
                                           "joined in name order",
                                           ns, group.size()));
    if (byNamespace.size() > 1 && judged.empty()) {
        std::vector<const ExternalNameService*> all;
        for (const auto& service : names.services) all.push_back(&service);
        judgeJoined(all, fmt::format("the externalNames of all {} Services read joined in "
                                     "namespace and name order",
                                     all.size()));
    }
    const std::string scope = names.othersProblem.empty() ? std::string("every namespace")
                                                          : fmt::format("namespace {}", names.ns);
    if (!names.problem.empty()) {
        finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
        finding.evidence.push_back(
            fmt::format("the Services of namespace {} could not be listed ({}): the pod reads "
                        "their names (in its env through service links, and as PTR answers) and "
                        "externalNames through the cluster DNS, so no credential in them is "
                        "ruled out",
                        names.ns, names.problem));
    } else if (finding.verdict == Verdict::Pass) {
        finding.evidence.push_back(fmt::format(
            "no credential by shape (encoded, reversed or not, its labels joined, or the "
            "labels of a namespace's Services joined in name order) in the externalName of {} "
            "ExternalName Service{} of {}, which the pod resolves through the cluster DNS",
            names.services.size(), names.services.size() == 1 ? "" : "s", scope));
    }
    // A stated limit, not unproven: a project user may not list other namespaces' Services, and
    // unproven would leave every such user's token check unpassable for what only someone with
    // rights in another namespace can put there.
    if (!names.othersProblem.empty())
        finding.evidence.push_back(fmt::format(
            "Services of namespaces other than {} were not read (listing Services in all "
            "namespaces: {}): the pod reads their names and externalNames through the cluster "
            "DNS too, so a credential there is not seen",
            names.ns, names.othersProblem));
    return finding;
}

std::vector<std::string> externalNameStrings(const ExternalNames& names) {
    std::vector<std::string> strings;
    for (const auto& service : names.names) strings.push_back(service.name);
    for (const auto& service : names.services) {
        strings.push_back(service.name);
        strings.push_back(service.externalName);
        for (auto& label : nonEmptyPieces(service.externalName, '.'))
            strings.push_back(std::move(label));
    }
    return strings;
}

}  // namespace rossoctl::verify
