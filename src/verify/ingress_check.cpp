// Ingress as a way out: a policy that lets a source outside the project connect in to the
// pod opens a channel both ways, whatever the egress rules say (attack 56 N1), and so does one
// that lets in a pod of the namespace whose own egress is open (attack 57 N1b), or would be
// once a pod is labelled to match it (attack 58 N3). A pod's own labels change too: egress a
// policy gives a pod labelled otherwise is the sandbox's once it is (attack 63 P1, E1).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

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
    const auto types = model::policyTypes(spec);
    return std::find(types.begin(), types.end(), "Ingress") != types.end();
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

// Why `other`, once connected in, is a relay out ("" when its egress stays within the project).
std::string relayReason(const json& other, const json& networkPolicies,
                        const EgressInputs& inputs) {
    const auto effective = model::effectiveEgress(other, networkPolicies, inputs.ciliumPolicies);
    if (!effective.isolated) return "no policy isolates its egress";
    const auto excess = model::beyondAllowance(effective, inputs.allowance, std::nullopt);
    if (!excess.empty())
        return fmt::format(
            "{} allows it {}", excess.front().source,
            excess.front().podsText.empty() ? excess.front().text : excess.front().podsText);
    if (!effective.unevaluable.empty()) return effective.unevaluable.front() + " (not evaluated)";
    return "";
}

// Labels a pod could be given to match every one of `selectors` (matchLabels, In, NotIn,
// Exists, DoesNotExist, key by key), or nullopt when they cannot all hold.
std::optional<json> labelsMatchingAll(const std::vector<json>& selectors) {
    struct Wanted {
        std::optional<std::vector<std::string>> in;  // allowed values; none: any
        std::vector<std::string> notIn;
        bool present = false, absent = false;
    };
    std::map<std::string, Wanted> keys;
    auto allow = [](Wanted& wanted, std::vector<std::string> values) {
        if (wanted.in) {
            std::vector<std::string> both;
            for (const auto& value : *wanted.in)
                if (std::find(values.begin(), values.end(), value) != values.end())
                    both.push_back(value);
            values = std::move(both);
        }
        wanted.in = std::move(values);
        wanted.present = true;
    };
    for (const auto& selector : selectors) {
        const json& matchLabels = at(selector, "matchLabels");
        if (matchLabels.is_object())
            for (const auto& [key, value] : matchLabels.items())
                if (value.is_string()) allow(keys[key], {value.get<std::string>()});
        for (const auto& expression : arrayAt(selector, "matchExpressions")) {
            const std::string key = stringAt(expression, "key", "");
            const std::string op = stringAt(expression, "operator", "");
            std::vector<std::string> values;
            for (const auto& value : arrayAt(expression, "values"))
                if (value.is_string()) values.push_back(value.get<std::string>());
            Wanted& wanted = keys[key];
            if (op == "In")
                allow(wanted, values);
            else if (op == "NotIn")
                wanted.notIn.insert(wanted.notIn.end(), values.begin(), values.end());
            else if (op == "Exists")
                wanted.present = true;
            else if (op == "DoesNotExist")
                wanted.absent = true;
            else
                return std::nullopt;  // an operator the API server refuses: nothing to build
        }
    }
    json labels = json::object();
    for (auto& [key, wanted] : keys) {
        auto excluded = [&](const std::string& value) {
            return std::find(wanted.notIn.begin(), wanted.notIn.end(), value) != wanted.notIn.end();
        };
        if (wanted.absent) {
            if (wanted.present) return std::nullopt;
            continue;
        }
        if (wanted.in) {
            const auto it = std::find_if_not(wanted.in->begin(), wanted.in->end(), excluded);
            if (it == wanted.in->end()) return std::nullopt;
            labels[key] = *it;
        } else if (wanted.present) {
            std::string value = "relay";
            while (excluded(value)) value += "x";
            labels[key] = value;
        }
    }
    return labels;
}

bool selectsEveryPod(const json& policy) {
    const json& selector = at(at(policy, "spec"), "podSelector");
    return selector.is_object() && at(selector, "matchLabels").empty() &&
           at(selector, "matchExpressions").empty();
}

// Some policy with Egress in its types selects every pod: no label set leaves a pod out.
bool egressIsolatesEveryPod(const json& networkPolicies) {
    for (const auto& policy : networkPolicies) {
        const auto types = model::policyTypes(at(policy, "spec"));
        if (std::find(types.begin(), types.end(), "Egress") != types.end() &&
            selectsEveryPod(policy))
            return true;
    }
    return false;
}

// A pod of the namespace that `peer` lets in once someone makes it: its labels match the peer
// and another policy's pod selector, whose egress may open it (attack 58 N3: pod labels change,
// so a rule with no such pod today is a standing opening). "" when none could relay out.
std::string possibleRelay(const json& peerSelector, const std::string& ns,
                          const json& networkPolicies, const EgressInputs& inputs) {
    // Egress isolation that does not cover every pod leaves some label set free (review 58 N3b).
    if (!egressIsolatesEveryPod(networkPolicies))
        return "no policy isolates the egress of every pod of the namespace, so a pod labelled "
               "to match it could have open egress";
    std::vector<std::vector<json>> candidates{{peerSelector}};
    for (const auto& policy : networkPolicies)
        candidates.push_back({peerSelector, at(at(policy, "spec"), "podSelector")});
    for (const auto& selectors : candidates) {
        const auto labels = labelsMatchingAll(selectors);
        if (!labels || !model::labelSelectorMatches(peerSelector, *labels)) continue;
        json pod = {{"metadata", {{"namespace", ns}, {"labels", *labels}}}};
        if (auto reason = relayReason(pod, networkPolicies, inputs); !reason.empty())
            return fmt::format(
                "a pod labelled {} would be let in, and its own egress is open "
                "({})",
                labels->dump(), reason);
    }
    return "";
}

}  // namespace

IngressOpenings ingressOpenings(const json& pod, const json& networkPolicies,
                                const EgressInputs& inputs) {
    IngressOpenings openings;
    const json& labels = at(at(pod, "metadata"), "labels");
    bool ciliumIngress = false;  // a Cilium policy with ingress rules for the pod (a doubt)
    // Cilium's ingress rules add to what NetworkPolicies let in, and their peers (entities,
    // CIDRs, endpoints of any namespace) are not evaluated here (review 58 C1).
    if (inputs.ciliumPolicies.is_array())
        for (const auto& policy : inputs.ciliumPolicies)
            for (const auto& [name, spec] : model::ciliumSpecsSelecting(
                     policy, labels.is_object() ? labels : json::object(), true)) {
                const std::size_t rules = arrayAt(spec, "ingress").size();
                ciliumIngress = ciliumIngress || rules > 0;  // deny-only isolates nothing
                if (rules > 0)
                    openings.doubts.push_back(fmt::format(
                        "{} has {} ingress rule{} for the pod{}; verify does not evaluate "
                        "Cilium's ingress peers, so whether they let a source outside the "
                        "project connect in (a channel both ways) is not known",
                        name, rules, rules == 1 ? "" : "s",
                        at(spec, "endpointSelector").is_object()
                            ? ""
                            : " (it has no endpointSelector, so it may select every pod)"));
            }
    if (!networkPolicies.is_array()) return openings;
    const std::string self = stringAt(at(pod, "metadata"), "name", "");
    bool ingressIsolated = ciliumIngress;
    for (const auto& policy : networkPolicies) {
        const json& spec = at(policy, "spec");
        if (!hasIngressType(spec) ||
            !model::labelSelectorMatches(at(spec, "podSelector"),
                                         labels.is_object() ? labels : json::object()))
            continue;
        ingressIsolated = true;
        const std::string name = stringAt(at(policy, "metadata"), "name", "?");
        std::size_t index = 0;
        for (const auto& rule : arrayAt(spec, "ingress")) {
            ++index;
            const json& from = at(rule, "from");
            const std::string where = fmt::format("networkpolicy/{} ingress rule {}", name, index);
            std::vector<std::string> who;
            if (!from.is_array() || from.empty()) {
                who.push_back("any source (no from)");
            } else {
                for (const auto& peer : from) {
                    if (auto outside = outsidePeer(peer); !outside.empty()) {
                        who.push_back(std::move(outside));
                        continue;
                    }
                    // Pods of the namespace: each is a relay if its own egress is open.
                    if (!inputs.namespacePods) {
                        openings.doubts.push_back(fmt::format(
                            "{} lets pods {} of the namespace connect in to the pod; the "
                            "namespace's pods were not read, so whether one relays out is not "
                            "known",
                            where, at(peer, "podSelector").dump()));
                        continue;
                    }
                    const std::size_t before = who.size();
                    for (const auto& other : arrayAt(*inputs.namespacePods, "items")) {
                        const json& metadata = at(other, "metadata");
                        const std::string otherName = stringAt(metadata, "name", "?");
                        const json& otherLabels = at(metadata, "labels");
                        if (otherName == self ||
                            !model::labelSelectorMatches(
                                at(peer, "podSelector"),
                                otherLabels.is_object() ? otherLabels : json::object()))
                            continue;
                        if (auto reason = relayReason(other, networkPolicies, inputs);
                            !reason.empty())
                            who.push_back(fmt::format("pod {}, whose own egress is open ({}),",
                                                      otherName, reason));
                    }
                    if (who.size() != before) continue;
                    if (auto relay = possibleRelay(at(peer, "podSelector"),
                                                   stringAt(at(pod, "metadata"), "namespace", ""),
                                                   networkPolicies, inputs);
                        !relay.empty())
                        openings.doubts.push_back(fmt::format(
                            "{} lets pods {} of the namespace connect in to the pod; none is a "
                            "relay now, but {}: the namespace's editors may label or make one at "
                            "any time",
                            where, at(peer, "podSelector").dump(), relay));
                }
            }
            for (const auto& source : who)
                openings.open.push_back(
                    fmt::format("{} lets {} connect in to the pod: a connection in carries data "
                                "out as one out does",
                                where, source));
        }
    }
    // No policy with Ingress selects the pod: every pod of the cluster may connect in (attack
    // 59 A1: a tenant narrowed default-deny to Egress).
    if (!ingressIsolated)
        openings.open.push_back(fmt::format(
            "no NetworkPolicy selecting pod {} has Ingress in policyTypes ({} policies in the "
            "namespace): any pod of the cluster may connect in to it, and a connection in carries "
            "data out as one out does",
            self.empty() ? "?" : self, networkPolicies.size()));
    return openings;
}

std::string labelledEgressOpening(const json& pod, const json& networkPolicies,
                                  const EgressInputs& inputs) {
    if (!networkPolicies.is_array()) return "";
    // Selectors leave label sets out that no sample below builds (DoesNotExist, NotIn, a union
    // of policies): only a policy that selects every pod isolates whatever a pod's labels
    // become (attack 64 W1: a claimed spare was selected by none).
    if (!egressIsolatesEveryPod(networkPolicies))
        return "no policy with Egress in its types selects every pod of the namespace "
               "(podSelector {}): a pod labelled otherwise may be selected by none and have all "
               "egress, and labels change (a warm pool's claim takes labels off a spare: attack "
               "64 W1); not proven";
    const json& metadata = at(pod, "metadata");
    const json& labels = at(metadata, "labels");
    // No labels, and the labels that put a pod under each policy: NetworkPolicies' and
    // Cilium's (review 64 H5), each value of an In apart (the first may be denied elsewhere).
    std::vector<json> selectors{json::object()};
    const auto addSelector = [&](const json& selector) {
        selectors.push_back(selector);
        const json& expressions = at(selector, "matchExpressions");
        for (std::size_t i = 0; expressions.is_array() && i < expressions.size(); ++i)
            if (stringAt(expressions[i], "operator") == "In")
                for (const auto& value : arrayAt(expressions[i], "values")) {
                    if (selectors.size() >= 256) return;
                    json one = selector;
                    one["matchExpressions"][i]["values"] = json::array({value});
                    selectors.push_back(std::move(one));
                }
    };
    for (const auto& policy : networkPolicies) addSelector(at(at(policy, "spec"), "podSelector"));
    if (inputs.ciliumPolicies.is_array())
        for (const auto& policy : inputs.ciliumPolicies) {
            const json& spec = at(policy, "spec");
            if (at(spec, "endpointSelector").is_object()) addSelector(at(spec, "endpointSelector"));
            for (const auto& one : arrayAt(policy, "specs"))
                if (at(one, "endpointSelector").is_object())
                    addSelector(at(one, "endpointSelector"));
        }
    for (const auto& selector : selectors) {
        const auto wanted = labelsMatchingAll({selector});
        if (!wanted || (labels.is_object() && *wanted == labels)) continue;
        const json other = {
            {"metadata",
             {{"namespace", stringAt(metadata, "namespace", "")}, {"labels", *wanted}}}};
        if (auto reason = relayReason(other, networkPolicies, inputs); !reason.empty())
            return fmt::format(
                "a pod of the namespace labelled {} has egress beyond the project ({}): labels "
                "change (a project user's, the Sandbox's template's, a warm pool's claim that "
                "takes a spare: attack 63 P1, E1), so this pod may be put under it; not proven",
                wanted->dump(), reason);
    }
    return "";
}

}  // namespace rossoctl::verify
