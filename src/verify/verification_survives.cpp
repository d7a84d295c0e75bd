// The destructive check last: canaries in every running container, the pod deleted, and what
// the replacement pod still holds; then the replacement pod judged beside the first.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <future>

#include "json_access.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/app/sandbox_restart.hpp"
#include "rossoctl/model/egress_gate.hpp"
#include "rossoctl/verify/egress_gate.hpp"
#include "rossoctl/verify/image_provenance.hpp"
#include "sandbox_inputs.hpp"
#include "verification.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

std::string randomHex(Random& random, size_t length) {
    std::string out;
    while (out.size() < length) out += fmt::format("{:08x}", random.next());
    return out.substr(0, length);
}

// Pods of the LIST (the Sandbox's selector) or controlled by it, other than the restart's old
// and new ones, that run or may run; names, each once.
std::vector<std::string> livePodsBeside(const app::SandboxPods& pods,
                                        const app::RestartResult& restarted) {
    std::vector<std::string> names;
    auto consider = [&](const json& pod) {
        const std::string name = pod.value("metadata", json::object()).value("name", "");
        const std::string uid = app::uidOf(pod);
        if (uid == restarted.newUid || uid == restarted.oldUid || app::terminating(pod) ||
            app::podFinished(pod))
            return;
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    };
    for (const auto& pod : pods.list.value("items", json::array())) consider(pod);
    for (const auto& pod : pods.owned) consider(pod);
    return names;
}

// What makes a pod the one the Sandbox's template makes: its runtime class, volumes and each
// container's image and mounts (the service-account volume's random name aside).
json templateShape(const json& pod) {
    const json spec = pod.value("spec", json::object());
    auto ownVolume = [](const json& entry) {
        return !entry.is_object() || entry.value("name", "").rfind("kube-api-access-", 0) != 0;
    };
    json shape = {{"runtimeClassName", spec.value("runtimeClassName", json())},
                  {"volumes", json::array()},
                  {"containers", json::array()}};
    for (const auto& volume : spec.value("volumes", json::array()))
        if (ownVolume(volume)) shape["volumes"].push_back(volume);
    for (const auto& container : spec.value("containers", json::array())) {
        if (!container.is_object()) continue;
        json mounts = json::array();
        for (const auto& mount : container.value("volumeMounts", json::array()))
            if (ownVolume(mount)) mounts.push_back(mount);
        shape["containers"].push_back({{"name", container.value("name", json())},
                                       {"image", container.value("image", json())},
                                       {"volumeMounts", mounts}});
    }
    return shape;
}

}  // namespace

CheckResult Verification::nothingSurvivesCheck() {
    CheckResult result;
    result.kind = CheckKind::NothingSurvives;
    // The pod's claims are judged by the PersistentVolumes bound to them; the template's
    // ephemeral claims, not made yet, by their claim template and StorageClass.
    result.staticPart = withTemplate([&](const json& pod, bool next) {
        Finding finding = nothingSurvivesStatic(pod, inputs_.sandbox, inputs_.storageClasses,
                                                next ? nullptr : &inputs_.volumes);
        if (!next)
            absorb(finding, hostAccessNeighbours(inputs_.egress, "that nothing is kept from them"));
        absorb(finding, claimSharers(CheckKind::NothingSurvives, pod, inputs_.egress.namespacePods,
                                     podName_));
        return finding;
    });
    // Read before the restart, and with --no-restart too: a key in the kernel keyring outlives
    // the pod for its uid wherever no seccomp filter refuses add_key.
    const Finding keyring =
        ownKernelProven() ? Finding{Verdict::Pass,
                                    {ownKernelNote() + ": its kernel keyring ends with the pod"},
                                    ""}
                          : keyringLiveEveryContainer(inputs_.pod, execIn(podName_));
    result.livePart = canariesLive();
    absorb(result.livePart, keyring);
    noteProbeSite(result.livePart, podProbeSite(inputs_.container.value("name", "")));
    return result;
}

// Canaries in every running container, the pod restarted, and each read back in its
// replacement.
Finding Verification::canariesLive() {
    Finding live;
    live.probe = "canary";
    if (!options_.restart) {
        live.evidence.push_back(
            "skipped with --no-restart: the canary test needs a pod restart, not proven");
        return live;
    }
    // Canaries in every running container's writable mounts and root filesystem.
    const std::string name = ".rossoctl-canary-" + randomHex(client_.random(), 16);
    const std::string content = "rossoctl canary " + randomHex(client_.random(), 32);
    const auto containers = runningContainers(inputs_.pod);
    std::vector<std::pair<std::string, std::vector<std::string>>> planted;
    size_t tried = 0, written = 0;
    for (const auto& [container, what] : containers.running) {
        std::vector<std::string> paths;
        for (const auto& place : canaryPlaces(inputs_.pod, container))
            paths.push_back((place.directory == "/" ? "" : place.directory) + "/" + name);
        tried += paths.size();
        const std::string containerName = container.value("name", "");
        auto done = canariesWritten(exec(client_, podName_, canaryWriteCommand(paths, content),
                                         kProbeTimeout, containerName));
        written += done.size();
        if (!done.empty()) planted.push_back({containerName, std::move(done)});
    }
    if (planted.empty()) {
        live.evidence.push_back(fmt::format(
            "no canary could be written (tried {} places), so the pod was not restarted", tried));
        return live;
    }
    step(fmt::format("deleting pod {} to prove nothing survives (--no-restart skips this)",
                     podName_));
    app::RestartOptions restart;
    restart.timeout = options_.timeout;
    restart.cancel = options_.cancel;
    restart.onStep = [this](const std::string& text) { step(text); };
    // Said even when the restart then fails or is interrupted: the files went with the DELETE.
    std::string lostFiles;
    restart.onFilesLost = [&](const std::string& note) { lostFiles = note; };
    app::RestartResult restarted;
    try {
        restarted =
            app::restartSandbox(client_, clock_, sandboxes_, ns_, name_, restart, inputs_.sandbox);
    } catch (const Error& error) {
        if (!lostFiles.empty())
            notes_.push_back(
                redactedWithin("verify deleted its pod to prove nothing survives: " + lostFiles,
                               printedStrings()));
        noteIfOutage(error);
        std::vector<std::string> left;  // a volume keeps them, and so does a pod not deleted
        for (const auto& [container, paths] : planted)
            left.insert(left.end(), paths.begin(), paths.end());
        live.evidence.push_back(
            fmt::format("{} canaries written, but the restart did not complete: {}; {}", written,
                        error.what(), canariesLeftNote(left)));
        return live;
    }
    // The note names the pod's mount paths (/tmp/<a token>, attack 54 X1).
    for (const auto& note : restarted.notes)
        notes_.push_back(redactedWithin("verify restarted it to prove nothing survives: " + note,
                                        printedStrings()));
    const auto pods = app::findSandboxPods(client_, inputs_.sandbox);
    std::string newPod = restarted.podName;
    for (const auto& pod : pods.owned) {
        if (app::uidOf(pod) != restarted.newUid) continue;
        newPod = pod["metadata"].value("name", "");
        replacementPod_ = pod;
    }
    if (replacementPod_.is_null()) {
        // The list may not show it yet; its name is the restart's answer.
        auto byName = client_.getIfExists(kube::resources::pods(), ns_, newPod);
        if (byName && app::uidOf(*byName) == restarted.newUid) replacementPod_ = *byName;
    }
    const std::string summary = fmt::format("pod uid {} → {}", app::shortUid(restarted.oldUid),
                                            app::shortUid(restarted.newUid));
    live.verdict = Verdict::Pass;
    for (const auto& [container, paths] : planted)
        absorb(live,
               canariesAfterRestart(
                   exec(client_, newPod, canaryReadCommand(paths), kProbeTimeout, container), paths,
                   summary),
               planted.size() > 1 ? "container " + container + ": " : "");
    for (const auto& note : containers.notes)
        absorb(live, Finding{Verdict::Unproven, {note + ": no canary in it"}, ""});
    live.probe = "canary";
    // The canaries speak only if the pod deleted is the one they were written in and the pod
    // read back is the one live pod the Sandbox may run: anyone who may create pods could add one.
    if (restarted.oldUid != app::uidOf(inputs_.pod))
        absorb(live, Finding{Verdict::Unproven,
                             {fmt::format("the restart deleted pod uid {}, not the pod that holds "
                                          "the canaries (uid {})",
                                          app::shortUid(restarted.oldUid),
                                          app::shortUid(app::uidOf(inputs_.pod)))},
                             ""});
    // Anyone who may create pods could make the replacement (the controller adopts it with the
    // old one gone): what it holds speaks for a restart only if the template could have made it.
    if (!replacementPod_.is_null() && templateShape(replacementPod_) != templateShape(inputs_.pod))
        absorb(live, Finding{Verdict::Unproven,
                             {fmt::format("replacement pod {} differs from the pod it replaced in "
                                          "its images, volumes, mounts or runtime class: it may "
                                          "not be the pod the Sandbox's template makes",
                                          newPod)},
                             ""});
    if (auto others = livePodsBeside(pods, restarted); !others.empty())
        absorb(live, Finding{Verdict::Unproven,
                             {fmt::format("after the restart pod(s) {} match the Sandbox beside "
                                          "{}, so which pod it runs is not proven",
                                          fmt::join(others, ", "), newPod)},
                             ""});
    if (replacementPod_.is_null())
        absorb(live,
               Finding{Verdict::Unproven,
                       {fmt::format("replacement pod {} (uid {}) could not be read, so it was "
                                    "not judged",
                                    newPod, app::shortUid(restarted.newUid))},
                       ""});
    return live;
}

// The replacement pod's static parts, its token path, its cgroups and its seccomp modes, beside the
// first pod's.
void Verification::judgeReplacement(std::vector<CheckResult>& checks) {
    const json& next = replacementPod_;
    const std::string name = next["metadata"].value("name", "");
    // Its trusted probe starts now, beside the reads below; its sockets are still read last.
    std::future<ProbeSite> probe;
    if (egressSite_.trusted() && trustedProbeProblem_.empty())
        probe = std::async(std::launch::async, [this, next] {
            TrustedProbeOptions trusted;
            trusted.image = options_.trustedProbeImage;
            trusted.cancel = options_.cancel;
            // It reads once and is ended at once; the lifetime only bounds a verify cut short.
            trusted.lifetime = std::chrono::minutes(2);
            auto client = newClient_();
            return startTrustedProbe(*client, clock_, next, trusted);
        });
    const std::string prefix =
        fmt::format("replacement pod {} (uid {}): ", name, app::shortUid(app::uidOf(next)));
    readCredentialSources(client_, ns_, next, inputs_.credentialSources);
    VolumeBindings nextVolumes;  // its own claims: an ephemeral one is new with it
    readVolumeBindings(client_, ns_, next, nextVolumes);
    const std::string account = next["spec"].value("serviceAccountName", "default");
    const auto serviceAccount =
        account == inputs_.pod["spec"].value("serviceAccountName", "default")
            ? inputs_.serviceAccount
            : client_.getIfExists(kube::resources::serviceAccounts(), ns_, account);
    inputs_.judgedAccounts.emplace_back(account, serviceAccount);
    CheckResult& token = checks[0];
    CheckResult& egress = checks[1];
    CheckResult& limits = checks[2];
    CheckResult& survives = checks[3];
    // Scheduled elsewhere, the replacement is judged on its own node: its capacity, and the pods
    // there that reach into it or its volumes (review 60 #2).
    const std::string nextNode = next["spec"].value("nodeName", "");
    const bool sameNode = nextNode == inputs_.pod["spec"].value("nodeName", "");
    EgressInputs elsewhere;
    if (!sameNode) {
        elsewhere = inputs_.egress;
        elsewhere.hostListeners.clear();
        elsewhere.hostNetworkPods.clear();
        elsewhere.nodeProbeHosts.clear();
        elsewhere.hostAccessPods.clear();
        elsewhere.hostListenersUnread.clear();
        readHostListeners(client_, next, elsewhere);
    }
    const EgressInputs& nextInputs = sameNode ? inputs_.egress : elsewhere;
    Finding nextToken = tokenStaticOf(next, serviceAccount, nextVolumes);
    if (!sameNode)
        absorb(nextToken, hostAccessNeighbours(nextInputs, "that no credential is placed there"));
    token.staticPart = alongside(token.staticPart, nextToken, prefix);
    Finding nextEgress = egressStatic(next, inputs_.networkPolicies, nextInputs);
    if (!sameNode) {
        absorb(nextEgress, kubeletRelays(nextInputs));
        if (!elsewhere.hostListenersUnread.empty())  // its node's host-network pods not known
            absorb(nextEgress,
                   Finding{Verdict::Unproven,
                           {fmt::format("{}: what on node {} connects into it is not known",
                                        elsewhere.hostListenersUnread,
                                        json_access::shortened(nextNode, 63))},
                           ""});
    }
    failEgressOnHostNetwork(next, nextEgress);
    absorb(nextEgress, claimSharers(CheckKind::Egress, next, inputs_.egress.namespacePods));
    egress.staticPart = alongside(egress.staticPart, nextEgress, prefix);
    std::vector<std::string> holders;
    for (const auto& holder : rawNetworkHolders(next)) holders.push_back(prefix + holder);
    egress.livePart = withoutSpoofableDenial(egress.livePart, holders);
    const auto [node, nodeUnread] =
        sameNode ? std::pair{inputs_.node, inputs_.nodeUnread} : nodeNamed(nextNode);
    Finding nextLimits = limitsStatic(next, inputs_.sandbox, inputs_.resourceQuotas,
                                      inputs_.deadline, node, nodeUnread);
    absorb(nextLimits, memoryVolumesOn(next, nextInputs));
    limits.staticPart = alongside(limits.staticPart, nextLimits, prefix);
    Finding nextSurvives =
        nothingSurvivesStatic(next, inputs_.sandbox, inputs_.storageClasses, &nextVolumes);
    absorb(nextSurvives,
           claimSharers(CheckKind::NothingSurvives, next, inputs_.egress.namespacePods));
    if (!sameNode)
        absorb(nextSurvives, hostAccessNeighbours(nextInputs, "that nothing is kept from them"));
    survives.staticPart = alongside(survives.staticPart, nextSurvives, prefix);
    judgeReplacementIsolation(checks, next, prefix, nextVolumes);
    Finding tokenNow = tokenLive(exec(client_, name, tokenProbeCommand()));
    tokenNow.probe = "sh";
    noteProbeSite(tokenNow, podProbeSite(inputs_.container.value("name", "")));
    token.livePart = alongside(token.livePart, tokenNow, prefix);
    // The trusted probe's kernel speaks for the replacement only in the same runtime class.
    const auto runtimeClassOf = [](const json& pod) {
        const json spec = pod.value("spec", json::object());
        const auto it = spec.find("runtimeClassName");
        return it != spec.end() && it->is_string() ? it->get<std::string>() : "";
    };
    const bool ownKernel = !runtimeClassOf(next).empty() &&
                           runtimeClassOf(next) == runtimeClassOf(inputs_.pod) && ownKernelProven();
    Finding nextLimitsLive = limitsLiveEveryContainer(next, execIn(name), ownKernel);
    absorb(nextLimitsLive, podCgroupsOn(next, nextInputs));
    limits.livePart = alongside(limits.livePart, nextLimitsLive, prefix);
    survives.livePart =
        alongside(survives.livePart,
                  ownKernel ? Finding{Verdict::Pass,
                                      {ownKernelNote() + ": its kernel keyring ends with the pod"},
                                      ""}
                            : keyringLiveEveryContainer(next, execIn(name)),
                  prefix);
    // Last, as late as verify can: a connection the new pod opened in its first milliseconds
    // and keeps once it sees verify's probes (attack 55 E6) must be held now to outlive verify.
    if (probe.valid())
        egress.livePart =
            alongside(egress.livePart, replacementHeldConnections(next, probe), prefix);
    // The restart started it: what it sent before its policies held only its gate rules out.
    Finding gate =
        egressGateLive(next, model::gateImageOf(inputs_.namespaceObject), replacementProbe_);
    if (gate.verdict == Verdict::Pass)
        absorb(gate, egressGateTargetClaims(inputs_.externalNames, inputs_.egress));
    // Always its own line: the first pod's gate may have said the same words (as many tries),
    // and the replacement's word is needed beside it.
    absorb(egress.livePart, gate, prefix);
}

// The replacement's sockets, read from a trusted probe of its own (the first one went with
// the first pod).
Finding Verification::replacementHeldConnections(const json& next, std::future<ProbeSite>& probe) {
    const std::string pod = next["metadata"].value("name", "");
    try {
        const ProbeSite site = probe.get();
        replacementProbe_ = site;
        Finding held = heldConnectionsLive(
            exec(client_, pod, heldConnectionsCommand(), kProbeTimeout, site.container),
            inputs_.egress);
        endTrustedProbe(client_, ns_, pod, site);
        if (runsUnderGvisor(next, kernelInputsFor(next)))  // attack 59 D1, as for the first pod
            absorb(held, Finding{Verdict::Unproven,
                                 {"the pod runs under gVisor: the agent's sockets need not show "
                                  "in the trusted probe's /proc/net; not proven"},
                                 ""});
        noteProbeSite(held, site);
        // Apart from the first pod's lines, even where they read the same.
        for (auto& line : held.evidence) line = "as verify ended, " + line;
        return held;
    } catch (const Error& error) {
        return Finding{Verdict::Unproven,
                       {fmt::format("its held connections were not read: the trusted probe did "
                                    "not start in it ({})",
                                    error.what())},
                       ""};
    }
}

// The replacement pod's host isolation, kernel and images: the template may have changed
// since the first pod started, and this is the pod that runs now.
void Verification::judgeReplacementIsolation(std::vector<CheckResult>& checks, const json& next,
                                             const std::string& prefix,
                                             const VolumeBindings& volumes) {
    const std::string name = next["metadata"].value("name", "");
    CheckResult& host = checks[4];
    CheckResult& kernel = checks[5];
    CheckResult& image = checks[6];
    host.staticPart = alongside(
        host.staticPart, hostIsolationStatic(next, inputs_.namespaceObject, volumes), prefix);
    const bool sameClass = next["spec"].value("runtimeClassName", "") ==
                           inputs_.pod["spec"].value("runtimeClassName", "");
    const json nextContainers = next["spec"].value("containers", json::array());
    const std::string nextContainer =
        nextContainers.empty() ? "" : nextContainers.front().value("name", "");
    const IsolationFacts facts = parseIsolationFacts(
        exec(client_, name, isolationProbeCommand(), kProbeTimeout, nextContainer));
    const bool ownKernel =
        sameClass && !next["spec"].value("runtimeClassName", "").empty() && ownKernelProven();
    Finding hostNow = hostIsolationLive(
        {facts, std::nullopt, inputs_.nodeAddresses, ownKernel ? ownKernelNote() : ""});
    noteProbeSite(hostNow, podProbeSite(nextContainer));
    host.livePart = alongside(host.livePart, hostNow, prefix);
    const KernelInputs nextKernel = kernelInputsFor(next);
    kernel.staticPart =
        alongside(kernel.staticPart, kernelIsolationStatic(next, nextKernel), prefix);
    kernel.required = kernel.required || kernelIsolationRequired(next, nextKernel);
    const auto allowed = allowedRegistries(inputs_.namespaceObject.value_or(json()));
    image.required = image.required || allowed.has_value();
    image.staticPart = alongside(
        image.staticPart, imageProvenanceStatic(next, allowed, options_.trustedProbeImage), prefix);
    image.livePart = alongside(
        image.livePart, imageProvenanceLive(next, allowed, options_.trustedProbeImage), prefix);
}
}  // namespace rossoctl::verify
