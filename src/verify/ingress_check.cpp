// Ingress as a way out: a policy that lets a source outside the project connect in to the
// pod opens a channel both ways, whatever the egress rules say (attack 56 N1).
#include <fmt/format.h>

#include "json_access.hpp"
#include "rossoctl/model/egress.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

// Ingress is in a policy's types unless policyTypes lists only others (the API server defaults
// it in always).
bool hasIngressType(const json& spec) {
    const json& types = at(spec, "policyTypes");
    if (!types.is_array()) return true;
    for (const auto& type : types)
        if (type == "Ingress") return true;
    return false;
}

// Who a peer of a `from` lets in, or "" for pods of the policy's own namespace.
std::string outsidePeer(const json& peer) {
    if (!at(peer, "ipBlock").is_null())
        return fmt::format("the addresses {}", stringAt(at(peer, "ipBlock"), "cidr", "?"));
    if (!at(peer, "namespaceSelector").is_null())
        return fmt::format("pods of the namespaces {} selects",
                           at(peer, "namespaceSelector").dump());
    if (at(peer, "podSelector").is_null()) return "a peer not understood";
    return "";
}

}  // namespace

std::vector<std::string> ingressOpenings(const json& pod, const json& networkPolicies) {
    std::vector<std::string> openings;
    if (!networkPolicies.is_array()) return openings;
    const json& labels = at(at(pod, "metadata"), "labels");
    for (const auto& policy : networkPolicies) {
        const json& spec = at(policy, "spec");
        if (!hasIngressType(spec) ||
            !model::labelSelectorMatches(at(spec, "podSelector"),
                                         labels.is_object() ? labels : json::object()))
            continue;
        const std::string name = stringAt(at(policy, "metadata"), "name", "?");
        std::size_t index = 0;
        for (const auto& rule : arrayAt(spec, "ingress")) {
            ++index;
            const json& from = at(rule, "from");
            std::vector<std::string> who;
            if (!from.is_array() || from.empty()) {
                who.push_back("any source (no from)");
            } else {
                for (const auto& peer : from)
                    if (auto outside = outsidePeer(peer); !outside.empty())
                        who.push_back(std::move(outside));
            }
            for (const auto& source : who)
                openings.push_back(
                    fmt::format("networkpolicy/{} ingress rule {} lets {} connect in to the pod: a "
                                "connection in carries data out as one out does",
                                name, index, source));
        }
    }
    return openings;
}

}  // namespace rossoctl::verify
