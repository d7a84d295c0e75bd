#pragma once
// The two boundaries beside the seed's four: no way to the host (privileges, host namespaces,
// confinement) and kernel isolation (a sandboxed runtime, not the node's kernel). Static parts
// are pure functions of the API objects; the live part is one probe script whose output both
// checks read.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/model/project.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

// The namespace annotation `project create --runtime-class` records.
using model::kRuntimeClassAnnotation;

// --- host isolation ------------------------------------------------------------------

// Every container (init and ephemeral included) and the pod: privileged, hostPID/IPC/Network,
// hostPorts, capabilities beyond NET_BIND_SERVICE or ALL not dropped, privilege escalation,
// root, seccomp, AppArmor, procMount, unsafe sysctls, SELinux, hostPath; each evidence line
// names the container and the field. namespaceObject (nullopt: unreadable) gives the Pod
// Security enforce level, which is said, never judged: the pod's own spec holds the boundary.
Finding hostIsolationStatic(const nlohmann::json& pod,
                            const std::optional<nlohmann::json>& namespaceObject);

// A host-network pod is selected by no NetworkPolicy: its egress is the node's. Turns the
// egress check's static part into a fail naming the field; leaves it alone otherwise.
void failEgressOnHostNetwork(const nlohmann::json& pod, Finding& egressStatic);

// --- the probe both checks read -------------------------------------------------------

// Reads /proc/self/status and /proc/1/status (Uid, CapEff, CapBnd, NoNewPrivs, Seccomp, Name),
// the number of processes visible, the local addresses (/proc/net/fib_trie, /proc/net/if_inet6),
// the kernel release and boot ID; only sh builtins, so any shell will do.
std::vector<std::string> isolationProbeCommand();

struct ProcessStatus {
    bool readable = false;
    std::string name;
    std::string uid;  // "real effective saved fs"
    unsigned long long capEffective = 0;
    unsigned long long capBounding = 0;
    std::string noNewPrivs;  // "0" / "1" / "" (absent)
    std::string seccomp;     // "0" disabled, "1" strict, "2" filter
};

struct IsolationFacts {
    bool ran = false;
    std::string failure;  // why the probe did not run or say anything
    ProcessStatus self;   // the probe's own shell
    ProcessStatus pid1;   // PID 1 of the container's PID namespace
    int processes = 0;
    std::vector<std::string> localAddresses;  // textual, IPv4 and IPv6
    std::string kernelRelease;
    std::string bootId;
    std::vector<std::string> gateways;  // the default route's next hops (IPv4)
};
IsolationFacts parseIsolationFacts(const ProbeOutput& output);

// Capability names for a mask ("SYS_ADMIN, NET_RAW"); bits with no name as "cap 41".
std::string capabilityNames(unsigned long long mask);

// What the container really has, read in the pod itself (trusted = false: the agent can
// forge these lines, so they may show the boundary open, and say so when they show it
// closed) and, with --trusted-probe, whether PID 1 and the network are the node's (the probe
// runs in the pod's network namespace and a PID namespace of its own).
struct HostLiveInputs {
    IsolationFacts pod;
    std::optional<IsolationFacts> trusted;  // from the trusted probe container
    std::vector<std::string> nodeAddresses;
    // Set when the trusted probe proved a kernel of the pod's own (says which): its system
    // calls reach that kernel, so Seccomp 0 and a missing NoNewPrivs line are not the node's.
    std::string ownKernel = {};
};
Finding hostIsolationLive(const HostLiveInputs& inputs);

// The egress live part's address families: a non-loopback address of a family the probes did
// not use (probed; Any: the pod has both, the target's one was used) is unproven.
Finding otherFamilyEgressLive(const IsolationFacts& facts, AddressFamily probed);

// --- kernel isolation -----------------------------------------------------------------

struct KernelInputs {
    std::string required;    // the runtime class the project or --require-runtime-class demands
    std::string requiredBy;  // "the project (namespace annotation ...)" / "--require-runtime-class"
    std::optional<nlohmann::json> runtimeClass;  // the pod's RuntimeClass; nullopt: none/absent
    std::string runtimeClassProblem;             // why it could not be read
    std::string nodeKernel;                      // status.nodeInfo.kernelVersion
    std::string nodeBootId;                      // status.nodeInfo.bootID
    std::string nodeName;
};

// Whether the pod's RuntimeClass (its name or handler) is gVisor's (gvisor, runsc).
bool runsUnderGvisor(const nlohmann::json& pod, const KernelInputs& inputs);

// A runtime class name that promises a sandboxed kernel (gvisor, runsc, kata, firecracker).
bool claimsSandboxedRuntime(const std::string& name);
// Required when the project or a flag asks for a runtime, or the pod's own RuntimeClass
// promises a sandbox (a lie is a fail whoever asked).
bool kernelIsolationRequired(const nlohmann::json& pod, const KernelInputs& inputs);

// runtimeClassName against what is required, the RuntimeClass's handler, the node's kernel.
Finding kernelIsolationStatic(const nlohmann::json& pod, const KernelInputs& inputs);
// The kernel release and boot ID the pod sees against the node's; trusted: read by the trusted
// probe (an ephemeral container runs inside the same sandboxed runtime), else by the pod's own
// tools, which can forge an isolated kernel but not make a shared one look shared.
Finding kernelIsolationLive(const IsolationFacts& facts, bool trusted, const KernelInputs& inputs);

}  // namespace rossoctl::verify

namespace rossoctl::verify {

// Why --egress-target is within what the project allows (its host an allowed name, or the
// address the control reached inside an allowed CIDR on the probed TCP port), or "" when it is
// outside: a target the project allows proves nothing about denial.
std::string targetAllowedBy(const EgressTarget& target, const std::string& address,
                            const model::EgressAllowance& allowance);

// Where a pod's probes and lifecycle hooks have the kubelet connect by `host` ("container C
// readinessProbe: host H"): the kubelet connects from the node, which policies let into every
// pod, and records the answer in the pod's Events (attack 59 K1).
std::vector<std::string> kubeletHostTargets(const nlohmann::json& pod);
// How a pod reaches the node's files or processes ("hostPath /var", "privileged container C",
// "hostPID", an added capability or an unconfined profile Pod Security baseline refuses): each
// reaches every other pod's volumes on the node (attack 60 H1, attack 61).
std::vector<std::string> hostAccessOf(const nlohmann::json& pod);
// The namespaces of a NamespaceList whose Pod Security admits a pod whose probe or hook names a
// host ("NAME (why)"), kube-system and trust.trustedNamespaces left out: baseline refuses one
// from v1.34, so a namespace refuses only if it enforces baseline or restricted at a version
// from v1.34 (or latest) and the server (its /version) is v1.34 or later.
std::vector<std::string> namespacesAdmittingProbeHosts(const nlohmann::json& namespaces,
                                                       const nlohmann::json& serverVersion,
                                                       const EgressInputs& trust = EgressInputs());
// Those that enforce neither baseline nor restricted: they admit hostPath volumes and
// privileged pods at any version.
std::vector<std::string> namespacesAdmittingHostAccess(const nlohmann::json& namespaces,
                                                       const EgressInputs& trust = EgressInputs());

// One connect attempt the trusted probe makes to a port a host-network pod declares.
struct ListenerProbe {
    EgressTarget target;  // http://ADDRESS:PORT/
    std::string owner;    // "pod NAMESPACE/NAME"
};
// The declared TCP ports of host-network pods on the node (inputs.hostListeners) at each of the
// node's addresses and the pod's gateways, leaving out the API server's targets and what the
// project allows, at most `most`; a UDP port, and every pair past `most`, is an unproven line in
// `doubts` (never a silent pass: attack 55 E5c, E5d).
std::vector<ListenerProbe> hostListenerProbes(const EgressInputs& inputs,
                                              const std::vector<std::string>& gateways,
                                              std::size_t most, Finding& doubts);

// The host listeners' readings (attack 56 E5f-h): a listener may refuse or ignore one probe (a
// socket filter, closing while verify runs, an address not tried), and no control tells its
// refusal from the policies' (kube-router lets the NodePort range by and filters the kubelet's
// port), so "no connection" is unproven; a connection fails.
Finding judgeHostListeners(const std::vector<Finding>& listeners);

}  // namespace rossoctl::verify
