// A batch restart's plan: which sandboxes share a LIST and a watch (one key=value selector, the
// plain state), which go alone, and the DELETEs of the batches' old pods.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "rossoctl/app/parallel.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "rossoctl/model/validation.hpp"
#include "sandbox_restart_many_internal.hpp"

namespace rossoctl::app::restart_detail {

namespace {

// Sandboxes whose pods one LIST and one watch select: the URL stays a few KiB.
constexpr size_t kMaxPerBatch = 200;

// A label value, or a key's name part: at most 63 characters, alphanumeric at both ends.
bool labelName(const std::string& text, bool allowEmpty) {
    if (text.empty()) return allowEmpty;
    if (text.size() > 63 || !std::isalnum(static_cast<unsigned char>(text.front())) ||
        !std::isalnum(static_cast<unsigned char>(text.back())))
        return false;
    return std::all_of(text.begin(), text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
}

// A label key as the API server accepts it: [DNS prefix/]name (the prefix at most 253).
bool labelKey(const std::string& key) {
    const size_t slash = key.find('/');
    if (slash == std::string::npos) return labelName(key, false);
    return model::isDnsSubdomain(key.substr(0, slash)) && labelName(key.substr(slash + 1), false);
}

// The one key=value term of a selector such as the controller writes in status.selector;
// nullopt for any other form, which only the server evaluates (that sandbox goes alone).
std::optional<std::pair<std::string, std::string>> singleTerm(const std::string& selector) {
    const size_t equals = selector.find('=');
    if (equals == std::string::npos) return std::nullopt;
    std::string key = selector.substr(0, equals);
    std::string value =
        selector.substr(selector.compare(equals, 2, "==") == 0 ? equals + 2 : equals + 1);
    if (!labelKey(key) || !labelName(value, false)) return std::nullopt;
    return std::make_pair(std::move(key), std::move(value));
}

}  // namespace

const json* member(const json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    auto found = object.find(key);
    return found == object.end() ? nullptr : &*found;
}

std::string stringAt(const json& object, const char* key, const char* inner) {
    const json* outer = member(object, key);
    const json* value = outer ? member(*outer, inner) : nullptr;
    return value && value->is_string() ? value->get<std::string>() : std::string{};
}

bool labelIs(const json& pod, const std::string& key, const std::string& value) {
    const json* metadata = member(pod, "metadata");
    const json* labels = metadata ? member(*metadata, "labels") : nullptr;
    const json* label = labels ? member(*labels, key.c_str()) : nullptr;
    return label && label->is_string() && label->get<std::string>() == value;
}

// The pods naming each UID as controller, pointing into `pods`.
std::map<std::string, restart_detail::PodView> byController(const kube::ObjectSet& pods) {
    std::map<std::string, restart_detail::PodView> result;
    for (const auto& [name, pod] : pods) {
        const json* metadata = member(pod, "metadata");
        const json* owners = metadata ? member(*metadata, "ownerReferences") : nullptr;
        if (!owners || !owners->is_array()) continue;
        std::set<std::string> seen;
        for (const auto& owner : *owners) {
            const json* controller = member(owner, "controller");
            const json* uid = member(owner, "uid");
            if (controller && *controller == true && uid && uid->is_string() &&
                seen.insert(uid->get<std::string>()).second)
                result[uid->get<std::string>()].emplace_back(&name, &pod);
        }
    }
    return result;
}

// The shared LISTs, who goes alone, and the DELETEs of the batches' old pods.
void RestartMany::plan(const std::vector<std::string>& names, std::optional<json> sandboxList,
                       std::vector<std::string>& alone, std::vector<Batch>& batches) {
    kube::Client& client = *clients_.front();
    try {
        if (!sandboxList) riddenOut([&] { sandboxList = client.list(sandboxes_, ns_); });
    } catch (const std::exception&) {
        // Each restart reads for itself and says what failed; a name that is not there
        // still restarts none (review 52 M1): each is read before any pod is deleted.
        std::map<std::string, json> found;
        for (const auto& name : names) {
            try {
                if (auto sandbox = client.getIfExists(sandboxes_, ns_, name))
                    found.emplace(name, std::move(*sandbox));
            } catch (const std::exception&) {
                found.emplace(name, json::object());  // unreadable: its own restart says so
            }
        }
        refuseMissing(names, found);
        alone = names;
        return;
    }
    std::map<std::string, json> byName;
    if (const json* items = member(*sandboxList, "items"); items && items->is_array())
        for (const auto& sandbox : *items)
            if (auto name = stringAt(sandbox, "metadata", "name"); !name.empty())
                byName.emplace(name, sandbox);  // the first of a name, as a GET gives one
    refuseMissing(names, byName);
    std::map<std::string, std::vector<Member>> byKey;
    for (const auto& name : names) {
        auto found = byName.find(name);
        auto term = found == byName.end()
                        ? std::nullopt
                        : singleTerm(stringAt(found->second, "status", "selector"));
        if (!term || stringAt(found->second, "metadata", "uid").empty() ||
            !runnable(found->second)) {
            alone.push_back(name);
            continue;
        }
        Member candidate;
        candidate.name = name;
        candidate.sandbox = found->second;
        candidate.uid = stringAt(found->second, "metadata", "uid");
        candidate.labelValue = term->second;
        byKey[term->first].push_back(std::move(candidate));
    }
    for (auto& [key, candidates] : byKey)
        for (size_t start = 0; start < candidates.size(); start += kMaxPerBatch) {
            Batch batch;
            batch.key = key;
            const size_t end = std::min(candidates.size(), start + kMaxPerBatch);
            for (size_t i = start; i < end; ++i) batch.members.push_back(std::move(candidates[i]));
            listPods(client, batch, alone);
            if (!batch.members.empty()) batches.push_back(std::move(batch));
        }
    size_t batched = 0;
    for (const auto& batch : batches) batched += batch.members.size();
    readOneByOne_ = batches.size() > 1 || byName.size() > 4 * batched + 100;
    std::mutex mutex;
    for (auto& batch : batches)
        forEachInParallel(batch.members.size(), std::min(clients_.size(), batch.members.size()),
                          [&](size_t index, size_t worker) {
                              Member& member = batch.members[index];
                              deleteOldPod(*clients_[worker], member);
                              std::lock_guard lock(mutex);
                              if (!member.failure.empty() || !options_.restart.wait) finish(member);
                          });
}

// A name the namespace does not have is a typo more often than not: nothing is restarted
// (and no pod's files lost) until every name is right, as bad input changes nothing.
void RestartMany::refuseMissing(const std::vector<std::string>& names,
                                const std::map<std::string, json>& byName) {
    std::vector<std::string> known, missing;
    for (const auto& [name, sandbox] : byName) known.push_back(name);
    for (const auto& name : names)
        if (!byName.count(name)) missing.push_back("sandbox/" + name);
    if (missing.empty()) return;
    for (const auto& name : names)
        if (!byName.count(name))
            report(name, {},
                   fmt::format("sandbox/{} not found in namespace {}; {}", name, ns_,
                               sandboxNotFoundAdvice(known, ns_, name)));
    throw Error(fmt::format(
        "not restarted: {} not found, and no sandbox is restarted until every name is found",
        fmt::join(missing, ", ")));
}

// One LIST of the batch's pods; a member that is not in the plain state goes alone.
void RestartMany::listPods(kube::Client& client, Batch& batch, std::vector<std::string>& alone) {
    std::string values;
    for (const auto& candidate : batch.members)
        values += (values.empty() ? "" : ",") + candidate.labelValue;
    kube::ListOptions options;
    options.labelSelector = batch.key + " in (" + values + ")";
    try {
        riddenOut([&] { batch.podList = client.list(kube::resources::pods(), ns_, options); });
    } catch (const std::exception&) {
        for (const auto& candidate : batch.members) alone.push_back(candidate.name);
        batch.members.clear();
        return;
    }
    kube::ObjectSet pods;
    if (const json* items = member(batch.podList, "items"); items && items->is_array())
        for (const auto& pod : *items) pods.emplace(stringAt(pod, "metadata", "name"), pod);
    const auto controlled = byController(pods);
    std::vector<Member> plain;
    for (auto& candidate : batch.members) {
        auto own = controlled.find(candidate.uid);
        if (own != controlled.end() && plainState(candidate, batch.key, own->second))
            plain.push_back(std::move(candidate));
        else
            alone.push_back(candidate.name);
    }
    batch.members = std::move(plain);
}

// Running, as far as its spec and status say (a malformed one is left to its own restart).
bool RestartMany::runnable(const json& sandbox) const {
    try {
        return sandboxNotRunningReason(sandbox, clock_.now()).empty();
    } catch (const std::exception&) {
        return false;
    }
}

bool RestartMany::plainState(Member& member, const std::string& key,
                             const restart_detail::PodView& controlled) {
    try {
        return prepare(member, key, controlled);
    } catch (const std::exception&) {
        return false;  // a pod of the wrong shape: its own restart says what is wrong
    }
}

// True when the sandbox is in the plain state a shared restart handles: among the pods its
// selector selects, one it controls, the one it records, neither leaving nor finished.
bool RestartMany::prepare(Member& member, const std::string& key,
                          const restart_detail::PodView& controlled) {
    std::vector<json> owned;
    for (const auto& entry : controlled)
        if (labelIs(*entry.second, key, member.labelValue)) owned.push_back(*entry.second);
    if (owned.size() != 1) return false;
    const json& pod = owned.front();
    if (terminating(pod) || podFinished(pod)) return false;
    auto target = sandboxPod(member.sandbox, owned);  // throws for several: alone
    if (!target || uidOf(*target) != uidOf(pod)) return false;
    member.oldUids = {uidOf(pod)};
    member.result.podName = stringAt(pod, "metadata", "name");
    member.result.oldUid = uidOf(pod);
    return !member.result.podName.empty() && !member.result.oldUid.empty();
}

void RestartMany::deleteOldPod(kube::Client& client, Member& member) {
    step(member.name, "deleting pod " + member.result.podName);
    member.deleted = clock_.now();
    kube::DeleteOptions options;
    options.preconditionUid = member.result.oldUid;
    bool answered = false;  // an answer says whether the pod went; none leaves it open
    try {
        try {
            riddenOut([&] {
                client.remove(kube::resources::pods(), ns_, member.result.podName, options);
            });
        } catch (const kube::ApiError& error) {
            answered = !kube::isOutage(error);
            if (error.code() == 409 || error.code() == 412) {
                // Replaced under us: never delete the replacement; wait past what leaves.
                SandboxPods pods;
                riddenOut([&] { pods = findSandboxPods(client, member.sandbox); });
                member.oldUids = restart_detail::replacedUnderUs(pods, member.result);
                return;
            }
            if (!error.isNotFound()) throw;
        }
        if (auto lost = model::podOnlyFilesNote(member.sandbox, member.result.podName);
            !lost.empty())
            member.result.notes.push_back(lost);
    } catch (const std::exception& error) {
        member.failure = error.what();
        // Ctrl-C or a cut connection with the DELETE sent: its files may be gone, said so.
        if (!answered) filesMaybeLost(member);
    }
}

void RestartMany::filesMaybeLost(Member& member) {
    try {
        if (auto lost = model::podOnlyFilesNote(member.sandbox, member.result.podName);
            !lost.empty())
            member.result.notes.push_back(lost + restart_detail::kUnansweredDelete);
    } catch (const std::exception&) {
        // A template of the wrong shape: its failure already says what is wrong.
    }
}

}  // namespace rossoctl::app::restart_detail
