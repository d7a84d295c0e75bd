// The static halves of the four checks: pure functions of the pod, its ServiceAccount, the
// namespace's NetworkPolicies and ResourceQuotas, and the Sandbox.
#include <fmt/format.h>

#include <algorithm>

#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;

std::string verdictName(Verdict verdict) {
    switch (verdict) {
        case Verdict::Pass:
            return "pass";
        case Verdict::Fail:
            return "fail";
        case Verdict::Unproven:
            return "unproven";
    }
    return "unproven";
}

Verdict combine(Verdict staticVerdict, Verdict liveVerdict) {
    if (staticVerdict == Verdict::Fail || liveVerdict == Verdict::Fail) return Verdict::Fail;
    if (staticVerdict == Verdict::Pass && liveVerdict == Verdict::Pass) return Verdict::Pass;
    return Verdict::Unproven;
}

std::string checkId(CheckKind kind) {
    switch (kind) {
        case CheckKind::ServiceAccountToken:
            return "service-account-token";
        case CheckKind::Egress:
            return "egress";
        case CheckKind::Limits:
            return "limits";
        case CheckKind::NothingSurvives:
            return "nothing-survives";
    }
    return "";
}

std::string checkTitle(CheckKind kind) {
    switch (kind) {
        case CheckKind::ServiceAccountToken:
            return "no service-account token";
        case CheckKind::Egress:
            return "egress denied";
        case CheckKind::Limits:
            return "limits enforced";
        case CheckKind::NothingSurvives:
            return "nothing survives";
    }
    return "";
}

namespace {

const json& nullJson() {
    static const json value;
    return value;
}
const json& emptyArray() {
    static const json value = json::array();
    return value;
}

// The member `key` of object, or null.
const json& at(const json& object, const char* key) {
    if (!object.is_object()) return nullJson();
    auto it = object.find(key);
    return it == object.end() ? nullJson() : *it;
}
const json& arrayAt(const json& object, const char* key) {
    const json& value = at(object, key);
    return value.is_array() ? value : emptyArray();
}
std::string stringAt(const json& object, const char* key, const std::string& fallback = "") {
    const json& value = at(object, key);
    return value.is_string() ? value.get<std::string>() : fallback;
}

const json& podSpec(const json& pod) {
    return at(pod, "spec");
}
std::string podName(const json& pod) {
    return stringAt(at(pod, "metadata"), "name", "?");
}

std::vector<json> allContainers(const json& pod) {
    std::vector<json> out;
    for (const char* key : {"initContainers", "containers"})
        for (const auto& container : arrayAt(podSpec(pod), key)) out.push_back(container);
    return out;
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator = ", ") {
    std::string out;
    for (const auto& part : parts) out += (out.empty() ? "" : separator) + part;
    return out;
}

// "app=x, tier in (a,b), !legacy"; empty for a selector that matches everything.
std::string describeSelector(const json& selector) {
    std::vector<std::string> parts;
    if (at(selector, "matchLabels").is_object())
        for (const auto& [key, value] : selector["matchLabels"].items())
            parts.push_back(key + "=" + (value.is_string() ? value.get<std::string>() : ""));
    for (const auto& expression : arrayAt(selector, "matchExpressions")) {
        const std::string key = stringAt(expression, "key");
        const std::string op = stringAt(expression, "operator");
        std::vector<std::string> values;
        for (const auto& value : arrayAt(expression, "values"))
            values.push_back(value.is_string() ? value.get<std::string>() : value.dump());
        if (op == "Exists")
            parts.push_back(key);
        else if (op == "DoesNotExist")
            parts.push_back("!" + key);
        else
            parts.push_back(
                fmt::format("{} {} ({})", key, op == "In" ? "in" : "notin", joined(values, ",")));
    }
    return joined(parts);
}

std::string describePeer(const json& peer) {
    if (at(peer, "ipBlock").is_object()) {
        std::string text = stringAt(peer["ipBlock"], "cidr", "?");
        std::vector<std::string> except;
        for (const auto& cidr : arrayAt(peer["ipBlock"], "except"))
            except.push_back(cidr.get<std::string>());
        return except.empty() ? text : text + " except " + joined(except);
    }
    const json& pods = at(peer, "podSelector");
    const json& namespaces = at(peer, "namespaceSelector");
    const std::string podText = pods.is_object() ? describeSelector(pods) : "";
    const std::string namespaceText = namespaces.is_object() ? describeSelector(namespaces) : "";
    const std::string podPart = podText.empty() ? "all pods" : "pods " + podText;
    if (!namespaces.is_object()) return podPart + " in this namespace";
    return podPart +
           (namespaceText.empty() ? " in all namespaces" : " in namespaces " + namespaceText);
}

std::string describePort(const json& port) {
    std::string text = stringAt(port, "protocol", "TCP") + "/";
    const json& number = at(port, "port");
    if (number.is_null()) return text + "any";
    text += number.is_string() ? number.get<std::string>() : number.dump();
    if (at(port, "endPort").is_number()) text += "-" + port["endPort"].dump();
    return text;
}

bool everyAddress(const json& peer) {
    const json& block = at(peer, "ipBlock");
    if (!block.is_object() || !arrayAt(block, "except").empty()) return false;
    const std::string cidr = stringAt(block, "cidr");
    return cidr == "0.0.0.0/0" || cidr == "::/0";
}

std::vector<std::string> policyTypes(const json& policy) {
    std::vector<std::string> types;
    for (const auto& type : arrayAt(at(policy, "spec"), "policyTypes"))
        types.push_back(type.get<std::string>());
    if (!at(at(policy, "spec"), "policyTypes").is_array()) {
        // The API server's defaulting: Ingress always, Egress when egress rules exist.
        types.push_back("Ingress");
        if (!arrayAt(at(policy, "spec"), "egress").empty()) types.push_back("Egress");
    }
    return types;
}

}  // namespace

Finding tokenStatic(const json& pod, const std::optional<json>& serviceAccount) {
    Finding finding;
    bool holds = true;
    const json& podSetting = at(podSpec(pod), "automountServiceAccountToken");
    const std::string accountName = stringAt(podSpec(pod), "serviceAccountName", "default");
    if (podSetting.is_boolean()) {
        holds = !podSetting.get<bool>();
        finding.evidence.push_back(fmt::format("pod {} sets automountServiceAccountToken: {}",
                                               podName(pod), podSetting.get<bool>()));
    } else if (!serviceAccount) {
        holds = false;
        finding.evidence.push_back(fmt::format(
            "pod leaves automountServiceAccountToken unset and serviceaccount/{} was not found "
            "(the default is to automount)",
            accountName));
    } else {
        const json& accountSetting = at(*serviceAccount, "automountServiceAccountToken");
        holds = accountSetting.is_boolean() && !accountSetting.get<bool>();
        finding.evidence.push_back(
            accountSetting.is_boolean()
                ? fmt::format("pod leaves automountServiceAccountToken unset; serviceaccount/{} "
                              "sets it to {}",
                              accountName, accountSetting.get<bool>())
                : fmt::format("automountServiceAccountToken is unset on the pod and on "
                              "serviceaccount/{}: the token is automounted by default",
                              accountName));
    }
    bool projected = false;
    for (const auto& volume : arrayAt(podSpec(pod), "volumes")) {
        for (const auto& source : arrayAt(at(volume, "projected"), "sources")) {
            if (!at(source, "serviceAccountToken").is_object()) continue;
            projected = true;
            finding.evidence.push_back(fmt::format(
                "volume {} projects a serviceAccountToken (path {})", stringAt(volume, "name", "?"),
                stringAt(source["serviceAccountToken"], "path", "?")));
        }
    }
    if (!projected) finding.evidence.push_back("no projected serviceAccountToken volume");
    finding.verdict = holds && !projected ? Verdict::Pass : Verdict::Fail;
    return finding;
}

bool labelSelectorMatches(const json& selector, const json& labels) {
    if (!selector.is_object()) return false;  // a null selector selects nothing
    auto labelValue = [&](const std::string& key) -> std::optional<std::string> {
        const json& value = at(labels, key.c_str());
        if (!value.is_string()) return std::nullopt;
        return value.get<std::string>();
    };
    if (at(selector, "matchLabels").is_object())
        for (const auto& [key, value] : selector["matchLabels"].items())
            if (!value.is_string() || labelValue(key) != value.get<std::string>()) return false;
    for (const auto& expression : arrayAt(selector, "matchExpressions")) {
        const auto actual = labelValue(stringAt(expression, "key"));
        const std::string op = stringAt(expression, "operator");
        const json& values = arrayAt(expression, "values");
        const bool listed =
            actual && std::find(values.begin(), values.end(), json(*actual)) != values.end();
        if (op == "In") {
            if (!listed) return false;
        } else if (op == "NotIn") {
            if (listed) return false;
        } else if (op == "Exists") {
            if (!actual) return false;
        } else if (op == "DoesNotExist") {
            if (actual) return false;
        } else {
            return false;  // an operator we do not know cannot be shown to select the pod
        }
    }
    return true;
}

Finding egressStatic(const json& pod, const json& networkPolicies) {
    Finding finding;
    const json& labels = at(at(pod, "metadata"), "labels");
    int isolating = 0;
    bool allowsEverything = false;
    for (const auto& policy : networkPolicies.is_array() ? networkPolicies : emptyArray()) {
        const std::string name = "networkpolicy/" + stringAt(at(policy, "metadata"), "name", "?");
        if (!labelSelectorMatches(at(at(policy, "spec"), "podSelector"), labels)) continue;
        const auto types = policyTypes(policy);
        if (std::find(types.begin(), types.end(), "Egress") == types.end()) continue;
        ++isolating;
        const json& rules = arrayAt(at(policy, "spec"), "egress");
        if (rules.empty())
            finding.evidence.push_back(name + " selects the pod and denies all egress");
        for (const auto& rule : rules) {
            std::vector<std::string> ports;
            for (const auto& port : arrayAt(rule, "ports")) ports.push_back(describePort(port));
            std::vector<std::string> peers;
            bool anyAddress = arrayAt(rule, "to").empty();
            for (const auto& peer : arrayAt(rule, "to")) {
                peers.push_back(describePeer(peer));
                anyAddress = anyAddress || everyAddress(peer);
            }
            const std::string portText = ports.empty() ? "any port" : joined(ports);
            const std::string peerText = peers.empty() ? "any destination" : joined(peers, "; ");
            finding.evidence.push_back(
                fmt::format("{} allows egress to {} on {}", name, peerText, portText));
            if (anyAddress && ports.empty()) {
                allowsEverything = true;
                finding.evidence.push_back(name +
                                           " allows all egress: a rule with every "
                                           "destination and every port");
            }
        }
    }
    if (isolating == 0) {
        finding.evidence.insert(
            finding.evidence.begin(),
            fmt::format("no NetworkPolicy selecting pod {} has Egress in policyTypes ({} "
                        "policies in the namespace): egress is not isolated",
                        podName(pod), networkPolicies.is_array() ? networkPolicies.size() : 0));
    }
    finding.verdict = isolating > 0 && !allowsEverything ? Verdict::Pass : Verdict::Fail;
    return finding;
}

Finding limitsStatic(const json& pod, const json& sandbox, const json& resourceQuotas) {
    Finding finding;
    bool holds = true;
    for (const auto& container : allContainers(pod)) {
        const json& limits = at(at(container, "resources"), "limits");
        std::vector<std::string> missing;
        for (const char* resource : {"cpu", "memory"})
            if (!at(limits, resource).is_string() && !at(limits, resource).is_number())
                missing.push_back(resource);
        const std::string name = stringAt(container, "name", "?");
        if (missing.empty()) {
            finding.evidence.push_back(
                fmt::format("container {}: limits cpu={} memory={}", name,
                            stringAt(limits, "cpu", limits["cpu"].dump()),
                            stringAt(limits, "memory", limits["memory"].dump())));
        } else {
            holds = false;
            finding.evidence.push_back(
                fmt::format("container {} has no {} limit", name, joined(missing, " or ")));
        }
    }
    const json& deadline = at(podSpec(pod), "activeDeadlineSeconds");
    std::string shutdown = stringAt(at(sandbox, "spec"), "shutdownTime");
    if (shutdown.empty()) shutdown = stringAt(at(at(sandbox, "spec"), "lifecycle"), "shutdownTime");
    if (deadline.is_number())
        finding.evidence.push_back(fmt::format("pod activeDeadlineSeconds: {}", deadline.dump()));
    if (!shutdown.empty()) finding.evidence.push_back("sandbox shutdownTime: " + shutdown);
    if (!deadline.is_number() && shutdown.empty()) {
        holds = false;
        finding.evidence.push_back(
            "no deadline: neither pod activeDeadlineSeconds nor the Sandbox's shutdownTime is set");
    }
    int quotas = 0;
    for (const auto& quota : resourceQuotas.is_array() ? resourceQuotas : emptyArray()) {
        const json& hard = at(at(quota, "spec"), "hard");
        if (!hard.is_object() || hard.empty()) continue;
        ++quotas;
        std::vector<std::string> limits;
        for (const auto& [resource, value] : hard.items())
            limits.push_back(resource + "=" +
                             (value.is_string() ? value.get<std::string>() : value.dump()));
        std::vector<std::string> scopes;
        for (const auto& scope : arrayAt(at(quota, "spec"), "scopes"))
            scopes.push_back(scope.get<std::string>());
        finding.evidence.push_back(
            fmt::format("resourcequota/{}: {}{}", stringAt(at(quota, "metadata"), "name", "?"),
                        joined(limits), scopes.empty() ? "" : " (scopes " + joined(scopes) + ")"));
    }
    if (quotas == 0) {
        holds = false;
        finding.evidence.push_back("no ResourceQuota with hard limits in the namespace");
    }
    finding.verdict = holds ? Verdict::Pass : Verdict::Fail;
    return finding;
}

Finding nothingSurvivesStatic(const json& pod) {
    Finding finding;
    bool holds = true;
    std::vector<std::string> ephemeral;
    for (const auto& volume : arrayAt(podSpec(pod), "volumes")) {
        const std::string name = stringAt(volume, "name", "?");
        if (at(volume, "persistentVolumeClaim").is_object()) {
            holds = false;
            finding.evidence.push_back(
                fmt::format("volume {} is persistentVolumeClaim {}: its data outlives the pod",
                            name, stringAt(volume["persistentVolumeClaim"], "claimName", "?")));
        } else if (at(volume, "hostPath").is_object()) {
            holds = false;
            finding.evidence.push_back(fmt::format("volume {} is hostPath {}: the node keeps it",
                                                   name,
                                                   stringAt(volume["hostPath"], "path", "?")));
        } else {
            std::string type = "other";
            for (const auto& [key, value] : volume.items())
                if (key != "name") type = key;
            ephemeral.push_back(fmt::format("{} ({})", name, type));
        }
    }
    if (holds)
        finding.evidence.push_back(ephemeral.empty()
                                       ? "no volumes: no PVC or hostPath"
                                       : "no PVC or hostPath; volumes: " + joined(ephemeral));
    finding.verdict = holds ? Verdict::Pass : Verdict::Fail;
    return finding;
}

}  // namespace rossoctl::verify
