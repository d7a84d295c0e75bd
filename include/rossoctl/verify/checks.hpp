#pragma once
// The four boundaries of `sandbox verify`: each check's static part is a pure function of the
// objects read from the API, and each live probe is a shell script plus a pure parser of what
// it printed, so both are unit-tested without a cluster.
#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/app/project_dns.hpp"
#include "rossoctl/model/egress.hpp"
#include "rossoctl/model/host_resolver.hpp"

namespace rossoctl::verify {

enum class Verdict { Pass, Fail, Unproven };
std::string verdictName(Verdict verdict);  // "pass", "fail", "unproven"

// One half of a check: its verdict and the evidence lines that justify it.
struct Finding {
    Verdict verdict = Verdict::Unproven;
    std::vector<std::string> evidence;
    std::string probe;  // the live tool used (curl, wget, ...); empty for static parts
    // Ran in the pod's own PID space: the agent could have written what it printed.
    bool forgeable = false;
};

// Fail over unproven over pass.
Verdict worstOf(Verdict a, Verdict b);
// Adds part's evidence (each line after `prefix`) to into; into's verdict becomes the worse.
void absorb(Finding& into, const Finding& part, const std::string& prefix = "");

// A check passes only when both halves pass; a failing half fails it; anything else is
// unproven.
Verdict combine(Verdict staticVerdict, Verdict liveVerdict);

enum class CheckKind {
    ServiceAccountToken,
    Egress,
    Limits,
    NothingSurvives,
    HostIsolation,    // isolation.hpp
    KernelIsolation,  // isolation.hpp
    ImageProvenance,  // image_provenance.hpp
};
std::string checkId(CheckKind kind);     // "service-account-token", ...
std::string checkTitle(CheckKind kind);  // "no service-account token", ...

struct CheckResult {
    CheckKind kind = CheckKind::ServiceAccountToken;
    Finding staticPart;
    Finding livePart;
    std::chrono::milliseconds took{0};
    // false: reported, but neither the sandbox's verdict nor the exit code counts it (kernel
    // isolation where no runtime is required).
    bool required = true;
    Verdict verdict() const { return combine(staticPart.verdict, livePart.verdict); }
};

// --- static parts ---------------------------------------------------------------------

// automountServiceAccountToken false on the pod (or its ServiceAccount when the pod leaves it
// unset), no projected serviceAccountToken volume, and no legacy token Secret (by name, from
// tokenSecrets) in a volume, a projected source, env secretKeyRef or envFrom of any container.
// serviceAccount: nullopt = not found; tokenSecrets: nullopt = could not be listed.
Finding tokenStatic(
    const nlohmann::json& pod, const std::optional<nlohmann::json>& serviceAccount,
    const std::optional<std::vector<std::string>>& tokenSecrets = std::vector<std::string>{});

// A metav1.LabelSelector (matchLabels and matchExpressions) against a label map.
bool labelSelectorMatches(const nlohmann::json& selector, const nlohmann::json& labels);

// The cluster DNS: where pods reach it and its Corefile (app/project_dns.hpp).
using ClusterDns = app::ClusterDns;

// What the egress check reads besides the NetworkPolicies.
struct EgressInputs {
    EgressInputs();                 // the allowance: DNS to kube-dns only
    nlohmann::json ciliumPolicies;  // a List's items; null when not served
    model::EgressAllowance allowance;
    std::vector<std::string> apiServerAddresses;
    std::vector<std::string> nodeAddresses;
    std::string nodeUnread;  // "node X was not read (forbidden)" when its addresses are unknown
    // Where a pod reaches the API server: the `kubernetes` Service's cluster IPs with its port
    // and its endpoints' address:port; the trusted probe tries each (F1 of attack 53).
    std::vector<std::pair<std::string, int>> apiServerTargets;
    std::size_t apiServerServiceCount = 0;  // the first this many are the Service's
    // The ports host-network pods on the pod's node declare: a policy engine may let node-local
    // ports by (kube-router: the NodePort range, attack 54 E5); tried at the node's addresses
    // and the pod's gateway.
    struct HostListener {
        int port = 0;
        bool udp = false;
        std::string owner;  // "pod NAMESPACE/NAME"
    };
    std::vector<HostListener> hostListeners;
    // Host-network pods on the node outside kube-system ("pod NS/NAME"): each connects into
    // the pod past its policies, as the node does.
    std::vector<std::string> hostNetworkPods;
    // Probes and lifecycle hooks of pods on the node outside kube-system that name a `host`
    // ("pod NS/NAME (container C readinessProbe: host H)"): the kubelet connects there from the
    // node, past the pod's policies, and the answer lands in that pod's Events (attack 59 K1).
    std::vector<std::string> nodeProbeHosts;
    // Pods on the node outside kube-system, not ended, with the node's files or processes
    // ("pod NS/NAME (hostPath /var)"): one reads and writes this pod's volumes on the node,
    // whatever its namespace enforces now (a level set later leaves running the pods it refuses).
    std::vector<std::string> hostAccessPods;
    // Pods outside kube-system, not ended, on any node, that can hold NET_RAW or NET_ADMIN ("pod
    // NS/NAME (container C keeps the default NET_RAW ...)"): on the pods' shared network one
    // answers ARP for an address this pod may reach (kube-dns) and relays or keeps what it sends
    // (attack 65 N2). Baseline admits them: root keeps the runtime's default NET_RAW.
    std::vector<std::string> rawNetworkPods;
    // Every pod's own hostname under a subdomain (spec.hostname, spec.subdomain): a headless
    // Service named like the subdomain publishes it, and the cluster DNS answers the pod's
    // address with it to every namespace (attack 65 T1: a token spelled out by 18 such pods).
    struct PublishedHostname {
        std::string ns, pod, hostname, subdomain, address;
    };
    std::vector<PublishedHostname> podHostnames;
    // The pod's node's kubelet `seccompDefault` (its configz through the API server): a container
    // whose spec sets no seccomp profile runs Unconfined without it, so a neighbour such as that
    // counts as an explicit Unconfined one does (attack 65 N3). nullopt: not read, and
    // seccompDefaultUnread says why.
    std::optional<bool> seccompDefault;
    std::string seccompDefaultUnread;
    // The same kubelet's `cgroupsPerQOS`: without it no pod cgroup holds what a finished or
    // restarted container left in a memory-backed volume (attack 67 C2). nullopt: not read.
    std::optional<bool> podCgroups;
    // The resourceVersion of the cluster's pod list: the end replays every pod written since
    // (attack 66 N1: a NET_RAW pod made while verify ran). "": not listed.
    std::string podsVersion;
    // Namespaces besides kube-system that the cluster's admin vouches for in the ConfigMap
    // kube-system/rossoctl-verify (key trusted-namespaces: a node exporter's, a CSI plugin's):
    // their pods' host access and probes are not counted, and the evidence says so (review 61
    // #4: else no cluster that runs one outside kube-system ever passes).
    std::vector<std::string> trustedNamespaces;
    // Hand-made PersistentVolumes of a node's files (hostPath, local) that a claim outside
    // kube-system holds or may bind ("PersistentVolume P (hostPath /var, Available: ...)"): a
    // pod that mounts one has them as a hostPath pod does, at any Pod Security level (review 61
    // #6). A provisioner's volume is a directory it made for its claim, and is not counted.
    std::vector<std::string> hostPathVolumes;
    // Why PersistentVolumes could not be listed: such a volume is then not ruled out.
    std::string hostPathVolumesUnread;
    // The cluster's pod addresses verify knows, with whose they are: the node's pod ranges
    // (spec.podCIDRs) and the pods on it ("10.250.0.31", "pod NS/NAME"). An allowed range that
    // holds one reaches a pod with egress of its own, a relay (attack 61 C1).
    std::vector<std::pair<std::string, std::string>> podAddresses;
    // Every node's pod ranges ("10.250.0.0/24", "node N's pod range"); nullopt when not all are
    // known (a node names none, as where the network plugin allocates; nodes not listed), and
    // podRangesUnknown says why: an allowed private range may then hold a pod later (attack 62
    // C1b).
    std::optional<std::vector<std::pair<std::string, std::string>>> podRanges;
    std::string podRangesUnknown;
    // Namespaces outside kube-system whose Pod Security admits such a pod at any time ("NAME
    // (no enforce label)"); nullopt: not read, and probeHostNamespacesUnread says why.
    std::optional<std::vector<std::string>> probeHostNamespaces;
    std::string probeHostNamespacesUnread;
    // Of those, the namespaces that admit host access (hostPath, privileged; no baseline or
    // restricted level): a pod there reads and writes this pod's volumes on the node.
    std::optional<std::vector<std::string>> hostAccessNamespaces;
    // Why hostListeners could not be read ("pods on node X not listed (forbidden)"): unproven.
    std::string hostListenersUnread;
    // The addresses of the namespace's pods the pod's own policies grant: a connection held to
    // one is the static half's to judge.
    std::vector<std::string> projectPodAddresses;
    // The namespace's pods (items), for who an ingress rule lets in; nullopt: not read.
    std::optional<nlohmann::json> namespacePods;
    int probedPort = 443;
    std::vector<std::string> readProblems;    // what could not be read, as evidence
    std::vector<std::string> unreadPolicies;  // policies that could not be read: unproven
    // The pods each peer of a rule with a named port selects (model::podPeerKey; nullopt: could
    // not be listed); a peer not here is not resolved.
    std::map<std::string, std::optional<std::vector<nlohmann::json>>> peerPods;
    // Judged when the pod may ask kube-dns; nullopt: not read (offline callers).
    std::optional<ClusterDns> clusterDns;
};

// The pod's effective egress (model/egress.hpp) against the project's allowance: fails on any
// opening beyond it, naming policy, rule and one open destination; unproven when a rule could
// not be evaluated. DNS to kube-dns that recurses outside (inputs.clusterDns) fails; one whose
// configuration cannot be read is unproven.
// What the namespace's NetworkPolicies let connect in to the pod, a line each: a connection in
// carries data out as well as one out does (attack 56 N1). Any source, an ipBlock or another
// namespace is open; a pod of its own namespace is open when its own egress goes beyond the
// project (a relay, attack 57 N1b), in doubt when the namespace's pods were not read.
struct IngressOpenings {
    std::vector<std::string> open;    // fail
    std::vector<std::string> doubts;  // unproven
};
IngressOpenings ingressOpenings(const nlohmann::json& pod, const nlohmann::json& networkPolicies,
                                const EgressInputs& inputs);
// Egress beyond the project that the namespace's policies give a pod labelled otherwise than
// pod (none, or to match a policy's podSelector), as a line; "" when no such label set opens
// it. A pod's labels are not its own to keep: a claim strips a warm spare's (attack 63 P1).
std::string labelledEgressOpening(const nlohmann::json& pod, const nlohmann::json& networkPolicies,
                                  const EgressInputs& inputs);

// The kubelet as a way in (attack 59 K1): a pod on the node whose probe or hook names a host
// now, or a namespace that admits one later, is unproven; so is not knowing.
Finding kubeletRelays(const EgressInputs& inputs);
// A namespace that admits host access (attack 60 H1), or a pod on the node that has it: that
// pod may read and write this pod's files on the node; so may one verify could not list.
// `what` names the boundary ("that no credential is placed there").
Finding hostAccessNeighbours(const EgressInputs& inputs, const std::string& what);
// What verify takes from the cluster's pods (a PodList page's items), for a pod on node
// nodeName: pods with host access and probes naming a host on any node or none, pod addresses,
// and host-network pods and their ports on this node or on none yet.
void addClusterPods(const nlohmann::json& pods, const std::string& nodeName, EgressInputs& egress);
// kube-system, or one of egress.trustedNamespaces.
bool trustedNamespace(const EgressInputs& egress, const std::string& name);
// The names in the ConfigMap's trusted-namespaces (separated by spaces, commas or lines); those
// that are no namespace name are left out.
std::vector<std::string> trustedNamespacesOf(const nlohmann::json& configMap);

// Adds the hand-made hostPath and local PersistentVolumes of a page of them to
// egress.hostPathVolumes.
void addHostPathVolumes(const nlohmann::json& volumes, EgressInputs& egress);

Finding egressStatic(const nlohmann::json& pod, const nlohmann::json& networkPolicies,
                     const EgressInputs& inputs = EgressInputs());

// The longest deadline that counts, from now: the project's default lifetime (24h unset).
struct DeadlineBound {
    std::chrono::system_clock::time_point now;
    std::chrono::seconds longest{std::chrono::hours(24)};
    std::string origin = "the default lifetime";  // for evidence
};

// A memory-backed emptyDir's pages stay when the container that wrote them ends (an init
// container) or restarts, charged to the pod's cgroup; a node whose kubelet makes none
// (cgroupsPerQOS false, or not read: `why`) bounds them by nothing (attack 67 C2).
Finding memoryVolumesStatic(const nlohmann::json& pod, const std::optional<bool>& podCgroups,
                            const std::string& why);

// Every container has cpu and memory limits above zero and no more than the pod's node has,
// alone or together; activeDeadlineSeconds or the Sandbox's shutdownTime ends within bound; a
// ResourceQuota (a List's items) covering the pod caps limits.cpu and limits.memory. node: the
// Node object; null when not read, with nodeUnread saying why ("node X was not read
// (forbidden)"): then, as for a node that gives no capacity, whether the limits fit it is
// unproven (attack 56 L2).
Finding limitsStatic(const nlohmann::json& pod, const nlohmann::json& sandbox,
                     const nlohmann::json& resourceQuotas, const DeadlineBound& bound,
                     const nlohmann::json& node, const std::string& nodeUnread = "");

// No volume that outlives the pod (PVC, hostPath, network and cloud disks, a generic ephemeral
// volume whose StorageClass retains it, ...), no volumeClaimTemplates on the Sandbox; a volume
// type not known is unproven. storageClasses: a List's items; null: could not be read.
Finding nothingSurvivesStatic(const nlohmann::json& pod,
                              const nlohmann::json& sandbox = nlohmann::json(),
                              const nlohmann::json& storageClasses = nlohmann::json());

// --- live probes: the command to exec, and what its output means ----------------------

// What an exec printed; `started` false when the command could not be run at all.
struct ProbeOutput {
    bool started = true;
    int exitCode = 0;
    bool timedOut = false;
    std::string stdoutText;
    std::string stderrText;
    std::string failure;  // why it could not start (the exec Status message or the error)
    // The node answered that the container does not run: it ended after the pod was read (an
    // ephemeral container never starts again).
    bool containerGone = false;
};

inline constexpr const char* kTokenPath = "/var/run/secrets/kubernetes.io/serviceaccount/token";

std::vector<std::string> tokenProbeCommand();
Finding tokenLive(const ProbeOutput& output);

// The address families a pod can reach: the control must use one the pod has, or the pod's
// "Network is unreachable" (no route of that family) would look like a denial.
enum class AddressFamily { Any, IPv4, IPv6 };

struct EgressTarget {
    std::string url;
    std::string scheme;  // http or https
    std::string host;
    int port = 0;
    AddressFamily family = AddressFamily::Any;  // what the control may connect over
};

// IPv4 or IPv6 when every address in the pod's status is of that family, else Any.
AddressFamily podAddressFamily(const nlohmann::json& pod);
// http(s)://HOST[:PORT][/PATH]; nullopt when it is not such a URL.
std::optional<EgressTarget> parseEgressTarget(const std::string& url);

// The positive control: the same target reached, in the same run, from a vantage point no
// egress policy of the sandbox governs. Without it a denial in the pod proves nothing (the
// target may be down, a typo, or the cluster may have no internet at all).
struct ControlResult {
    bool reached = false;
    std::string address;  // the address connected to; the pod probes the same one
    std::chrono::microseconds roundTrip{0};
    std::string vantage;  // "this machine"
    std::string detail;   // why it was not reached
};
using ControlProbe =
    std::function<ControlResult(const EgressTarget&, std::chrono::milliseconds timeout)>;
// A TCP connection from the machine running rossoctl, to the addresses `resolver` gives.
ControlResult connectFromHere(model::HostResolver& resolver, const EgressTarget& target,
                              std::chrono::milliseconds timeout);
// The pod's connect time-out: many round trips of the control, at least 1 s, at most 5 s.
std::chrono::milliseconds probeConnectTimeout(const ControlResult& control);

// Where the egress probe looks for its tool: the image's system directories (never the pod's
// PATH, which may name a directory the agent writes).
inline constexpr const char* kImageToolPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
// A denial by a tool the pod could have replaced (its resolved path under a writable mount of
// container, or a writable root filesystem) is unproven; else the evidence names the path.
Finding withoutWritableTool(Finding live, const ProbeOutput& output,
                            const nlohmann::json& container);
// Why the agent can write a tool at `path` (under a writable mount, or a writable root
// filesystem); "" when it is on the image's read-only root filesystem.
std::string writableToolPlace(const std::string& path, const nlohmann::json& container);

// The tools the egress probe tries, in order; the first the image has is used.
std::vector<std::string> egressProbeOrder();
// address: the control's address (the pod connects to the same one; empty: the URL's host).
std::vector<std::string> egressProbeCommand(
    const EgressTarget& target, const std::string& address = "",
    std::chrono::milliseconds connectTimeout = std::chrono::seconds(5));
// Only a tool-level connect failure with a reached control is a pass; a connection is a fail;
// a time-out of the exec, a missing tool or a message not known is unproven.
Finding egressLive(const ProbeOutput& output, const EgressTarget& target,
                   const ControlResult& control);

// Reads /proc/net/{tcp,tcp6,udp,udp6} of the network namespace it runs in, with markers.
std::vector<std::string> heldConnectionsCommand();
// Fail for each connection the namespace already holds (ESTABLISHED, or a connected UDP socket)
// to a remote that is not loopback, not the pod itself and not allowed (inputs' allowance,
// the cluster DNS on port 53, the project's pods); unproven when /proc/net/tcp was not read or a
// held connection may be an incoming one; pass otherwise. Never about the probe's own sockets:
// it runs before them.
Finding heldConnectionsLive(const ProbeOutput& output, const EgressInputs& inputs);
// One connect attempt to the API server (address, port) from the trusted probe: egressLive's
// reading of the probe; a connection to an address the allowance does not hold is a fail.
Finding apiServerReachLive(const ProbeOutput& output, const std::string& address, int port,
                           const std::string& what);
// The same for a port a host-network pod declares at the node's address: a connection is a
// way out to the node the policies do not grant (owner names the pod).
Finding hostListenerReachLive(const ProbeOutput& output, const std::string& address, int port,
                              const std::string& owner);

// The containers of the pod that can hold NET_RAW or NET_ADMIN (privileged, added, or the
// runtime's default NET_RAW kept by a container that may be root or escalate), as evidence.
std::vector<std::string> rawNetworkHolders(const nlohmann::json& pod);
// While any container can, a live denial is unproven: it could be forged in the shared network
// namespace (an ARP spoof that drops replies, a forged reset).
Finding withoutSpoofableDenial(Finding live, const std::vector<std::string>& holders);

std::vector<std::string> cgroupProbeCommand();
// expectedBytes: the container's memory limit; nullopt when it has none.
Finding limitsLive(const ProbeOutput& output, std::optional<long long> expectedBytes);
// The same reading in a kernel of the pod's own (gVisor): the container's MemTotal, which the
// runtime sizes to its memory limit, no more than that limit passes; anything else is unproven.
Finding limitsLiveOwnKernel(const ProbeOutput& output, std::optional<long long> expectedBytes);

// The container's memory limit in bytes, if set above zero.
std::optional<long long> memoryLimitBytes(const nlohmann::json& container);
// The container's cpu limit in millicores, if set above zero.
std::optional<long long> cpuLimitMillis(const nlohmann::json& container);
// The cgroup's cpu quota (cpu.max or cfs_quota_us) against the declared limit; none is a fail.
Finding cpuLimitLive(const ProbeOutput& output, std::optional<long long> expectedMillis);

// Where canaries go: every writable mount of the container (volumes the kubelet mounts
// read-only are left out) and the root filesystem (/tmp, /var/tmp, / unless a volume is
// mounted there).
struct CanaryPlace {
    std::string directory;
    std::string why;  // "the emptyDir volume workspace", "the root filesystem"
};
std::vector<CanaryPlace> canaryPlaces(const nlohmann::json& pod, const nlohmann::json& container);

// Writes CONTENT to each PATH (a canary per place) and says which were written; and reads
// them back after the restart, removing each that survived (a PVC keeps nothing of verify's).
std::vector<std::string> canaryWriteCommand(const std::vector<std::string>& paths,
                                            const std::string& content);
std::vector<std::string> canaryReadCommand(const std::vector<std::string>& paths);
// The paths the write command reports written (its content read back).
std::vector<std::string> canariesWritten(const ProbeOutput& output);
// "verify's canary files may remain at A, B: remove them by hand": where a canary may be left
// when it could not be read back and removed (the restart failed, or no answer came).
std::string canariesLeftNote(const std::vector<std::string>& paths);
// Pass: every written canary is gone; fail: any survived; else unproven.
Finding canariesAfterRestart(const ProbeOutput& output, const std::vector<std::string>& paths,
                             const std::string& restartSummary);

}  // namespace rossoctl::verify
