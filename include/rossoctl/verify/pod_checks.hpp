#pragma once
// What a verdict about a sandbox covers beyond one container of one pod: every container probed
// live, the Sandbox's pod template judged beside the pod (and the pod that replaces it), and
// credentials found by their shape in everything the pod can read.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/isolation.hpp"

namespace rossoctl::verify {

// Runs a probe command in the named container of the pod.
using ExecInContainer = std::function<ProbeOutput(const std::vector<std::string>& command,
                                                  const std::string& container)>;

// The containers that run beside the agent: the containers and restartable init containers
// (sidecars), each with what it is ("container", "sidecar"); those that should run and do not
// (as evidence), and the init containers that have finished.
struct RunningContainers {
    std::vector<std::pair<nlohmann::json, std::string>> running;
    std::vector<std::string> notes;
    std::vector<std::string> finished;
};
RunningContainers runningContainers(const nlohmann::json& pod);
// An ephemeral container of pod that ended: it never restarts (any status but "terminated" may
// still start, or run).
bool ephemeralContainerEnded(const nlohmann::json& pod, const std::string& name);

// On a node whose kubelet makes no pod cgroups (podCgroups not true; `why` when not read), what
// a container leaves in the pod's shared memory (SysV segments, /dev/shm) or memory-backed
// volumes when it ends or restarts is charged to no limit (attack 67 C3: an agent that made a
// 100 MiB segment and exited, three times, held 300 MiB beyond its 128Mi). Unproven when a
// container of pod has restarted, an init container other than rossoctl's egress gate (of
// gateImage) runs, or an ephemeral container other than a trusted probe has ended (one shaped
// as verify writes it runs verify's script as nobody, whatever its image: it takes the rights
// to add ephemeral containers to mimic one, and with those anything runs in the pod anyway);
// else a pass that says a later restart is not bounded.
Finding podCgroupsLive(const nlohmann::json& pod, const std::optional<bool>& podCgroups,
                       const std::string& why, const std::string& gateImage);

// The cgroup (memory and cpu) of every container that runs: the containers, restartable init
// containers and ephemeral containers. An init container that has finished is left out; one
// that should run and does not is unproven. An ephemeral container (the API allows it no
// resources) is unproven until it has ended, whatever its shape: verify adds its own trusted
// probe after it reads the pod, so one already there is another's, and anyone who may exec
// into it runs there unbounded (attack 61 L3). ownKernel: the pod runs on a kernel of its own
// (proven by the trusted probe), whose cgroup files are its own: each container's MemTotal is
// read against its memory limit instead.
Finding limitsLiveEveryContainer(const nlohmann::json& pod, const ExecInContainer& exec,
                                 bool ownKernel = false);

// --- the kernel keyring (issue 35 point 8) -----------------------------------------------

// The seccomp profile type a container runs under by its spec: its own, else the pod's;
// "Unconfined" when privileged; "" when neither sets one.
std::string seccompProfileType(const nlohmann::json& pod, const nlohmann::json& container);
// One container's live seccomp mode (the probe's shell, and PID 1 when ownPid1) from the
// isolation probe: 0 fails (a key it adds outlives the pod for its uid), 2 is a filter in force
// (with RuntimeDefault: the runtime's default profile), unreadable is unproven.
Finding keyringLive(const IsolationFacts& facts, const std::string& container,
                    const std::string& profile, bool ownPid1);
// Every running container, sidecars and ephemeral containers included; one not running is
// unproven.
Finding keyringLiveEveryContainer(const nlohmann::json& pod, const ExecInContainer& exec);

// The pod the Sandbox's spec.podTemplate makes next: the template's spec, with the pod's labels
// and the template's (the controller adds its own); null when the Sandbox has no template.
nlohmann::json podFromTemplate(const nlohmann::json& sandbox, const nlohmann::json& pod);

// first, with what second adds: its evidence lines first lacks (after `prefix`) and the worse
// verdict. A template or replacement pod that says the same adds nothing.
Finding alongside(Finding first, const Finding& second, const std::string& prefix);

// --- credentials by shape --------------------------------------------------------------

// A Secret or ConfigMap the pod references, as read from the API.
// The problem of a source verify did not read: the pod names more than kMostCredentialSources
// (or 32 MiB of them).
inline constexpr const char* kSourceOverBudget = "over verify's budget";
inline constexpr size_t kMostCredentialSources = 256;

struct CredentialSource {
    std::string kind;  // "secret" or "configmap"
    std::string name;
    std::optional<nlohmann::json> object;  // nullopt: not read (problem says why)
    std::string problem;                   // "not found", or the API's refusal
};

// Every Secret and ConfigMap a container of the pod (init and ephemeral included) can read:
// volumes, projected sources, env valueFrom and envFrom; (kind, name) pairs, each once.
std::vector<std::pair<std::string, std::string>> referencedSources(const nlohmann::json& pod);

// What a value is, by its shape: "" for nothing of note, else the evidence (never the value).
// Fail: a JWT naming clusterIssuer or carrying Kubernetes service-account claims, a kubeconfig
// with a user's credentials; unproven: another JWT (this cluster may accept it through OIDC).
struct CredentialShape {
    Verdict verdict = Verdict::Pass;
    std::string what;
};
CredentialShape credentialShape(const std::string& value, const std::string& clusterIssuer);
// The same, what it inflates also taken from `inflateBudget` (shared by a pod's values).
CredentialShape credentialShape(const std::string& value, const std::string& clusterIssuer,
                                size_t& inflateBudget);

// A value the pod can read, and where it reads it ("container agent env TOKEN").
struct ReadableValue {
    std::string where;
    std::string value;
};

// Every value a container can read that a person may have put a credential in: env values,
// command and args, probe and hook commands and headers, the annotations and labels the
// downward API shows, and each key of each source (decoded).
std::vector<ReadableValue> readableValues(const nlohmann::json& pod,
                                          const std::vector<CredentialSource>& sources);

// What stands in evidence for a credential verify would otherwise print.
inline constexpr const char* kRedactedCredential = "<redacted: looks like a credential>";
// A string of the pod's spec as evidence may show it (a mount path, a name, a key): when it,
// or its pieces joined ('/' and other separators dropped, or made '.'), looks like a credential
// by credentialShape, everything from its first piece of 8 characters or more to its last is
// kRedactedCredential ("/tmp/<redacted: ...>"); else as redactedCredentialRuns.
std::string redactedCredentials(std::string_view text);
// `text` (an evidence line) with each run of token characters (16 or more) that looks like a
// credential by itself replaced by kRedactedCredential.
std::string redactedCredentialRuns(std::string_view text);
// `text` with each of `userStrings` (the pod's strings: mount paths, names) that it holds and
// that redactedCredentials changes replaced by what it makes of it; then redactedCredentialRuns.
std::string redactedWithin(std::string text, std::vector<std::string> userStrings);

// Whether any of them holds a PEM private key (then the cluster's client CA is worth reading).
bool holdsPrivateKey(const nlohmann::json& pod, const std::vector<CredentialSource>& sources);

// Every readable value judged by credentialShape (and by what base64 runs in it decode to);
// private keys judged against the cluster's client CA (nullopt: could not be read). A source
// that exists but could not be read is unproven (RBAC hides what the pod can read).
Finding credentialsStatic(const nlohmann::json& pod, const std::vector<CredentialSource>& sources,
                          const std::string& clusterIssuer,
                          const std::optional<std::string>& clientAuthorities = std::nullopt);

}  // namespace rossoctl::verify
