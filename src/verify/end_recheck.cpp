// What verify judged, read again at its end: a verdict printed as pass must hold for what is
// there when it is printed, and a project user may change the policies, the Sandbox, the pod,
// its ServiceAccount and the Secrets it reads while verify runs (attack 62 N2, attack 63 T1,
// T2, E1, review 61 #7).
#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "json_access.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/app/sandbox_restart.hpp"
#include "rossoctl/kube/transport.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "verification.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

// Why an object could not be read again ("" when it was); an interrupted verify's error goes
// on up (its report is partial already).
template <typename Read>
std::string readAgain(Read&& read) {
    try {
        read();
    } catch (const kube::TransportError& error) {
        if (error.kind() == kube::TransportError::Kind::Cancelled) throw;
        return error.what();
    } catch (const kube::ApiError& error) {
        return error.what();
    }
    return "";
}

std::string resourceVersionOf(const json& object) {
    return json_access::stringAt(json_access::at(object, "metadata"), "resourceVersion");
}

}  // namespace

void Verification::recheckAtEnd(std::vector<CheckResult>& checks) {
    try {
        recheckPolicies(checks[1]);
        recheckJudgedPod(checks);
        recheckSandbox(checks);
        recheckTokenSources(checks[0]);
    } catch (const kube::TransportError& error) {
        if (error.kind() != kube::TransportError::Kind::Cancelled) throw;
    }
}

void Verification::recheckSandbox(std::vector<CheckResult>& checks) {
    std::optional<json> now;
    const std::string unread =
        readAgain([&] { now = client_.getIfExists(sandboxes_, ns_, name_); });
    std::string why;
    if (!unread.empty())
        why = fmt::format("sandbox {} could not be read again at the end ({})", name_, unread);
    else if (!now)
        why = fmt::format("sandbox {} is gone at the end of verify", name_);
    else if (json_access::at(*now, "spec") != json_access::at(inputs_.sandbox, "spec"))
        why = fmt::format("sandbox {}'s spec changed while verify ran (resourceVersion {} → {})",
                          name_, json_access::shortened(resourceVersionOf(inputs_.sandbox), 40),
                          json_access::shortened(resourceVersionOf(*now), 40));
    if (!why.empty()) {
        // Its template makes every pod from now on: each boundary judged by it is not proven.
        for (auto& check : checks)
            absorb(check.staticPart,
                   Finding{Verdict::Unproven,
                           {why + ": the pods it makes now were not judged (attack 63 T1; "
                                  "verify again)"},
                           ""});
        return;
    }
    // The pod it records and the pods it owns or selects, as at the start: a project user's
    // pod it now names, or one beside it, was not judged (review 64 H1, H2).
    const json& judged = replacementPod_.is_object() ? replacementPod_ : inputs_.pod;
    const std::string judgedName = json_access::podName(judged);
    std::vector<std::string> others;
    if (const std::string recorded = model::sandboxPodName(*now); recorded != judgedName)
        why = fmt::format("sandbox {} records pod {} at the end, not pod {} that verify judged",
                          name_, json_access::shortened(recorded, 253),
                          json_access::shortened(judgedName, 253));
    else if (const std::string unlisted = readAgain(
                 [&] { others = app::otherLivePods(*now, app::findSandboxPods(client_, *now)); });
             !unlisted.empty())
        why = fmt::format("sandbox {}'s pods could not be listed again at the end ({})", name_,
                          unlisted);
    else if (!others.empty())
        why = fmt::format("pod{} {} also owned by or selected for sandbox {} at the end",
                          others.size() == 1 ? "" : "s", json_access::fewOf(others), name_);
    if (why.empty()) return;
    for (auto& check : checks)
        absorb(check.livePart,
               Finding{
                   Verdict::Unproven, {why + ": what runs now was not judged (verify again)"}, ""});
}

void Verification::recheckTokenSources(CheckResult& token) {
    std::vector<std::string> changed;
    std::string unread;
    // Read at the start: the rest is unproven already, or over verify's budget, which these
    // reads share (a pod's spec must not make verify fetch thousands of objects).
    std::vector<const CredentialSource*> read;
    for (const auto& source : inputs_.credentialSources)
        if (source.object || source.problem == "not found") read.push_back(&source);
    std::size_t budget =
        kMostCredentialSources > read.size() ? kMostCredentialSources - read.size() : 0;
    if (read.size() > budget)
        unread = fmt::format("{} of the Secrets and ConfigMaps read ({})", read.size() - budget,
                             kSourceOverBudget);
    for (const CredentialSource* readSource : read) {
        if (budget == 0) break;
        --budget;
        const CredentialSource& source = *readSource;
        const bool secret = source.kind == "secret";
        std::optional<json> now;
        const std::string problem = readAgain([&] {
            now = client_.getIfExists(
                secret ? kube::resources::secrets() : kube::resources::configMaps(), ns_,
                source.name);
        });
        const std::string named = fmt::format("{} {}", secret ? "Secret" : "ConfigMap",
                                              json_access::shortened(source.name, 253));
        if (!problem.empty())
            unread = fmt::format("{} ({})", named, problem);
        else if (now.has_value() != source.object.has_value() ||
                 (now && resourceVersionOf(*now) != resourceVersionOf(*source.object)))
            changed.push_back(named);
    }
    // Its automountServiceAccountToken decides the next pod's token where the pod's does not.
    std::optional<json> account;
    const std::string accountName =
        json_access::stringAt(json_access::podSpec(inputs_.pod), "serviceAccountName", "default");
    const std::string accountUnread = readAgain([&] {
        account = client_.getIfExists(kube::resources::serviceAccounts(), ns_, accountName);
    });
    if (!accountUnread.empty())
        unread = fmt::format("ServiceAccount {} ({})", accountName, accountUnread);
    else if (account.has_value() != inputs_.serviceAccount.has_value() ||
             (account && resourceVersionOf(*account) != resourceVersionOf(*inputs_.serviceAccount)))
        changed.push_back("ServiceAccount " + json_access::shortened(accountName, 253));
    std::vector<std::string> lines;
    if (!changed.empty())
        lines.push_back(
            fmt::format("{} written while verify ran: what the pod reads there now was not "
                        "judged (attack 63 T2; verify again)",
                        json_access::fewOf(changed)));
    if (!unread.empty())
        lines.push_back(
            fmt::format("{} could not be read again at the end: one written while "
                        "verify ran is not ruled out",
                        unread));
    if (!lines.empty()) absorb(token.staticPart, Finding{Verdict::Unproven, lines, ""});
}

void Verification::recheckPolicies(CheckResult& egress) {
    const auto versions = [](const json& items) {
        std::map<std::string, std::string> byName;
        if (!items.is_array()) return byName;
        for (const auto& policy : items) {
            const json& metadata = json_access::at(policy, "metadata");
            byName[json_access::shortened(json_access::stringAt(metadata, "name", "?"), 253)] =
                json_access::stringAt(metadata, "resourceVersion");
        }
        return byName;
    };
    std::map<std::string, std::string> now;
    const std::string unread = readAgain([&] {
        now = versions(
            client_.list(kube::resources::networkPolicies(), ns_).value("items", json::array()));
    });
    if (!unread.empty()) {
        absorb(egress.staticPart,
               Finding{Verdict::Unproven,
                       {fmt::format("the namespace's NetworkPolicies could not be read again at "
                                    "the end ({}): one changed while verify ran is not ruled out",
                                    unread)},
                       ""});
        return;
    }
    const auto before = versions(inputs_.networkPolicies);
    std::vector<std::string> changed;
    for (const auto& [name, version] : now)
        if (!before.count(name))
            changed.push_back(name + " (added)");
        else if (before.at(name) != version)
            changed.push_back(name + " (changed)");
    for (const auto& [name, version] : before)
        if (!now.count(name)) changed.push_back(name + " (removed)");
    if (changed.empty()) return;
    absorb(egress.staticPart,
           Finding{Verdict::Unproven,
                   {fmt::format("NetworkPolicies of namespace {} changed while verify ran: {}; "
                                "the pods were judged against the ones read at the start, so "
                                "egress is not proven (verify again)",
                                ns_, json_access::fewOf(changed))},
                   ""});
}

void Verification::recheckJudgedPod(std::vector<CheckResult>& checks) {
    CheckResult& egress = checks[1];
    const bool replaced = replacementPod_.is_object();
    const json& judged = replaced ? replacementPod_ : inputs_.pod;
    const std::string name = json_access::podName(judged);
    const std::string ours = (replaced ? replacementProbe_ : egressSite_).container;
    // Not read, gone or replaced (a project user's own pod, which the controller adopts:
    // attack 64 R1), what runs now was not judged: by any check.
    const auto unjudged = [&](const std::string& line) {
        for (auto& check : checks) absorb(check.livePart, Finding{Verdict::Unproven, {line}, ""});
    };
    std::optional<json> now;
    if (const std::string unread =
            readAgain([&] { now = client_.getIfExists(kube::resources::pods(), ns_, name); });
        !unread.empty())
        return unjudged(fmt::format(
            "pod {} could not be read again at the end ({}): a change while verify ran (a "
            "container, a label, the pod replaced) is not ruled out",
            json_access::shortened(name, 253), unread));
    const auto uid = [](const json& pod) {
        return json_access::stringAt(json_access::at(pod, "metadata"), "uid");
    };
    if (!now || uid(*now) != uid(judged))
        return unjudged(
            fmt::format("pod {} (uid {}) is gone at the end of verify: what runs now "
                        "was not judged",
                        json_access::shortened(name, 253), app::shortUid(uid(judged))));
    std::set<std::string> seen;
    for (const auto& container :
         json_access::arrayAt(json_access::podSpec(judged), "ephemeralContainers"))
        seen.insert(json_access::stringAt(container, "name"));
    std::vector<std::string> added;
    for (const auto& container :
         json_access::arrayAt(json_access::podSpec(*now), "ephemeralContainers")) {
        const std::string addedName = json_access::stringAt(container, "name");
        if (!seen.count(addedName) && (ours.empty() || addedName != ours))
            added.push_back(json_access::shortened(addedName, 63));
    }
    if (!added.empty())
        unjudged(
            fmt::format("ephemeral container{} {} added to pod {} while verify ran: the API "
                        "gives {} no limits of its own, and {} what the namespace lets it "
                        "(a Secret through env, the pod's volumes) (review 61 #7, review 64 H4)",
                        added.size() == 1 ? "" : "s", json_access::fewOf(added),
                        json_access::shortened(name, 253), added.size() == 1 ? "it" : "them",
                        added.size() == 1 ? "it reads" : "they read"));
    // Labels choose the policies that hold the pod: one a project user added selects it under
    // a policy verify did not judge it by (attack 63 E1).
    const auto labelsOf = [](const json& pod) {
        const json& labels = json_access::at(json_access::at(pod, "metadata"), "labels");
        return labels.is_object() ? labels : json::object();
    };
    // What the pod reads of itself (labels and annotations through the downward API): a
    // credential written there while verify ran was not judged (attack 64 T3).
    const auto ownValues = [](const json& pod) {
        std::vector<std::pair<std::string, std::string>> values;
        for (auto& read : readableValues(pod, {}))
            values.emplace_back(std::move(read.where), std::move(read.value));
        return values;
    };
    // Its metadata alone: verify's own probe joins the spec, and the spec is judged as read.
    json reread = judged;
    reread["metadata"] = json_access::at(*now, "metadata");
    if (ownValues(judged) != ownValues(reread))
        absorb(checks[0].staticPart,
               Finding{Verdict::Unproven,
                       {fmt::format("what pod {} reads of itself through the downward API (its "
                                    "labels, its annotations) changed while verify ran: it was "
                                    "not judged (attack 64 T3; verify again)",
                                    json_access::shortened(name, 253))},
                       ""});
    if (labelsOf(judged) != labelsOf(*now))
        absorb(egress.staticPart,
               Finding{Verdict::Unproven,
                       {fmt::format("pod {}'s labels changed while verify ran: the policies "
                                    "that select it now were not judged (attack 63 E1; verify "
                                    "again)",
                                    json_access::shortened(name, 253))},
                       ""});
}

}  // namespace rossoctl::verify
