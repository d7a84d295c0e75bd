#pragma once
// One run of `sandbox verify` on one sandbox (runner.hpp): what it reads before any check runs
// (verification_inputs.cpp, verification_egress_inputs.cpp), how a probe is run in a pod
// (verification_exec.cpp), the checks (verification_checks.cpp) and the destructive one with the
// replacement pod (verification_survives.cpp).
#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "rossoctl/errors.hpp"
#include "rossoctl/verify/external_names.hpp"
#include "rossoctl/verify/isolation.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "rossoctl/verify/probe_site.hpp"
#include "rossoctl/verify/runner.hpp"
#include "rossoctl/verify/volume_claims.hpp"

namespace rossoctl::verify {

inline constexpr std::chrono::milliseconds kProbeTimeout{30000};
// What a probe's stdout or stderr may hold: their answers are a few lines.
inline constexpr size_t kProbeOutputBytes = 64 * 1024;
inline constexpr std::chrono::milliseconds kControlTimeout{3000};
// Beyond the probe's own connect time-out: the exec's set-up and the tool's start, which
// take seconds on a busy node (over 13 s seen: 11 verifies at once on 2 loaded cores); every
// tool ends itself well before this runs out, so only a slow node ever waits for it.
inline constexpr std::chrono::milliseconds kExecMargin{25000};

inline constexpr const char* kTemplatePrefix = "the Sandbox's spec.podTemplate: ";

// Everything the checks read, fetched once before any of them runs.
struct VerificationInputs {
    nlohmann::json sandbox;
    nlohmann::json pod;
    nlohmann::json container;
    std::optional<nlohmann::json> serviceAccount;
    std::optional<std::vector<std::string>> tokenSecrets;  // nullopt: could not list
    nlohmann::json networkPolicies;
    nlohmann::json resourceQuotas;
    EgressInputs egress;
    // The pod the Sandbox's template makes next (null: none), and its ServiceAccount.
    nlohmann::json templatePod;
    std::optional<nlohmann::json> templateServiceAccount;
    // Every ServiceAccount a pod was judged by (the pod's, the template's, the replacement's),
    // as read then: read again at the end (attack 66 T4: the template's changed while verify ran).
    std::vector<std::pair<std::string, std::optional<nlohmann::json>>> judgedAccounts;
    std::vector<CredentialSource> credentialSources;
    ExternalNames externalNames;  // what the pod reads from the cluster DNS (attack 54, T2)
    std::string clusterIssuer;    // empty: not discoverable with these credentials
    // The API server's client CAs, read only when the pod can read a private key (nullopt:
    // not read, or not readable with these credentials).
    std::optional<std::string> clientAuthorities;
    DeadlineBound deadline;          // the project's lifetime, from now
    nlohmann::json storageClasses;   // a List's items; null: could not be read
    VolumeBindings volumes;          // the pod's claims and their PersistentVolumes
    VolumeBindings templateVolumes;  // what the template's pod stands on, as far as known
    std::optional<nlohmann::json> namespaceObject;  // nullopt: could not be read
    std::vector<std::string> nodeAddresses;
    nlohmann::json node;     // the pod's Node (null: not read), for what a limit can bound
    std::string nodeUnread;  // why node is null: "node X was not read (forbidden)"
    KernelInputs kernel;
    KernelInputs templateKernel;  // kernel, with the template's own RuntimeClass
    // Pods besides the recorded one that the Sandbox owns or selects: not judged, so unproven.
    std::vector<std::string> otherPods;
    // The NetworkPolicy list's resourceVersion: changes after it are replayed at the end.
    std::string policiesVersion;
    std::vector<std::string> unevaluatedPolicies;  // unevaluatedPolicyKinds, as at the start
};

// memoryVolumesStatic with what the pod's node's configz said (EgressInputs holds it).
Finding memoryVolumesOn(const nlohmann::json& pod, const EgressInputs& node);

class Verification {
  public:
    Verification(kube::Client& client, const ClientFactory& newClient, const Clock& clock,
                 const kube::ResourceRef& sandboxes, std::string ns, std::string name,
                 const VerifyOptions& options)
        : client_(client),
          newClient_(newClient),
          clock_(clock),
          sandboxes_(sandboxes),
          ns_(std::move(ns)),
          name_(std::move(name)),
          options_(options) {}

    SandboxReport run();
    // The end's replay found the server's record of changes gone (410 Gone).
    bool recordExpired() const { return recordExpired_; }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(fmt::format("sandbox/{} {}", name_, what));
    }
    std::chrono::milliseconds since(std::chrono::steady_clock::time_point started) const {
        return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.monotonic() - started);
    }
    void step(const std::string& text) const {
        if (options_.onStep) options_.onStep(text);
    }
    CheckResult timed(CheckResult (Verification::*check)(), CheckKind kind);
    // The strings of the pod's spec (and the template's, the replacement's) and its sources' key
    // names that evidence may print: redactedWithin hides those that look like a credential.
    std::vector<std::string> printedStrings() const;

    // --- reading the inputs (verification_inputs.cpp) ---
    void read();
    void waitForPod();  // the Sandbox's pod, gone or starting, up to --timeout
    DeadlineBound deadlineBound(const nlohmann::json& namespaceObject) const;
    void readPeerPods(const nlohmann::json& pod);
    void readIsolationInputs();
    void readNode();
    // A node by name, or why it was not read ("node X was not read (forbidden)").
    std::pair<nlohmann::json, std::string> nodeNamed(const std::string& name);
    // inputs_.kernel with pod's own RuntimeClass (read when it is not the first pod's).
    KernelInputs kernelInputsFor(const nlohmann::json& pod);
    void readRuntimeClass(const std::string& name, KernelInputs& kernel);
    void readTokenSecrets();
    void readEgressInputs();

    // --- running probes (verification_exec.cpp) ---
    std::chrono::milliseconds outageBudget() const;
    void noteIfOutage(const std::exception& error);
    ProbeOutput exec(kube::Client& client, const std::string& pod,
                     const std::vector<std::string>& command,
                     std::chrono::milliseconds timeout = kProbeTimeout,
                     const std::string& container = "");
    ProbeOutput execInCurrentPod(const std::vector<std::string>& command,
                                 std::chrono::milliseconds timeout = kProbeTimeout,
                                 const std::string& container = "");
    void startProbeSite();
    // Runs a probe in a container of pod, on this run's own connection.
    ExecInContainer execIn(const std::string& pod);

    // --- the checks (verification_checks.cpp) ---
    Finding tokenStaticOf(const nlohmann::json& pod, const std::optional<nlohmann::json>& account,
                          const VolumeBindings& volumes) const;
    // The static parts as the pod and as the Sandbox's template would make it.
    // A judge may take (pod, next): next is true for the template's pod, whose ServiceAccount
    // and RuntimeClass were read for it.
    template <typename Judge>
    Finding withTemplate(const Judge& judge) const {
        auto of = [&](const nlohmann::json& pod, bool next) {
            if constexpr (std::is_invocable_v<const Judge&, const nlohmann::json&, bool>)
                return judge(pod, next);
            else
                return judge(pod);
        };
        Finding finding = of(inputs_.pod, false);
        if (!inputs_.templatePod.is_object())
            return alongside(finding, {Verdict::Unproven, {"none: the next pod is not known"}, ""},
                             kTemplatePrefix);
        return alongside(finding, of(inputs_.templatePod, true), kTemplatePrefix);
    }
    CheckResult tokenCheck();
    CheckResult egressCheck();
    std::vector<std::string> rawNetworkHoldersWithTemplate() const;
    CheckResult limitsCheck();
    // podCgroupsLive for pod on the node `node` was read for (attack 67 C3).
    Finding podCgroupsOn(const nlohmann::json& pod, const EgressInputs& node) const;
    void readIsolationFacts();
    // The trusted probe's connect attempts to the API server, once for egress and host checks.
    void probeApiServer();
    // The trusted probe read a kernel that is not the node's (gVisor, a VM): the pod's own
    // /proc status, keyring and cgroup files are then that kernel's, not the node's.
    bool ownKernelProven();
    // Evidence for a reading that ownKernelProven() makes the sandbox kernel's.
    std::string ownKernelNote() const;
    CheckResult hostIsolationCheck();
    CheckResult kernelIsolationCheck();
    CheckResult imageProvenanceCheck();

    // --- nothing survives and the replacement pod (verification_survives.cpp) ---
    CheckResult nothingSurvivesCheck();
    Finding canariesLive();
    void judgeReplacement(std::vector<CheckResult>& checks);
    // The namespace's NetworkPolicies read again at the end: one added, changed or removed while
    // verify ran was judged for neither pod (attack 62 N2), so egress is then unproven.
    // What verify judged, read again at its end (end_recheck.cpp): what changed leaves the
    // checks it decides unproven.
    void recheckAtEnd(std::vector<CheckResult>& checks);
    void recheckPolicies(CheckResult& egress);
    // An ephemeral container that is not this run's probe added to the judged pod (review 61
    // #7): limits; its labels changed: egress; the pod gone: limits.
    void recheckJudgedPod(std::vector<CheckResult>& checks);
    void recheckSandbox(std::vector<CheckResult>& checks);
    // The Secrets, ConfigMaps and ServiceAccount the token check read.
    void recheckTokenSources(CheckResult& token);
    // The namespace object and the plugin policies read with the NetworkPolicies (review 64 L3).
    void recheckNamespaceAndPluginPolicies(std::vector<CheckResult>& checks);
    // Each change the server recorded to ref in this namespace after resourceVersion `since`
    // (end_replay.cpp): to one object (by name) up to the version `until` read at the end, or to
    // a collection over the server's one-second window. Why that was not read in full ("" when
    // it was): a change undone before the end leaves two reads equal, not its effect (review 64
    // H3).
    std::string replayChanges(const kube::ResourceRef& ref, const std::string& name,
                              const std::string& since, const std::string& until,
                              const std::function<void(const kube::WatchEvent&)>& onChange);
    // The same in namespace `in` ("" for every one), up to `mostChanges` of them.
    std::string replayChangesIn(const kube::ResourceRef& ref, const std::string& in,
                                const std::string& name, const std::string& since,
                                const std::string& until,
                                const std::function<void(const kube::WatchEvent&)>& onChange,
                                std::size_t mostChanges);
    // The cluster's pods and Services written while verify ran (end_cluster_replay.cpp): a pod
    // with host access or NET_RAW, one sharing a claim, a Service whose name spells a token,
    // made after the start's lists and gone or left by the end (attack 66 N1, S1, T3).
    void recheckClusterPods(std::vector<CheckResult>& checks);
    void recheckServices(CheckResult& token, CheckResult& egress);
    Finding replacementHeldConnections(const nlohmann::json& next, std::future<ProbeSite>& probe);
    void judgeReplacementIsolation(std::vector<CheckResult>& checks, const nlohmann::json& next,
                                   const std::string& prefix, const VolumeBindings& volumes);

    kube::Client& client_;
    const ClientFactory& newClient_;
    const Clock& clock_;
    const kube::ResourceRef& sandboxes_;
    std::string ns_;
    std::string name_;
    const VerifyOptions& options_;
    VerificationInputs inputs_;
    std::string podName_;
    std::mutex runErrorMutex_;
    std::string runError_;
    std::mutex mutex_;  // guards runProblems_ (checks run on threads)
    std::vector<std::string> runProblems_;
    ProbeSite egressSite_;
    ProbeSite replacementProbe_;     // the trusted probe in the replacement pod, once it started
    nlohmann::json replacementPod_;  // the pod verify's restart made (null: none)
    bool recordExpired_ = false;     // recordExpired()
    std::string endVersion_;         // the NetworkPolicy list's resourceVersion at the end
    // What the end's replay read that evidence may quote (printedStrings), and the hostnames of
    // the pods it saw (recheckServices judges them with the Services).
    std::vector<std::string> replayedNames_;
    std::vector<EgressInputs::PublishedHostname> replayedHostnames_;
    std::vector<std::string> notes_;  // SandboxReport::notes (written by the last check alone)
    std::once_flag probeSiteOnce_;    // the trusted probe starts once, for every check using it
    std::once_flag isolationFactsOnce_;
    std::once_flag apiServerOnce_;
    Finding apiServerReach_;  // egress: fail when a connection was made
    IsolationFacts podFacts_;
    std::optional<IsolationFacts> trustedFacts_;
    std::string trustedProbeProblem_;   // why the trusted probe is not available
    bool trustedProbeRefused_ = false;  // the API forbade it: verification cannot run
};

}  // namespace rossoctl::verify
