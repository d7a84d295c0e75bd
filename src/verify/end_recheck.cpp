// What verify judged, read again at its end: a verdict printed as pass must hold for what is
// there when it is printed, and a project user may change the policies, the Sandbox, the pod,
// its ServiceAccount and the Secrets it reads while verify runs (attack 62 N2, attack 63 T1,
// T2, E1, review 61 #7).
#include "end_recheck.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "json_access.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/app/sandbox_restart.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/kube/transport.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "verification.hpp"

namespace rossoctl::verify {

using nlohmann::json;

using end_recheck::readAgain;
using end_recheck::resourceVersionOf;

namespace {

// The Sandbox's spec as judged but for a shutdown time set or moved earlier: a claim sets a
// spare's (src/app/run/warm_pool.cpp), which only shortens what limits judged (review 64 M2).
// Read as a time, never compared as text (review 66 M1: "15:00:0005Z" sorts first as text, and
// no controller parses it).
bool sameButEarlierShutdown(const json& spec, const json& judged) {
    const auto shutdownOf = [](const json& of) {
        const std::string at = json_access::stringAt(of, "shutdownTime");
        return at.empty() ? json_access::stringAt(json_access::at(of, "lifecycle"), "shutdownTime")
                          : at;
    };
    const auto withoutShutdown = [](json of) {
        if (!of.is_object()) return of;
        of.erase("shutdownTime");
        if (of.contains("lifecycle") && of["lifecycle"].is_object()) {
            of["lifecycle"].erase("shutdownTime");
            if (of["lifecycle"].empty()) of.erase("lifecycle");
        }
        return of;
    };
    if (withoutShutdown(spec) != withoutShutdown(judged)) return false;
    const std::string before = shutdownOf(judged);
    const std::string now = shutdownOf(spec);
    if (now == before) return true;
    const auto nowAt = kube::parseTimestamp(now);
    if (!nowAt) return false;
    if (before.empty()) return true;
    const auto beforeAt = kube::parseTimestamp(before);
    return beforeAt && *nowAt < *beforeAt;
}

// What differs between the judged pod and a later version of it (the one read at the end, or
// one the server recorded between).
struct PodDrift {
    std::set<std::string> addedContainers;  // ephemeral, not this run's probe
    bool labels = false;                    // the policies that select it
    bool ownValues = false;                 // what it reads of itself (downward API)
    bool spec = false;                      // an image, resources (pods/resize)
    bool gone = false;
};

json labelsOf(const json& pod) {
    const json& labels = json_access::at(json_access::at(pod, "metadata"), "labels");
    return labels.is_object() ? labels : json::object();
}

// Its spec without the ephemeral containers (compared on their own: this run's probe joins).
json specBesidesEphemeral(const json& pod) {
    json spec = json_access::podSpec(pod);
    if (spec.is_object()) spec.erase("ephemeralContainers");
    return spec;
}

std::vector<std::pair<std::string, std::string>> ownValuesOf(const json& pod) {
    std::vector<std::pair<std::string, std::string>> values;
    for (auto& read : readableValues(pod, {}))
        values.emplace_back(std::move(read.where), std::move(read.value));
    return values;
}

void addDrift(PodDrift& drift, const json& judged, const json& seen, const std::string& ours) {
    std::set<std::string> known;
    for (const auto& container :
         json_access::arrayAt(json_access::podSpec(judged), "ephemeralContainers"))
        known.insert(json_access::stringAt(container, "name"));
    for (const auto& container :
         json_access::arrayAt(json_access::podSpec(seen), "ephemeralContainers")) {
        const std::string added = json_access::stringAt(container, "name");
        if (!known.count(added) && (ours.empty() || added != ours))
            drift.addedContainers.insert(json_access::shortened(added, 63));
    }
    drift.labels = drift.labels || labelsOf(judged) != labelsOf(seen);
    // Its metadata alone: verify's own probe joins the spec, and the spec is compared below.
    json reread = judged;
    reread["metadata"] = json_access::at(seen, "metadata");
    drift.ownValues = drift.ownValues || ownValuesOf(judged) != ownValuesOf(reread);
    drift.spec = drift.spec || specBesidesEphemeral(judged) != specBesidesEphemeral(seen);
}

}  // namespace

void Verification::recheckAtEnd(std::vector<CheckResult>& checks) {
    try {
        recheckPolicies(checks[1]);
        recheckJudgedPod(checks);
        recheckSandbox(checks);
        recheckTokenSources(checks[0]);
        recheckNamespaceAndPluginPolicies(checks);
        recheckClusterPods(checks);
        recheckServices(checks[0], checks[1]);
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
    else {
        // Every version the server recorded, not the last alone: a template changed and changed
        // back made the pods of the time between (review 64 H3).
        const json& judgedSpec = json_access::at(inputs_.sandbox, "spec");
        const std::string judgedUid =
            json_access::stringAt(json_access::at(inputs_.sandbox, "metadata"), "uid");
        bool changed = false, remade = false;
        // Deleted and made again (an orphaning delete keeps its pods) is another Sandbox, even
        // with the same spec (review 66 L4).
        const auto differs = [&](const json& version) {
            const json& spec = json_access::at(version, "spec");
            changed = changed || (spec != judgedSpec && !sameButEarlierShutdown(spec, judgedSpec));
            remade = remade || json_access::stringAt(json_access::at(version, "metadata"), "uid") !=
                                   judgedUid;
        };
        differs(*now);
        const std::string since = resourceVersionOf(inputs_.sandbox);
        const std::string until = resourceVersionOf(*now);
        const std::string unreplayed =
            changed || remade || since == until
                ? ""
                : replayChanges(sandboxes_, name_, since, until,
                                [&](const kube::WatchEvent& event) {
                                    differs(event.object);
                                    remade = remade || event.type == "DELETED";
                                });
        if (remade)
            why = fmt::format(
                "sandbox {} was deleted while verify ran (the one there now is not "
                "the one judged)",
                name_);
        else if (changed)
            why = fmt::format(
                "sandbox {}'s spec changed while verify ran (resourceVersion {} → "
                "{})",
                name_, json_access::shortened(since, 40), json_access::shortened(until, 40));
        else if (!unreplayed.empty())
            why = fmt::format("the changes to sandbox {} while verify ran could not be read ({})",
                              name_, unreplayed);
    }
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
    // One missing at the start and missing again may have been there between, long enough for
    // the kubelet to hand it to the pod (review 64 H3): the server's record says.
    for (const bool secret : {true, false}) {
        std::set<std::string> missing;
        for (const CredentialSource* source : read)
            if (!source->object && (source->kind == "secret") == secret)
                missing.insert(source->name);
        if (missing.empty() || !unread.empty()) continue;
        std::set<std::string> written;
        const std::string unreplayed =
            replayChanges(secret ? kube::resources::secrets() : kube::resources::configMaps(), "",
                          inputs_.policiesVersion, endVersion_, [&](const kube::WatchEvent& event) {
                              const std::string name = json_access::stringAt(
                                  json_access::at(event.object, "metadata"), "name");
                              if (missing.count(name)) written.insert(name);
                          });
        const char* kind = secret ? "Secret" : "ConfigMap";
        if (!unreplayed.empty())
            unread = fmt::format("the changes to the namespace's {}s ({})", kind, unreplayed);
        for (const auto& name : written)
            changed.push_back(
                fmt::format("{} {} (made, then deleted)", kind, json_access::shortened(name, 253)));
    }
    // Its automountServiceAccountToken decides the next pod's token where the pod's does not:
    // each account a pod was judged by (the template's too: attack 66 T4), against every read.
    std::map<std::string, std::vector<const std::optional<json>*>> accounts;
    for (const auto& [name, judged] : inputs_.judgedAccounts) accounts[name].push_back(&judged);
    for (const auto& [accountName, judged] : accounts) {
        std::optional<json> account;
        const std::string accountUnread = readAgain([&] {
            account = client_.getIfExists(kube::resources::serviceAccounts(), ns_, accountName);
        });
        const std::string named = "ServiceAccount " + json_access::shortened(accountName, 253);
        if (!accountUnread.empty())
            unread = fmt::format("{} ({})", named, accountUnread);
        else if (std::any_of(judged.begin(), judged.end(), [&](const std::optional<json>* read) {
                     return account.has_value() != read->has_value() ||
                            (account && resourceVersionOf(*account) != resourceVersionOf(**read));
                 }))
            changed.push_back(named);
    }
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
    PodDrift drift;
    addDrift(drift, judged, *now, ours);
    // Every version between, too: a label, an image or an annotation changed and changed back
    // had its effect meanwhile (review 64 H3).
    const std::string since = resourceVersionOf(judged);
    const std::string until = resourceVersionOf(*now);
    const std::string unreplayed =
        since == until ? ""
                       : replayChanges(kube::resources::pods(), name, since, until,
                                       [&](const kube::WatchEvent& event) {
                                           if (event.type == "DELETED") drift.gone = true;
                                           addDrift(drift, judged, event.object, ours);
                                       });
    if (!unreplayed.empty())
        return unjudged(
            fmt::format("the changes to pod {} while verify ran could not be read "
                        "({}): one made and undone is not ruled out",
                        json_access::shortened(name, 253), unreplayed));
    const std::vector<std::string> added(drift.addedContainers.begin(),
                                         drift.addedContainers.end());
    if (!added.empty())
        unjudged(
            fmt::format("ephemeral container{} {} added to pod {} while verify ran: the API "
                        "gives {} no limits of its own, and {} what the namespace lets it "
                        "(a Secret through env, the pod's volumes) (review 61 #7, review 64 H4)",
                        added.size() == 1 ? "" : "s", json_access::fewOf(added),
                        json_access::shortened(name, 253), added.size() == 1 ? "it" : "them",
                        added.size() == 1 ? "it reads" : "they read"));
    // A container's image or resources changed: it restarted as something not judged, or its
    // limits are others (pods/resize) (review 64 M1).
    if (drift.spec || drift.gone)
        unjudged(
            fmt::format("pod {}'s spec changed while verify ran (an image, resources, a "
                        "toleration): what runs now was not judged (review 64 M1; verify "
                        "again)",
                        json_access::shortened(name, 253)));
    // What the pod reads of itself (labels and annotations through the downward API): a
    // credential written there while verify ran was not judged (attack 64 T3).
    if (drift.ownValues)
        absorb(checks[0].staticPart,
               Finding{Verdict::Unproven,
                       {fmt::format("what pod {} reads of itself through the downward API (its "
                                    "labels, its annotations) changed while verify ran: it was "
                                    "not judged (attack 64 T3; verify again)",
                                    json_access::shortened(name, 253))},
                       ""});
    // Labels choose the policies that hold the pod: one a project user added selects it under
    // a policy verify did not judge it by (attack 63 E1).
    if (drift.labels)
        absorb(egress.staticPart,
               Finding{Verdict::Unproven,
                       {fmt::format("pod {}'s labels changed while verify ran: the policies "
                                    "that select it now were not judged (attack 63 E1; verify "
                                    "again)",
                                    json_access::shortened(name, 253))},
                       ""});
}

}  // namespace rossoctl::verify
