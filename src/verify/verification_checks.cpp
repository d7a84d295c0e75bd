// The checks that read the pod without changing it: token, egress, limits, host and kernel
// isolation, image provenance; each its static part (the pod and the Sandbox's template) and
// its live probe.
#include <fmt/format.h>

#include <algorithm>
#include <future>

#include "rossoctl/model/egress_gate.hpp"
#include "rossoctl/verify/egress_gate.hpp"
#include "rossoctl/verify/image_provenance.hpp"
#include "verification.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using std::chrono::milliseconds;

// The static parts as the pod and as the Sandbox's template would make it.
Finding Verification::tokenStaticOf(const json& pod, const std::optional<json>& account,
                                    const VolumeBindings& volumes) const {
    Finding finding = tokenStatic(pod, account, inputs_.tokenSecrets);
    absorb(finding, credentialsStatic(pod, inputs_.credentialSources, inputs_.clusterIssuer,
                                      inputs_.clientAuthorities, volumes));
    absorb(finding, externalNamesStatic(inputs_.externalNames, inputs_.clusterIssuer));
    absorb(finding,
           serviceNamesStatic(pod, inputs_.externalNames, inputs_.egress, inputs_.clusterIssuer));
    absorb(finding, claimSharers(CheckKind::ServiceAccountToken, pod, inputs_.egress.namespacePods,
                                 podName_));
    return finding;
}

CheckResult Verification::tokenCheck() {
    CheckResult result;
    result.kind = CheckKind::ServiceAccountToken;
    result.staticPart = withTemplate([&](const json& pod, bool next) {
        Finding finding =
            tokenStaticOf(pod, next ? inputs_.templateServiceAccount : inputs_.serviceAccount,
                          next ? inputs_.templateVolumes : inputs_.volumes);
        // The node's files are the cluster's, the same for every pod: said once.
        if (!next)
            absorb(finding,
                   hostAccessNeighbours(inputs_.egress, "that no credential is placed there"));
        return finding;
    });
    result.livePart = tokenLive(execInCurrentPod(tokenProbeCommand()));
    result.livePart.probe = "sh";
    noteProbeSite(result.livePart, podProbeSite(inputs_.container.value("name", "")));
    return result;
}

CheckResult Verification::egressCheck() {
    CheckResult result;
    result.kind = CheckKind::Egress;
    const std::string gateImage = model::gateImageOf(inputs_.namespaceObject);
    result.staticPart = withTemplate([&](const json& pod, bool next) {
        Finding finding = egressStatic(pod, inputs_.networkPolicies, inputs_.egress);
        failEgressOnHostNetwork(pod, finding);
        absorb(finding,
               claimSharers(CheckKind::Egress, pod, inputs_.egress.namespacePods, podName_));
        // The pods it makes next start with the gate, or their first milliseconds are open.
        if (next) absorb(finding, egressGateStatic(pod, gateImage));
        // The kubelet's way in is the cluster's, the same for every pod: said once.
        if (!next) absorb(finding, kubeletRelays(inputs_.egress));
        return finding;
    });
    EgressTarget target = options_.egressTarget;
    target.family = podAddressFamily(inputs_.pod);
    const ControlResult reached = options_.control
                                      ? options_.control(target, kControlTimeout)
                                      : ControlResult{false, "", {}, "", "no control probe"};
    if (const std::string allowed =
            targetAllowedBy(target, reached.address, inputs_.egress.allowance);
        !allowed.empty()) {
        result.livePart = Finding{
            Verdict::Unproven,
            {fmt::format("unproven: the target is on the allow-list ({}); pick one outside it",
                         allowed)},
            ""};
        return result;
    }
    // Without a control the probe still runs: a connection from the pod is a fail anyway.
    const milliseconds connect =
        reached.reached ? probeConnectTimeout(reached) : milliseconds(1000);
    std::call_once(probeSiteOnce_, [this] { startProbeSite(); });
    if (!trustedProbeProblem_.empty()) {
        result.livePart = Finding{Verdict::Unproven, {trustedProbeProblem_}, ""};
        noteProbeSite(result.livePart, egressSite_);
    } else {
        // Before any connection of the probe's own: what the namespace already holds.
        Finding held;
        if (egressSite_.trusted())
            held = heldConnectionsLive(
                execInCurrentPod(heldConnectionsCommand(), kProbeTimeout, egressSite_.container),
                inputs_.egress);
        // gVisor's sockets are its sentry's: a container the runtime runs as a sandbox of its
        // own (the local cluster's runsc does) keeps the agent's out of the probe's /proc/net,
        // and verify cannot tell that mode from a shared sandbox (attack 59 D1).
        if (egressSite_.trusted() && runsUnderGvisor(inputs_.pod, inputs_.kernel))
            absorb(held, Finding{Verdict::Unproven,
                                 {"the pod runs under gVisor (its RuntimeClass names runsc or "
                                  "gvisor): a container's sockets are its gVisor sentry's, so the "
                                  "agent's held connections and listeners need not show in the "
                                  "trusted probe's /proc/net; not proven"},
                                 ""});
        // The API server's addresses are probed beside the target: each waits out its own
        // time-out, and one after another they were most of verify's wall time.
        std::future<void> apiServer;
        if (egressSite_.trusted())
            apiServer = std::async(std::launch::async, [this] {
                std::call_once(apiServerOnce_, [this] { probeApiServer(); });
            });
        const auto command = egressProbeCommand(target, reached.address, connect);
        const ProbeOutput output =
            execInCurrentPod(command, connect + kExecMargin, egressSite_.container);
        result.livePart = egressLive(output, target, reached);
        if (egressSite_.trusted()) {
            absorb(result.livePart, held);
            // startProbeSite read the trusted probe's addresses when it started it.
            IsolationFacts addresses;
            addresses.failure = "not read";
            absorb(result.livePart, otherFamilyEgressLive(
                                        trustedFacts_ ? *trustedFacts_ : addresses, target.family));
            apiServer.get();
            absorb(result.livePart, apiServerReach_);
        }
        noteProbeSite(result.livePart, egressSite_);
        result.livePart = withoutForgeableDenial(result.livePart);
        // The trusted probe's filesystem is its own; the pod's tools are checked.
        if (!egressSite_.trusted())
            result.livePart = withoutWritableTool(result.livePart, output, inputs_.container);
    }
    // What verify reads is held, not what was sent: the window before the policies held is
    // closed only by rossoctl's gate (attack 56 E7).
    const Finding gate = egressGateLive(inputs_.pod, gateImage, egressSite_);
    absorb(result.livePart, gate);
    if (gate.verdict == Verdict::Pass)
        absorb(result.livePart, egressGateTargetClaims(inputs_.externalNames, inputs_.egress));
    result.livePart = withoutSpoofableDenial(result.livePart, rawNetworkHoldersWithTemplate());
    return result;
}

// Only from the trusted probe: the pod's own tools could hide a connection. Each address the
// project allows is left out (the static half judges those rules); a connection elsewhere is a
// fail (a network plugin that lets node ports through, attack 53 F1), to the API server or to
// a port a host-network pod of the node declares.
void Verification::probeApiServer() {
    apiServerReach_.verdict = Verdict::Pass;
    if (!egressSite_.trusted() || !trustedProbeProblem_.empty()) return;
    // A few are enough (each costs an exec); all at once, read in order.
    std::vector<std::future<Finding>> probes;
    std::size_t tried = 0;
    for (const auto& [address, port] : inputs_.egress.apiServerTargets) {
        if (++tried > 6) break;
        EgressTarget target;
        target.host = address;
        target.port = port;
        const bool v6 = address.find(':') != std::string::npos;
        target.scheme = "http";  // as apiServerReachLive reads it
        target.url = fmt::format("http://{}:{}/", v6 ? "[" + address + "]" : address, port);
        if (!targetAllowedBy(target, address, inputs_.egress.allowance).empty()) continue;
        const bool service = tried <= inputs_.egress.apiServerServiceCount;
        probes.push_back(std::async(std::launch::async, [this, target, service] {
            const auto command = egressProbeCommand(target, "", milliseconds(1300));
            const ProbeOutput output =
                execInCurrentPod(command, milliseconds(1300) + kExecMargin, egressSite_.container);
            return apiServerReachLive(output, target.host, target.port,
                                      service ? "the kubernetes Service" : "an endpoint");
        }));
    }
    // A host-network listener on the node: kube-router lets node-local NodePort-range ports by
    // whatever the policies say (attack 54 E5); any engine may for ports it does not police.
    Finding listenerDoubts{Verdict::Pass, {}, ""};
    constexpr std::size_t kMostListenerProbes = 12;  // each costs an exec
    auto reach = [this](const ListenerProbe& listener) {
        return std::async(std::launch::async, [this, listener] {
            const auto command = egressProbeCommand(listener.target, "", milliseconds(1300));
            const ProbeOutput output =
                execInCurrentPod(command, milliseconds(1300) + kExecMargin, egressSite_.container);
            return hostListenerReachLive(output, listener.target.host, listener.target.port,
                                         listener.owner);
        });
    };
    std::vector<std::future<Finding>> listenerProbes;
    for (auto& listener : hostListenerProbes(
             inputs_.egress, trustedFacts_ ? trustedFacts_->gateways : std::vector<std::string>{},
             kMostListenerProbes, listenerDoubts))
        listenerProbes.push_back(reach(listener));
    absorb(apiServerReach_, listenerDoubts);
    for (auto& probe : probes) absorb(apiServerReach_, probe.get());
    std::vector<Finding> listeners;
    for (auto& probe : listenerProbes) listeners.push_back(probe.get());
    absorb(apiServerReach_, judgeHostListeners(listeners));
}

// A container of the pod or of the next one that could forge a denial in its network namespace.
std::vector<std::string> Verification::rawNetworkHoldersWithTemplate() const {
    std::vector<std::string> holders = rawNetworkHolders(inputs_.pod);
    if (inputs_.templatePod.is_object())
        for (const auto& holder : rawNetworkHolders(inputs_.templatePod))
            holders.push_back(kTemplatePrefix + holder);
    return holders;
}

CheckResult Verification::limitsCheck() {
    CheckResult result;
    result.kind = CheckKind::Limits;
    result.staticPart = withTemplate([&](const json& pod) {
        Finding finding = limitsStatic(pod, inputs_.sandbox, inputs_.resourceQuotas,
                                       inputs_.deadline, inputs_.node, inputs_.nodeUnread);
        absorb(finding, memoryVolumesOn(pod, inputs_.egress));
        return finding;
    });
    // gVisor's cgroupfs shows no limit; its view of each container is sized to the limit.
    const bool ownKernel = ownKernelProven();
    result.livePart = limitsLiveEveryContainer(
        inputs_.pod,
        [&](const std::vector<std::string>& command, const std::string& name) {
            return execInCurrentPod(command, kProbeTimeout, name);
        },
        ownKernel);
    absorb(result.livePart, podCgroupsOn(inputs_.pod, inputs_.egress));
    if (ownKernel)
        result.livePart.evidence.insert(result.livePart.evidence.begin(), ownKernelNote());
    noteProbeSite(result.livePart, podProbeSite(inputs_.container.value("name", "")));
    return result;
}

// One probe, read once for both isolation checks: in the pod, and with --trusted-probe
// also in the trusted container (never instead: the capabilities are the pod's own).
void Verification::readIsolationFacts() {
    podFacts_ = parseIsolationFacts(execInCurrentPod(isolationProbeCommand()));
    if (options_.trustedProbeImage.empty()) return;
    std::call_once(probeSiteOnce_, [this] { startProbeSite(); });
    // startProbeSite read the trusted probe's facts when it started it.
    if (!trustedProbeProblem_.empty() || !trustedFacts_) {
        IsolationFacts trusted;
        trusted.failure =
            trustedProbeProblem_.empty() ? "the trusted probe was not read" : trustedProbeProblem_;
        trustedFacts_ = trusted;
    }
}

bool Verification::ownKernelProven() {
    std::call_once(isolationFactsOnce_, [this] { readIsolationFacts(); });
    return trustedFacts_ &&
           kernelIsolationLive(*trustedFacts_, true, inputs_.kernel).verdict == Verdict::Pass;
}

std::string Verification::ownKernelNote() const {
    return fmt::format(
        "the pod runs kernel {} of its own (the trusted probe's reading), not the node's {}",
        trustedFacts_ ? trustedFacts_->kernelRelease : "", inputs_.kernel.nodeKernel);
}

CheckResult Verification::hostIsolationCheck() {
    CheckResult result;
    result.kind = CheckKind::HostIsolation;
    result.staticPart = withTemplate([&](const json& pod, bool next) {
        return hostIsolationStatic(pod, inputs_.namespaceObject,
                                   next ? inputs_.templateVolumes : inputs_.volumes);
    });
    std::call_once(isolationFactsOnce_, [this] { readIsolationFacts(); });
    const bool ownKernel = ownKernelProven();
    result.livePart = hostIsolationLive(
        {podFacts_, trustedFacts_, inputs_.nodeAddresses, ownKernel ? ownKernelNote() : ""});
    if (trustedFacts_) noteProbeSite(result.livePart, egressSite_);
    noteProbeSite(result.livePart, podProbeSite(inputs_.container.value("name", "")));
    return result;
}

CheckResult Verification::kernelIsolationCheck() {
    CheckResult result;
    result.kind = CheckKind::KernelIsolation;
    // The template's own runtime class, read for it: another class is another kernel.
    result.staticPart = withTemplate([&](const json& pod, bool next) {
        return kernelIsolationStatic(pod, next ? inputs_.templateKernel : inputs_.kernel);
    });
    result.required = kernelIsolationRequired(inputs_.pod, inputs_.kernel) ||
                      (inputs_.templatePod.is_object() &&
                       kernelIsolationRequired(inputs_.templatePod, inputs_.templateKernel));
    std::call_once(isolationFactsOnce_, [this] { readIsolationFacts(); });
    result.livePart = kernelIsolationLive(trustedFacts_ ? *trustedFacts_ : podFacts_,
                                          trustedFacts_.has_value(), inputs_.kernel);
    noteProbeSite(result.livePart,
                  trustedFacts_ ? egressSite_ : podProbeSite(inputs_.container.value("name", "")));
    return result;
}

CheckResult Verification::imageProvenanceCheck() {
    CheckResult result;
    result.kind = CheckKind::ImageProvenance;
    const auto allowed = allowedRegistries(inputs_.namespaceObject.value_or(json()));
    result.required = allowed.has_value();
    result.staticPart = withTemplate([&](const json& pod) {
        return imageProvenanceStatic(pod, allowed, options_.trustedProbeImage);
    });
    result.livePart = imageProvenanceLive(inputs_.pod, allowed, options_.trustedProbeImage);
    return result;
}
namespace {

std::string configzUnread(const EgressInputs& node) {
    return node.seccompDefaultUnread.empty() ? "its configz was not read"
                                             : node.seccompDefaultUnread;
}

}  // namespace

Finding memoryVolumesOn(const json& pod, const EgressInputs& node) {
    return memoryVolumesStatic(pod, node.podCgroups, configzUnread(node));
}

Finding Verification::podCgroupsOn(const json& pod, const EgressInputs& node) const {
    return podCgroupsLive(pod, node.podCgroups, configzUnread(node),
                          model::gateImageOf(inputs_.namespaceObject));
}

}  // namespace rossoctl::verify
