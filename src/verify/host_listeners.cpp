// The node's ways into a pod past its policies: the ports of host-network pods the trusted probe
// tries (kube-router lets node-local ports by: attack 54 E5), and the kubelet's probes by `host`.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "json_access.hpp"
#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/isolation.hpp"
#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;

std::vector<std::string> kubeletHostTargets(const json& pod) {
    std::vector<std::string> found;
    for (const auto& container : json_access::allContainers(pod)) {
        const std::string name = json_access::stringAt(container, "name", "?");
        const auto look = [&](const json& handler, const std::string& what) {
            for (const char* action : {"httpGet", "tcpSocket"}) {
                const json& host = json_access::at(json_access::at(handler, action), "host");
                if (host.is_null() || (host.is_string() && host.get<std::string>().empty()))
                    continue;
                const std::string text = host.is_string() ? host.get<std::string>() : host.dump();
                found.push_back(
                    fmt::format("container {} {}: host {}", name.substr(0, 63), what,
                                text.size() > 100 ? text.substr(0, 100) + "..." : text));
            }
        };
        for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"})
            look(json_access::at(container, probe), probe);
        const json& lifecycle = json_access::at(container, "lifecycle");
        for (const char* hook : {"postStart", "preStop"})
            look(json_access::at(lifecycle, hook), std::string("lifecycle ") + hook);
    }
    return found;
}

namespace {

// The capabilities Pod Security baseline lets a container add.
bool baselineCapability(std::string name) {
    if (name.rfind("CAP_", 0) == 0) name = name.substr(4);
    static const std::set<std::string> allowed = {
        "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
        "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};
    return allowed.count(name) > 0;
}

}  // namespace

std::vector<std::string> hostAccessOf(const json& pod) {
    std::vector<std::string> found;
    const json& spec = json_access::podSpec(pod);
    const auto clipped = [](const std::string& text, std::size_t most) {
        return text.size() > most ? text.substr(0, most) + "..." : text;
    };
    for (const auto& volume : json_access::arrayAt(spec, "volumes")) {
        const json& hostPath = json_access::at(volume, "hostPath");
        if (!hostPath.is_null())
            found.push_back("hostPath " +
                            clipped(json_access::stringAt(hostPath, "path", "?"), 100));
    }
    // What Pod Security baseline refuses beyond the node's files: each reaches the host on its
    // own (an added SYS_ADMIN with no seccomp filter writes a cgroup release_agent).
    const auto unconfined = [](const json& context) {
        return json_access::stringAt(json_access::at(context, "seccompProfile"), "type") ==
                   "Unconfined" ||
               json_access::stringAt(json_access::at(context, "appArmorProfile"), "type") ==
                   "Unconfined";
    };
    // SELinux: baseline admits only the container types, and no user or role (spc_t is a
    // super-privileged container); Windows: a host process is the host's.
    const auto hostLabel = [&](const json& context, const std::string& who) {
        const json& options = json_access::at(context, "seLinuxOptions");
        const std::string type = json_access::stringAt(options, "type");
        static const std::set<std::string> baselineTypes = {
            "", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"};
        if (!baselineTypes.count(type) || !json_access::stringAt(options, "user").empty() ||
            !json_access::stringAt(options, "role").empty())
            found.push_back(who + "SELinux " + clipped(options.dump(), 80));
        if (json_access::at(json_access::at(context, "windowsOptions"), "hostProcess") == true)
            found.push_back(who + "Windows hostProcess");
    };
    if (unconfined(json_access::at(spec, "securityContext")))
        found.push_back("seccomp or AppArmor Unconfined");
    hostLabel(json_access::at(spec, "securityContext"), "");
    // The annotations that said the same before the fields, which the kubelet still honours.
    const json& annotations = json_access::at(json_access::at(pod, "metadata"), "annotations");
    if (annotations.is_object())
        for (const auto& [key, value] : annotations.items()) {
            const bool profile =
                key.rfind("container.apparmor.security.beta.kubernetes.io/", 0) == 0 ||
                key.rfind("container.seccomp.security.alpha.kubernetes.io/", 0) == 0 ||
                key == "seccomp.security.alpha.kubernetes.io/pod";
            if (profile && value == "unconfined")
                found.push_back("annotation " + json_access::shortened(key, 120) + ": unconfined");
        }
    for (const char* key : {"initContainers", "containers", "ephemeralContainers"})
        for (const auto& container : json_access::arrayAt(spec, key)) {
            const json& context = json_access::at(container, "securityContext");
            const std::string name = clipped(json_access::stringAt(container, "name", "?"), 63);
            if (json_access::at(context, "privileged") == true)
                found.push_back("privileged container " + name);
            for (const auto& added :
                 json_access::arrayAt(json_access::at(context, "capabilities"), "add"))
                if (!added.is_string() || !baselineCapability(added.get<std::string>())) {
                    found.push_back(
                        "container " + name + " adds " +
                        clipped(added.is_string() ? added.get<std::string>() : added.dump(), 40));
                    break;
                }
            if (unconfined(context))
                found.push_back("container " + name + " seccomp or AppArmor Unconfined");
            if (json_access::stringAt(context, "procMount") == "Unmasked")
                found.push_back("container " + name + " procMount Unmasked");
            hostLabel(context, "container " + name + " ");
        }
    for (const char* key : {"hostPID", "hostIPC"})
        if (json_access::at(spec, key) == true) found.push_back(key);
    return found;
}

bool trustedNamespace(const EgressInputs& egress, const std::string& name) {
    return name == "kube-system" ||
           std::find(egress.trustedNamespaces.begin(), egress.trustedNamespaces.end(), name) !=
               egress.trustedNamespaces.end();
}

std::vector<std::string> trustedNamespacesOf(const json& configMap) {
    std::vector<std::string> names;
    std::string word;
    const std::string text =
        json_access::stringAt(json_access::at(configMap, "data"), "trusted-namespaces");
    const auto flush = [&] {
        // A namespace name is a DNS label: anything else names none.
        const bool label =
            !word.empty() && word.size() <= 63 &&
            std::all_of(word.begin(), word.end(),
                        [](char c) {
                            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
                        }) &&
            word.front() != '-' && word.back() != '-';
        if (label && names.size() < 100 &&
            std::find(names.begin(), names.end(), word) == names.end())
            names.push_back(word);
        word.clear();
    };
    for (const char c : text)
        if (c == ' ' || c == ',' || c == '\n' || c == '\t' || c == '\r')
            flush();
        else
            word += c;
    flush();
    return names;
}

namespace {

// A pod's containers that set no seccomp profile, nor does the pod: the kubelet's default,
// Unconfined unless it runs with seccompDefault (attack 65 N3). The legacy annotations decide
// nothing: the API server copies them into the fields when it makes the pod, and the kubelet
// reads only the fields.
std::vector<std::string> unsetSeccomp(const json& pod, const EgressInputs& egress) {
    std::vector<std::string> unset;
    for (const auto& container : json_access::allContainers(pod)) {
        if (!seccompProfileType(pod, container).empty()) continue;
        const std::string name =
            json_access::shortened(json_access::stringAt(container, "name"), 63);
        unset.push_back(fmt::format(
            "container {} sets no seccomp profile, so runs Unconfined {}", name,
            egress.seccompDefault == false
                ? std::string("(the node's kubelet has no seccompDefault)")
                : fmt::format("unless the node's kubelet has seccompDefault ({})",
                              egress.seccompDefaultUnread.empty() ? std::string("not read")
                                                                  : egress.seccompDefaultUnread)));
    }
    return unset;
}

}  // namespace

void addClusterPods(const json& pods, const std::string& nodeName, EgressInputs& egress) {
    for (const auto& pod : json_access::arrayAt(pods, "items")) {
        const json& spec = json_access::podSpec(pod);
        const json& metadata = json_access::at(pod, "metadata");
        const std::string podNamespace =
            json_access::shortened(json_access::stringAt(metadata, "namespace", ""), 63);
        const std::string podNode = json_access::stringAt(spec, "nodeName");
        // On no node yet (a scheduling gate, no room), a pod lands where the scheduler likes
        // (attack 61 H1c, K1g).
        const bool here = podNode.empty() || podNode == nodeName;
        const std::string owner =
            fmt::format("pod {}/{}{}", podNamespace,
                        json_access::shortened(json_access::stringAt(metadata, "name", ""), 253),
                        podNode.empty()       ? ", not on a node yet"
                        : podNode == nodeName ? ""
                                              : ", on node " + json_access::shortened(podNode, 63));
        // The kubelet probes no pod that has ended (review 60 #7), and its volumes are gone. A
        // pod with host access on another node reaches this one's files once its pod is moved
        // there (a drain, a scale-down), so every node counts.
        const std::string phase = json_access::stringAt(json_access::at(pod, "status"), "phase");
        if (!trustedNamespace(egress, podNamespace) && phase != "Succeeded" && phase != "Failed") {
            for (const auto& target : kubeletHostTargets(pod))
                egress.nodeProbeHosts.push_back(fmt::format("{} ({})", owner, target));
            auto access = hostAccessOf(pod);
            if (here && egress.seccompDefault != true)
                for (auto& unset : unsetSeccomp(pod, egress)) access.push_back(std::move(unset));
            if (!access.empty())
                egress.hostAccessPods.push_back(
                    fmt::format("{} ({})", owner, json_access::fewOf(access, 2)));
            // ARP is answered on one node's pod network, but a pod of another node is made
            // again on this one by a drain, and some networks span nodes (review 66 M3).
            std::vector<std::string> raw{"its spec is not one verify reads"};
            try {
                raw = rawNetworkHolders(pod);
            } catch (const json::exception&) {  // a hostile server's wrong types: counted
            }
            if (!raw.empty())
                egress.rawNetworkPods.push_back(
                    fmt::format("{} ({})", owner, json_access::fewOf(raw, 2)));
        }
        if (const std::string hostname = json_access::stringAt(spec, "hostname"),
            subdomain = json_access::stringAt(spec, "subdomain");
            !hostname.empty() && !subdomain.empty())
            egress.podHostnames.push_back(
                {podNamespace, json_access::stringAt(metadata, "name", ""), hostname, subdomain,
                 json_access::stringAt(json_access::at(pod, "status"), "podIP")});
        // An ended pod's address is no relay, and may be from before a range changed (review
        // 68 L2).
        if ((!json_access::at(spec, "hostNetwork").is_boolean() ||
             !json_access::at(spec, "hostNetwork").get<bool>()) &&
            phase != "Succeeded" && phase != "Failed")
            for (const auto& ip : json_access::arrayAt(json_access::at(pod, "status"), "podIPs"))
                if (json_access::at(ip, "ip").is_string())
                    egress.podAddresses.emplace_back(json_access::stringAt(ip, "ip"), owner);
        // The node's own traffic is let into its pods (kube-router: the local node only).
        if (!here) continue;
        if (json_access::at(spec, "hostNetwork") != true) continue;
        if (!trustedNamespace(egress, podNamespace)) egress.hostNetworkPods.push_back(owner);
        // A native sidecar (an init container that keeps running) listens as well (E5e).
        for (const auto& container : json_access::allContainers(pod)) {
            for (const auto& port : json_access::arrayAt(container, "ports")) {
                if (!port.is_object()) continue;
                // A protocol that is not the string "TCP" is not TCP: tried as UDP, unproven.
                const bool udp = json_access::at(port, "protocol") != "TCP" &&
                                 !json_access::at(port, "protocol").is_null();
                for (const char* key : {"containerPort", "hostPort"}) {
                    if (!port.contains(key) || !port[key].is_number_integer()) continue;
                    const int number = port[key].get<int>();
                    if (number <= 0 || number > 65535) continue;
                    const bool seen =
                        std::any_of(egress.hostListeners.begin(), egress.hostListeners.end(),
                                    [&](const auto& known) {
                                        return known.port == number && known.udp == udp;
                                    });
                    if (!seen) egress.hostListeners.push_back({number, udp, owner});
                }
            }
        }
    }
}

void addHostPathVolumes(const json& volumes, EgressInputs& egress) {
    for (const auto& volume : json_access::arrayAt(volumes, "items")) {
        const json& metadata = json_access::at(volume, "metadata");
        // A provisioner makes a directory of its own for one claim (the local cluster's,
        // local-path); an admin's hand-made volume may be any path, "/" too.
        if (json_access::at(json_access::at(metadata, "annotations"),
                            "pv.kubernetes.io/provisioned-by")
                .is_string())
            continue;
        // Released or Failed, it binds again only when an admin says so.
        const std::string phase = json_access::stringAt(json_access::at(volume, "status"), "phase");
        if (phase == "Released" || phase == "Failed") continue;
        const json& spec = json_access::at(volume, "spec");
        const json& claim = json_access::at(spec, "claimRef");
        const std::string claimNamespace = json_access::stringAt(claim, "namespace");
        if (claim.is_object() && trustedNamespace(egress, claimNamespace)) continue;
        const std::string held =
            claim.is_object()
                ? fmt::format("claim {}/{}", json_access::shortened(claimNamespace, 63),
                              json_access::shortened(json_access::stringAt(claim, "name"), 253))
                : "Available: any project's claim may bind it";
        for (const char* source : {"hostPath", "local"})
            if (json_access::at(spec, source).is_object())
                egress.hostPathVolumes.push_back(fmt::format(
                    "PersistentVolume {} ({} {}, {})",
                    json_access::shortened(json_access::stringAt(metadata, "name", "?"), 253),
                    source,
                    json_access::shortened(
                        json_access::stringAt(json_access::at(spec, source), "path", "?")),
                    held));
    }
}

namespace {

// The minor version of "v1.N" or "v1.N.P..." (Pod Security's and /version's gitVersion), or -1.
int minorOfV1(const std::string& version) {
    if (version.rfind("v1.", 0) != 0) return -1;
    int minor = 0;
    std::size_t i = 3;
    for (; i < version.size() && i < 6 && version[i] >= '0' && version[i] <= '9'; ++i)
        minor = minor * 10 + (version[i] - '0');
    if (i == 3 ||
        (i < version.size() && version[i] != '.' && version[i] != '-' && version[i] != '+'))
        return -1;
    return minor;
}

constexpr int kProbeHostRuleMinor = 34;  // Pod Security baseline refuses probe hosts from v1.34

// Why a namespace admits what its Pod Security level lets by, "" when it refuses: host access
// (no baseline or restricted level) with hostAccess, else a probe's host too (a level from
// before v1.34, or a server before it). Going away, or kube-system's, it is not judged.
std::string namespaceAdmits(const json& item, int serverMinor, bool hostAccess,
                            const EgressInputs& trust) {
    const json& metadata = json_access::at(item, "metadata");
    const std::string name = json_access::stringAt(metadata, "name", "?");
    if (trustedNamespace(trust, name) ||
        json_access::stringAt(json_access::at(item, "status"), "phase") == "Terminating")
        return "";
    const json& labels = json_access::at(metadata, "labels");
    const json& enforce = json_access::at(labels, "pod-security.kubernetes.io/enforce");
    const json& version = json_access::at(labels, "pod-security.kubernetes.io/enforce-version");
    std::string why;
    if (!enforce.is_string())
        why = "no Pod Security enforce label";
    else if (enforce != "baseline" && enforce != "restricted")
        why = "enforce=" + enforce.get<std::string>().substr(0, 40);
    else if (hostAccess)
        return "";
    else if (!version.is_null() && version != "latest" &&
             !(version.is_string() && minorOfV1(version.get<std::string>()) >= kProbeHostRuleMinor))
        why = "enforce-version " +
              (version.is_string() ? version.get<std::string>() : version.dump()).substr(0, 40) +
              ", before v1.34";
    else if (serverMinor < kProbeHostRuleMinor)
        why = serverMinor < 0 ? "the server's version is not known"
                              : fmt::format("a v1.{} server", serverMinor);
    return why.empty() ? "" : fmt::format("{} ({})", json_access::shortened(name, 63), why);
}

}  // namespace

std::vector<std::string> namespacesAdmittingHostAccess(const json& namespaces,
                                                       const EgressInputs& trust) {
    std::vector<std::string> admitting;
    for (const auto& item : json_access::arrayAt(namespaces, "items"))
        if (auto why = namespaceAdmits(item, -1, true, trust); !why.empty())
            admitting.push_back(why);
    return admitting;
}

std::vector<std::string> namespacesAdmittingProbeHosts(const json& namespaces,
                                                       const json& serverVersion,
                                                       const EgressInputs& trust) {
    const int serverMinor = minorOfV1(json_access::stringAt(serverVersion, "gitVersion"));
    std::vector<std::string> admitting;
    for (const auto& item : json_access::arrayAt(namespaces, "items"))
        if (auto why = namespaceAdmits(item, serverMinor, false, trust); !why.empty())
            admitting.push_back(why);
    return admitting;
}

std::vector<ListenerProbe> hostListenerProbes(const EgressInputs& inputs,
                                              const std::vector<std::string>& gateways,
                                              std::size_t most, Finding& doubts) {
    // A listener may bind only the pod's gateway (the node's side of its link).
    std::vector<std::string> addresses = inputs.nodeAddresses;
    for (const auto& gateway : gateways)
        if (std::find(addresses.begin(), addresses.end(), gateway) == addresses.end())
            addresses.push_back(gateway);
    std::vector<ListenerProbe> probes;
    std::size_t untried = 0;
    // Not listed, host-network pods are unknown: a relay among them is not tried.
    if (!inputs.hostListenersUnread.empty()) {
        doubts.verdict = worstOf(doubts.verdict, Verdict::Unproven);
        doubts.evidence.push_back(fmt::format(
            "{}: the ports host-network pods declare on the node were not tried; whether the pod "
            "reaches one of them is not known",
            inputs.hostListenersUnread));
    }
    for (const auto& listener : inputs.hostListeners) {
        if (listener.udp) {
            doubts.verdict = worstOf(doubts.verdict, Verdict::Unproven);
            doubts.evidence.push_back(fmt::format(
                "{} on the node declares UDP port {}: whether the pod's datagrams reach it is "
                "not proven (a UDP listener answers no probe)",
                listener.owner, listener.port));
            continue;
        }
        for (const auto& address : addresses) {
            const std::pair<std::string, int> where{address, listener.port};
            const auto& api = inputs.apiServerTargets;
            if (std::find(api.begin(), api.end(), where) != api.end()) continue;
            ListenerProbe probe;
            probe.owner = listener.owner;
            probe.target.host = address;
            probe.target.port = listener.port;
            probe.target.scheme = "http";
            const bool v6 = address.find(':') != std::string::npos;
            probe.target.url =
                fmt::format("http://{}:{}/", v6 ? "[" + address + "]" : address, listener.port);
            if (!targetAllowedBy(probe.target, address, inputs.allowance).empty()) continue;
            if (probes.size() >= most) {
                ++untried;
                continue;
            }
            probes.push_back(std::move(probe));
        }
    }
    // Attack 56 L2b: the node not read, its addresses are not tried, only the pod's gateway.
    const bool tcp = std::any_of(inputs.hostListeners.begin(), inputs.hostListeners.end(),
                                 [](const auto& listener) { return !listener.udp; });
    if (tcp && inputs.nodeAddresses.empty()) {
        doubts.verdict = worstOf(doubts.verdict, Verdict::Unproven);
        doubts.evidence.push_back(fmt::format(
            "{}: host-network pods' ports were tried only at the pod's gateway, not at the "
            "node's addresses; whether the pod reaches them there is not known",
            inputs.nodeUnread.empty() ? "the node's addresses were not read" : inputs.nodeUnread));
    }
    if (untried > 0) {
        doubts.verdict = worstOf(doubts.verdict, Verdict::Unproven);
        doubts.evidence.push_back(fmt::format(
            "{} more address and port pairs that host-network pods on the node declare were not "
            "tried (at most {}): whether the pod reaches them is not proven",
            untried, most));
    }
    return probes;
}

Finding judgeHostListeners(const std::vector<Finding>& listeners) {
    Finding judged{Verdict::Pass, {}, ""};
    for (const auto& listener : listeners) {
        if (listener.verdict != Verdict::Pass) {
            absorb(judged, listener);
            continue;
        }
        judged.verdict = worstOf(judged.verdict, Verdict::Unproven);
        for (const auto& line : listener.evidence)
            judged.evidence.push_back(fmt::format(
                "{}, which proves nothing: a listener may refuse or ignore one probe (a socket "
                "filter, closing while verify runs, an address not tried), and no control tells "
                "its refusal from the policies'",
                line));
    }
    return judged;
}

}  // namespace rossoctl::verify
