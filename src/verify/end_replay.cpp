// What changed between verify's start and its end, from the server's own record of changes
// (a watch from the start's resourceVersion), and the objects beside the NetworkPolicies that
// decide egress: a change undone before the end leaves two reads equal, not its effect (review
// 64 H3, L3).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "end_recheck.hpp"
#include "rossoctl/kube/client.hpp"
#include "sandbox_inputs.hpp"
#include "verification.hpp"

namespace rossoctl::verify {

using end_recheck::readAgain;
using end_recheck::resourceVersionOf;
using nlohmann::json;

namespace {

// A minute of a busy namespace's writes, at most; more is a flood, not read in full.
constexpr std::size_t kMostReplayedChanges = 2000;
// The record of changes up to the version read at the end arrives at once; a collection's
// watch asks for bookmarks, which the server sends two seconds before the watch's end (the
// apiserver's watch cache), so at about one second here.
constexpr int kReplayWindowSeconds = 3;

// A resourceVersion as the etcd revision it is (Kubernetes compares them so since 1.34); none
// for any other text.
std::optional<unsigned long long> revisionOf(const std::string& version) {
    if (version.empty() || version.size() > 19 ||
        !std::all_of(version.begin(), version.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return std::stoull(version);
}

std::map<std::string, std::string> versionsByName(const json& items) {
    std::map<std::string, std::string> byName;
    if (!items.is_array()) return byName;
    for (const auto& item : items) {
        const json& metadata = json_access::at(item, "metadata");
        byName[json_access::shortened(json_access::stringAt(metadata, "name", "?"), 253)] =
            json_access::stringAt(metadata, "resourceVersion");
    }
    return byName;
}

// "a (added)", "b (changed)", "c (removed)": what differs between two name → version maps.
std::vector<std::string> differences(const std::map<std::string, std::string>& before,
                                     const std::map<std::string, std::string>& now) {
    std::vector<std::string> changed;
    for (const auto& [name, version] : now)
        if (!before.count(name))
            changed.push_back(name + " (added)");
        else if (before.at(name) != version)
            changed.push_back(name + " (changed)");
    for (const auto& [name, version] : before)
        if (!now.count(name)) changed.push_back(name + " (removed)");
    return changed;
}

}  // namespace

std::string Verification::replayChanges(
    const kube::ResourceRef& ref, const std::string& name, const std::string& since,
    const std::string& until, const std::function<void(const kube::WatchEvent&)>& onChange) {
    return replayChangesIn(ref, ns_, name, since, until, onChange, kMostReplayedChanges);
}

std::string Verification::replayChangesIn(
    const kube::ResourceRef& ref, const std::string& in, const std::string& name,
    const std::string& since, const std::string& until,
    const std::function<void(const kube::WatchEvent&)>& onChange, std::size_t mostChanges) {
    if (since.empty() || until.empty())
        return "the server gave no resourceVersion to replay its changes between";
    kube::ListOptions options;
    if (!name.empty()) options.fieldSelector = "metadata.name=" + name;
    options.resourceVersion = since;
    options.timeoutSeconds = kReplayWindowSeconds;
    // A collection's record is read in full once the server's progress (a bookmark, or a change)
    // passes the version read at the end; a watch that ends before, cleanly or not, is not.
    options.allowWatchBookmarks = name.empty();
    const auto untilNumber = revisionOf(until);
    if (name.empty() && !untilNumber)
        return fmt::format("the server's resourceVersion {:?} is not a revision verify can order",
                           json_access::shortened(until, 40));
    bool reached = false;
    std::size_t changes = 0;
    // Where the record stands: a watch that ends before the end's revision is taken up again
    // from there, as its bookmarks lag a busy server's cache (CI, 2026-12-07).
    std::string seen = since;
    if (name.empty()) {
        // The server's cache of a kind nobody wrote lately stands at an older revision, and its
        // bookmarks say so: a list not older than the end's revision brings it up to date first.
        kube::ListOptions fresh;
        fresh.resourceVersion = until;
        fresh.resourceVersionMatch = "NotOlderThan";
        fresh.limit = 1;
        readAgain([&] { client_.list(ref, in, fresh); });
    }
    constexpr int kWatchesAtMost = 3;
    for (int watches = 0; watches < kWatchesAtMost && !reached && changes <= mostChanges;
         ++watches) {
        options.resourceVersion = seen;
        const std::string problem = readAgain([&] {
            try {
                client_.watch(
                    ref, in, options,
                    [&](const kube::WatchEvent& event) {
                        const std::string version = resourceVersionOf(event.object);
                        const auto number = revisionOf(version);
                        const bool past =
                            name.empty() ? number && *number >= *untilNumber : version == until;
                        if (event.type != "BOOKMARK") {
                            if (++changes > mostChanges) return false;
                            onChange(event);
                        }
                        if (name.empty() && number) seen = version;
                        reached = reached || past;
                        return !reached;
                    },
                    std::chrono::seconds(kReplayWindowSeconds + 5));
            } catch (const kube::ApiError& error) {
                if (error.code() == 410) recordExpired_ = true;
                throw;
            }
        });
        if (!problem.empty()) return problem;
        // A watch by name has no bookmarks to take up from: one is all it gets.
        if (!name.empty()) break;
    }
    if (changes > mostChanges)
        return fmt::format("over {} changes to {} while verify ran", mostChanges, ref.resource);
    if (!reached)
        return fmt::format(
            "the server's record of changes to {} ended before the version read "
            "at the end",
            ref.resource);
    return "";
}

void Verification::recheckPolicies(CheckResult& egress) {
    const auto unproven = [&](const std::string& line) {
        absorb(egress.staticPart, Finding{Verdict::Unproven, {line}, ""});
    };
    std::map<std::string, std::string> now;
    const std::string unread = readAgain([&] {
        const json listed = client_.list(kube::resources::networkPolicies(), ns_);
        now = versionsByName(json_access::arrayAt(listed, "items"));
        // The revision the end's reads stand at: every replay of a collection reads up to it.
        endVersion_ = resourceVersionOf(listed);
    });
    if (!unread.empty())
        return unproven(
            fmt::format("the namespace's NetworkPolicies could not be read again at the end ({}): "
                        "one changed while verify ran is not ruled out",
                        unread));
    std::vector<std::string> changed = differences(versionsByName(inputs_.networkPolicies), now);
    // One added and removed again, or changed and changed back, is in the server's record alone.
    std::set<std::string> replayed;
    const std::string unreplayed =
        changed.empty()
            ? replayChanges(kube::resources::networkPolicies(), "", inputs_.policiesVersion,
                            endVersion_,
                            [&](const kube::WatchEvent& event) {
                                replayed.insert(json_access::shortened(
                                    json_access::stringAt(json_access::at(event.object, "metadata"),
                                                          "name", "?"),
                                    253));
                            })
            : "";
    for (const auto& policy : replayed) changed.push_back(policy + " (written, then undone)");
    if (!unreplayed.empty())
        return unproven(fmt::format(
            "the changes to namespace {}'s NetworkPolicies while verify ran could not be read "
            "({}): one made and undone is not ruled out",
            ns_, unreplayed));
    if (changed.empty()) return;
    unproven(
        fmt::format("NetworkPolicies of namespace {} changed while verify ran: {}; the pods "
                    "were judged against the ones read at the start, so egress is not proven "
                    "(verify again)",
                    ns_, json_access::fewOf(changed)));
}

void Verification::recheckNamespaceAndPluginPolicies(std::vector<CheckResult>& checks) {
    std::vector<std::string> lines;
    // Its labels set Pod Security, its annotations the project's egress, gate and lifetime.
    if (inputs_.namespaceObject) {
        std::optional<json> now;
        const std::string unread =
            readAgain([&] { now = client_.getIfExists(kube::resources::namespaces(), "", ns_); });
        if (!unread.empty())
            lines.push_back(
                fmt::format("namespace {} could not be read again at the end ({})", ns_, unread));
        else if (!now || resourceVersionOf(*now) != resourceVersionOf(*inputs_.namespaceObject))
            lines.push_back(fmt::format("namespace {} was written while verify ran", ns_));
    }
    if (inputs_.egress.ciliumPolicies.is_array()) {
        std::vector<std::string> problems;
        const json now =
            optionalList(client_, kube::resources::ciliumNetworkPolicies(), ns_, problems);
        const auto changed =
            differences(versionsByName(inputs_.egress.ciliumPolicies), versionsByName(now));
        if (!now.is_array())
            lines.push_back(
                "the namespace's CiliumNetworkPolicies could not be read again at "
                "the end");
        else if (!changed.empty())
            lines.push_back(
                fmt::format("CiliumNetworkPolicies of namespace {} changed while "
                            "verify ran: {}",
                            ns_, json_access::fewOf(changed)));
        else {
            // One added and removed again is in the server's record alone (review 66 M2).
            bool written = false;
            const std::string unreplayed =
                replayChanges(kube::resources::ciliumNetworkPolicies(), "", inputs_.policiesVersion,
                              endVersion_, [&](const kube::WatchEvent&) { written = true; });
            if (!unreplayed.empty())
                lines.push_back(
                    fmt::format("the changes to the namespace's CiliumNetworkPolicies "
                                "while verify ran could not be read ({})",
                                unreplayed));
            else if (written)
                lines.push_back(
                    fmt::format("CiliumNetworkPolicies of namespace {} were written, "
                                "then undone, while verify ran",
                                ns_));
        }
    }
    if (unevaluatedPolicyKinds(client_, ns_) != inputs_.unevaluatedPolicies)
        lines.push_back(
            "the cluster's other policy kinds (AdminNetworkPolicy, Calico, Antrea, "
            "Cilium clusterwide) changed while verify ran");
    if (lines.empty()) return;
    lines.back() +=
        ": what they decide was judged as read at the start (review 64 L3; verify "
        "again)";
    for (auto& check : checks) absorb(check.staticPart, Finding{Verdict::Unproven, lines, ""});
}

}  // namespace rossoctl::verify
