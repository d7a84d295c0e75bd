#include "rossoctl/verify/runner.hpp"

#include <fmt/format.h>

#include <mutex>
#include <thread>

#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/app/sandbox_restart.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/exec.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/project.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/verify/image_provenance.hpp"
#include "rossoctl/verify/isolation.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "rossoctl/verify/probe_site.hpp"
#include "sandbox_inputs.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kProbeTimeout{30000};
// What a probe's stdout or stderr may hold: their answers are a few lines.
constexpr size_t kProbeOutputBytes = 64 * 1024;
constexpr milliseconds kControlTimeout{3000};
// Beyond the probe's own connect time-out: the exec's set-up and the tool's start, which
// take seconds on a busy node (every tool ends itself well before this runs out).
constexpr milliseconds kExecMargin{15000};

std::string randomHex(Random& random, size_t length) {
    std::string out;
    while (out.size() < length) out += fmt::format("{:08x}", random.next());
    return out.substr(0, length);
}

// Everything the checks read, fetched once before any of them runs.
struct Inputs {
    json sandbox;
    json pod;
    json container;
    std::optional<json> serviceAccount;
    std::optional<std::vector<std::string>> tokenSecrets;  // nullopt: could not list
    json networkPolicies;
    json resourceQuotas;
    EgressInputs egress;
    // The pod the Sandbox's template makes next (null: none), and its ServiceAccount.
    json templatePod;
    std::optional<json> templateServiceAccount;
    std::vector<CredentialSource> credentialSources;
    std::string clusterIssuer;            // empty: not discoverable with these credentials
    DeadlineBound deadline;               // the project's lifetime, from now
    json storageClasses;                  // a List's items; null: could not be read
    std::optional<json> namespaceObject;  // nullopt: could not be read
    std::vector<std::string> nodeAddresses;
    KernelInputs kernel;
};

constexpr const char* kTemplatePrefix = "the Sandbox's spec.podTemplate: ";

// A list that may be forbidden or not served: its items, or null with the reason noted.
json optionalList(kube::Client& client, const kube::ResourceRef& ref, const std::string& ns,
                  std::vector<std::string>& problems, const kube::ListOptions& options = {}) {
    try {
        return client.list(ref, ns, options).value("items", json::array());
    } catch (const kube::ApiError& error) {
        if (!error.isNotFound())
            problems.push_back(fmt::format("could not list {}: {}", ref.resource, error.what()));
        return nullptr;
    }
}

std::vector<std::string> endpointAddresses(const json& endpoints) {
    std::vector<std::string> addresses;
    for (const auto& subset : endpoints.value("subsets", json::array()))
        for (const auto& address : subset.value("addresses", json::array()))
            addresses.push_back(address.value("ip", ""));
    return addresses;
}

std::vector<std::string> nodeAddresses(const json& node) {
    std::vector<std::string> addresses;
    if (!node.contains("status")) return addresses;
    for (const auto& address : node["status"].value("addresses", json::array()))
        if (address.value("type", "") == "InternalIP" || address.value("type", "") == "ExternalIP")
            addresses.push_back(address.value("address", ""));
    return addresses;
}

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

    SandboxReport run() {
        const auto started = clock_.monotonic();
        read();
        SandboxReport report;
        report.name = name_;
        report.namespaceName = ns_;
        report.pod = podName_;
        report.podUid = app::uidOf(inputs_.pod);
        report.container = inputs_.container.value("name", "");
        report.checks.resize(7);
        // Independent checks in parallel, each on its own connection.
        std::vector<std::thread> threads;
        report.checks[0].kind = CheckKind::ServiceAccountToken;
        report.checks[1].kind = CheckKind::Egress;
        report.checks[2].kind = CheckKind::Limits;
        report.checks[3].kind = CheckKind::NothingSurvives;
        threads.emplace_back([&] {
            report.checks[0] = timed(&Verification::tokenCheck, CheckKind::ServiceAccountToken);
        });
        threads.emplace_back(
            [&] { report.checks[1] = timed(&Verification::egressCheck, CheckKind::Egress); });
        threads.emplace_back(
            [&] { report.checks[2] = timed(&Verification::limitsCheck, CheckKind::Limits); });
        report.checks[4].kind = CheckKind::HostIsolation;
        report.checks[5].kind = CheckKind::KernelIsolation;
        threads.emplace_back([&] {
            report.checks[4] = timed(&Verification::hostIsolationCheck, CheckKind::HostIsolation);
        });
        threads.emplace_back([&] {
            report.checks[5] =
                timed(&Verification::kernelIsolationCheck, CheckKind::KernelIsolation);
        });
        // No probe: the spec and the kubelet's status alone.
        report.checks[6] = timed(&Verification::imageProvenanceCheck, CheckKind::ImageProvenance);
        for (auto& thread : threads) thread.join();
        if (trustedProbeRefused_) throw Error(trustedProbeProblem_);
        // Destructive: deletes the pod, so it runs after the others are done with it.
        report.checks[3] = timed(&Verification::nothingSurvivesCheck, CheckKind::NothingSurvives);
        // A verdict is about the sandbox: the pod verify's own restart made is judged too.
        if (replacementPod_.is_object()) judgeReplacement(report.checks);
        report.runProblems = runProblems_;
        report.took = since(started);
        report.runError = runError_;
        return report;
    }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(fmt::format("sandbox/{} {}", name_, what));
    }

    // The first outage seen; the checks it broke stay unproven, and the run exits 1.
    // How long a probe's exec waits for an apiserver to come back: --timeout, at most a minute.
    milliseconds outageBudget() const {
        const milliseconds cap = std::chrono::minutes(1);
        return options_.timeout.count() > 0 ? std::min(options_.timeout, cap) : cap;
    }

    void noteIfOutage(const std::exception& error) {
        if (!kube::isOutage(error)) return;
        std::lock_guard lock(runErrorMutex_);
        if (runError_.empty()) runError_ = error.what();
    }

    milliseconds since(std::chrono::steady_clock::time_point started) const {
        return std::chrono::duration_cast<milliseconds>(clock_.monotonic() - started);
    }

    void read() {
        try {
            inputs_.sandbox = client_.get(sandboxes_, ns_, name_);
        } catch (const kube::ApiError& error) {
            if (!error.isNotFound()) throw;
            fail(fmt::format("not found in namespace {}; run \"rossoctl sandbox list -n {}\"", ns_,
                             ns_));
        }
        if (auto why = app::sandboxNotRunningReason(inputs_.sandbox, clock_.now()); !why.empty())
            fail(why + "; verify needs a running pod");
        const auto pods = app::findSandboxPods(client_, inputs_.sandbox);
        const auto pod = app::currentPod(pods.owned);
        if (!pod)
            fail(fmt::format("has no pod; the Sandbox says {}",
                             app::describeConditions(inputs_.sandbox)));
        const std::string phase = (*pod)["status"].value("phase", "Unknown");
        if (phase != "Running")
            fail(fmt::format("has pod {} in phase {}, not Running{}",
                             (*pod)["metadata"].value("name", ""), phase,
                             app::notRunningAdvice(*pod, ns_, name_, "verify again")));
        inputs_.pod = *pod;
        podName_ = inputs_.pod["metadata"].value("name", "");
        const json containers = inputs_.pod["spec"].value("containers", json::array());
        if (containers.empty()) fail("has a pod without containers");
        inputs_.container = containers.front();
        const std::string account = inputs_.pod["spec"].value("serviceAccountName", "default");
        inputs_.serviceAccount =
            client_.getIfExists(kube::resources::serviceAccounts(), ns_, account);
        inputs_.networkPolicies =
            client_.list(kube::resources::networkPolicies(), ns_).value("items", json::array());
        inputs_.resourceQuotas =
            client_.list(kube::resources::resourceQuotas(), ns_).value("items", json::array());
        readTokenSecrets();
        std::vector<std::string> ignored;  // unread StorageClasses leave ephemeral volumes unproven
        inputs_.storageClasses =
            optionalList(client_, {"storage.k8s.io", "v1", "storageclasses", "StorageClass", false},
                         "", ignored);
        inputs_.templatePod = podFromTemplate(inputs_.sandbox, inputs_.pod);
        inputs_.deadline.now = clock_.now();
        readEgressInputs();
        readPeerPods(inputs_.pod);
        if (inputs_.templatePod.is_object()) readPeerPods(inputs_.templatePod);
        const std::string templateAccount =
            inputs_.templatePod.is_object()
                ? inputs_.templatePod["spec"].value("serviceAccountName", "default")
                : account;
        inputs_.templateServiceAccount =
            templateAccount == account
                ? inputs_.serviceAccount
                : client_.getIfExists(kube::resources::serviceAccounts(), ns_, templateAccount);
        readCredentialSources(client_, ns_, inputs_.pod, inputs_.credentialSources);
        if (inputs_.templatePod.is_object())
            readCredentialSources(client_, ns_, inputs_.templatePod, inputs_.credentialSources);
        try {
            inputs_.clusterIssuer =
                client_.getPath("/.well-known/openid-configuration").value("issuer", "");
        } catch (const std::exception&) {
            // Not discoverable with these credentials: tokens are still known by their claims.
        }
        readIsolationInputs();
    }

    // The project's default lifetime bounds a deadline that counts (24h without one).
    DeadlineBound deadlineBound(const json& namespaceObject) const {
        DeadlineBound bound;
        bound.now = clock_.now();
        if (!namespaceObject.is_object()) return bound;
        const std::string lifetime = namespaceObject.value("metadata", json::object())
                                         .value("annotations", json::object())
                                         .value(model::kDefaultLifetimeAnnotation, "");
        if (lifetime.empty()) return bound;
        try {
            bound.longest = model::parseLifetime(lifetime, model::kDefaultLifetimeAnnotation);
            bound.origin = fmt::format("the project's lifetime {}", lifetime);
        } catch (const Error&) {
            bound.origin =
                fmt::format("the default lifetime (the project's {:?} is not one)", lifetime);
        }
        return bound;
    }

    // A named port is the number the destination pods give it: the pods each such peer selects,
    // listed once (what cannot be listed leaves the rule unevaluated).
    void readPeerPods(const json& pod) {
        const auto effective =
            model::effectiveEgress(pod, inputs_.networkPolicies, inputs_.egress.ciliumPolicies);
        for (const auto& grant : effective.grants) {
            if (grant.namedPorts.empty()) continue;
            for (const auto& peer : grant.pods) {
                const std::string key = model::podPeerKey(peer);
                if (!inputs_.egress.peerPods.count(key))
                    inputs_.egress.peerPods[key] = podsSelectedBy(client_, ns_, peer);
            }
        }
    }

    // The static parts as the pod and as the Sandbox's template would make it.
    Finding tokenStaticOf(const json& pod, const std::optional<json>& account) const {
        Finding finding = tokenStatic(pod, account, inputs_.tokenSecrets);
        absorb(finding, credentialsStatic(pod, inputs_.credentialSources, inputs_.clusterIssuer));
        return finding;
    }
    template <typename Judge>
    Finding withTemplate(const Judge& judge) const {
        Finding finding = judge(inputs_.pod);
        if (!inputs_.templatePod.is_object())
            return alongside(finding, {Verdict::Unproven, {"none: the next pod is not known"}, ""},
                             kTemplatePrefix);
        return alongside(finding, judge(inputs_.templatePod), kTemplatePrefix);
    }

    // The namespace (Pod Security level, required runtime class), the node (its kernel, boot
    // ID, addresses) and the pod's RuntimeClass; each may be forbidden to a project user.
    void readIsolationInputs() {
        auto& kernel = inputs_.kernel;
        try {
            inputs_.namespaceObject = client_.getIfExists(kube::resources::namespaces(), "", ns_);
        } catch (const kube::ApiError&) {
        }
        if (!options_.requireRuntimeClass.empty()) {
            kernel.required = options_.requireRuntimeClass;
            kernel.requiredBy = "--require-runtime-class";
        } else if (inputs_.namespaceObject) {
            const json annotations =
                (*inputs_.namespaceObject)["metadata"].value("annotations", json::object());
            kernel.required = annotations.value(kRuntimeClassAnnotation, "");
            kernel.requiredBy = fmt::format("the project (namespace {} annotation {})", ns_,
                                            kRuntimeClassAnnotation);
        }
        kernel.nodeName = inputs_.pod["spec"].value("nodeName", "");
        try {
            const kube::ResourceRef nodes{"", "v1", "nodes", "Node", false};
            if (!kernel.nodeName.empty())
                if (auto node = client_.getIfExists(nodes, "", kernel.nodeName)) {
                    inputs_.nodeAddresses = nodeAddresses(*node);
                    const json info =
                        (*node).value("status", json::object()).value("nodeInfo", json::object());
                    kernel.nodeKernel = info.value("kernelVersion", "");
                    kernel.nodeBootId = info.value("bootID", "");
                }
        } catch (const kube::ApiError&) {
            // Not allowed to read the node: its kernel is not known, the live part unproven.
        }
        const std::string runtimeClass = inputs_.pod["spec"].value("runtimeClassName", "");
        if (runtimeClass.empty()) return;
        try {
            const kube::ResourceRef classes{"node.k8s.io", "v1", "runtimeclasses", "RuntimeClass",
                                            false};
            kernel.runtimeClass = client_.getIfExists(classes, "", runtimeClass);
        } catch (const kube::ApiError& error) {
            kernel.runtimeClassProblem = error.what();
        }
    }

    void readTokenSecrets() {
        kube::ListOptions options;
        options.fieldSelector = "type=kubernetes.io/service-account-token";
        std::vector<std::string> ignored;
        const json items = optionalList(client_, kube::resources::secrets(), ns_, ignored, options);
        if (!items.is_array()) return;
        inputs_.tokenSecrets.emplace();
        for (const auto& secret : items)
            inputs_.tokenSecrets->push_back(secret["metadata"].value("name", ""));
    }

    // What the project allows and the ranges called out by name; each read may be forbidden
    // to a project user, and then only narrows what can be named, never what is judged.
    void readEgressInputs() {
        auto& egress = inputs_.egress;
        egress.probedPort = options_.egressTarget.port;
        // Cilium policies add allowances: unreadable, they leave egress unproven.
        egress.ciliumPolicies = optionalList(client_, kube::resources::ciliumNetworkPolicies(), ns_,
                                             egress.unreadPolicies);
        for (auto& line : unevaluatedPolicyKinds(client_, ns_))
            egress.unreadPolicies.push_back(std::move(line));
        json firewall;
        try {
            firewall = client_.getIfExists(kube::resources::egressFirewalls(), ns_, "default")
                           .value_or(json());
        } catch (const kube::ApiError&) {
        }
        try {
            const auto namespaceObject =
                client_.getIfExists(kube::resources::namespaces(), "", ns_);
            egress.allowance = model::projectAllowance(namespaceObject.value_or(json()), firewall);
            inputs_.deadline = deadlineBound(namespaceObject.value_or(json()));
        } catch (const kube::ApiError& error) {
            egress.readProblems.push_back(fmt::format(
                "could not read namespace {} ({}): judged against DNS only", ns_, error.what()));
        }
        try {
            const kube::ResourceRef endpoints{"", "v1", "endpoints", "Endpoints", true};
            if (auto found = client_.getIfExists(endpoints, "default", "kubernetes"))
                egress.apiServerAddresses = endpointAddresses(*found);
            const kube::ResourceRef nodes{"", "v1", "nodes", "Node", false};
            const std::string nodeName = inputs_.pod["spec"].value("nodeName", "");
            if (!nodeName.empty())
                if (auto node = client_.getIfExists(nodes, "", nodeName))
                    egress.nodeAddresses = nodeAddresses(*node);
        } catch (const kube::ApiError&) {
            // Not allowed to read them: the public and metadata ranges are still named.
        }
    }

    // The egress probe runs where --trusted-probe says; a probe site that cannot start
    // leaves that live part unproven (it never falls back to the pod's own tools).
    void startProbeSite() {
        const std::string target = inputs_.container.value("name", "");
        egressSite_ = podProbeSite(target);
        if (options_.trustedProbeImage.empty()) return;
        if (inputs_.pod["spec"].value("shareProcessNamespace", false)) {
            // Every container then sees the probe's processes and could forge its answer.
            egressSite_ = ProbeSite{"", options_.trustedProbeImage};
            trustedProbeProblem_ = fmt::format(
                "pod {} sets shareProcessNamespace: its containers could write into a trusted "
                "probe's output or stop its tools, so no probe in it is trusted; live part "
                "unproven",
                podName_);
            return;
        }
        TrustedProbeOptions trusted;
        trusted.image = options_.trustedProbeImage;
        trusted.cancel = options_.cancel;
        step(fmt::format("adding ephemeral container ({}) to pod {} for the live probes",
                         trusted.image, podName_));
        try {
            // On a connection of its own: this runs on the egress check's thread.
            auto client = newClient_();
            egressSite_ = startTrustedProbe(*client, clock_, inputs_.pod, trusted);
        } catch (const TrustedProbeUnavailable& error) {
            egressSite_ = ProbeSite{"", trusted.image};
            trustedProbeProblem_ = error.what();
        } catch (const Error& error) {
            // Forbidden: the user asked for something they may not do; not a verdict.
            egressSite_ = ProbeSite{"", trusted.image};
            trustedProbeProblem_ = error.what();
            trustedProbeRefused_ = true;
        }
    }

    CheckResult timed(CheckResult (Verification::*check)(), CheckKind kind) {
        const auto started = clock_.monotonic();
        CheckResult result;
        result.kind = kind;
        try {
            result = (this->*check)();
        } catch (const std::exception& error) {
            noteIfOutage(error);
            // A thread must not throw; what broke becomes the live part's evidence, and a
            // problem of the run (not of the sandbox).
            result.livePart =
                Finding{Verdict::Unproven, {std::string("error: ") + error.what()}, ""};
            std::lock_guard lock(mutex_);
            runProblems_.push_back(checkId(kind) + ": " + error.what());
        }
        result.took = since(started);
        return result;
    }

    ProbeOutput exec(kube::Client& client, const std::string& pod,
                     const std::vector<std::string>& command, milliseconds timeout = kProbeTimeout,
                     const std::string& container = "") {
        ProbeOutput output;
        kube::ExecRequest request;
        request.namespaceName = ns_;
        request.pod = pod;
        // Another container (a trusted probe) may run a probe that needs only the network.
        request.container = container.empty() ? inputs_.container.value("name", "") : container;
        request.command = command;
        request.timeout = timeout;
        try {
            // An exec the apiserver's outage refused or cut is run again once it is back (a
            // probe only reads, or writes the same canary again), within --timeout: the outage
            // is not the sandbox's answer. A probe's own time-out is a result, never retried.
            kube::CapturedExec captured;
            kube::rideOutOutage(clock_, outageBudget(), options_.cancel, [&] {
                captured = kube::execCapture(client, request, {kProbeOutputBytes, timeout});
            });
            output.exitCode = captured.result.exitCode;
            output.timedOut = captured.result.timedOut;
            output.stdoutText = std::move(captured.stdoutText);
            output.stderrText = std::move(captured.stderrText);
            output.failure = captured.result.message;
            output.started = captured.result.message.empty();
            // A cut output is never parsed: the probe's answer is unproven.
            if (captured.end == kube::CaptureEnd::Truncated) {
                output.started = false;
                output.failure = captured.whyCut();
            }
        } catch (const std::exception& error) {
            noteIfOutage(error);
            // The API refused the exec or the stream broke: the run failed, not the sandbox.
            output.started = false;
            output.failure = error.what();
            std::lock_guard lock(mutex_);
            runProblems_.push_back(
                fmt::format("exec {} in pod {}: {}", command.front(), pod, error.what()));
        }
        return output;
    }

    ProbeOutput execInCurrentPod(const std::vector<std::string>& command,
                                 milliseconds timeout = kProbeTimeout,
                                 const std::string& container = "") {
        std::unique_ptr<kube::Client> client;
        try {
            client = newClient_();
        } catch (const std::exception& error) {
            ProbeOutput output;
            output.started = false;
            output.failure = error.what();
            std::lock_guard lock(mutex_);
            runProblems_.push_back(std::string("new connection: ") + error.what());
            return output;
        }
        return exec(*client, podName_, command, timeout, container);
    }

    CheckResult tokenCheck() {
        CheckResult result;
        result.kind = CheckKind::ServiceAccountToken;
        result.staticPart =
            alongside(tokenStaticOf(inputs_.pod, inputs_.serviceAccount),
                      inputs_.templatePod.is_object()
                          ? tokenStaticOf(inputs_.templatePod, inputs_.templateServiceAccount)
                          : Finding{Verdict::Unproven, {"none: the next pod is not known"}, ""},
                      kTemplatePrefix);
        result.livePart = tokenLive(execInCurrentPod(tokenProbeCommand()));
        result.livePart.probe = "sh";
        noteProbeSite(result.livePart, podProbeSite(inputs_.container.value("name", "")));
        return result;
    }

    CheckResult egressCheck() {
        CheckResult result;
        result.kind = CheckKind::Egress;
        result.staticPart = withTemplate([&](const json& pod) {
            return egressStatic(pod, inputs_.networkPolicies, inputs_.egress);
        });
        failEgressOnHostNetwork(inputs_.pod, result.staticPart);
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
            const auto command = egressProbeCommand(target, reached.address, connect);
            const ProbeOutput output =
                execInCurrentPod(command, connect + kExecMargin, egressSite_.container);
            result.livePart = egressLive(output, target, reached);
            noteProbeSite(result.livePart, egressSite_);
            result.livePart = withoutForgeableDenial(result.livePart);
            // The trusted probe's filesystem is its own; the pod's tools are checked.
            if (!egressSite_.trusted())
                result.livePart = withoutWritableTool(result.livePart, output, inputs_.container);
        }
        result.livePart = withoutSpoofableDenial(result.livePart, rawNetworkHolders(inputs_.pod));
        return result;
    }

    CheckResult limitsCheck() {
        CheckResult result;
        result.kind = CheckKind::Limits;
        result.staticPart = withTemplate([&](const json& pod) {
            return limitsStatic(pod, inputs_.sandbox, inputs_.resourceQuotas, inputs_.deadline);
        });
        result.livePart = limitsLiveEveryContainer(
            inputs_.pod, [&](const std::vector<std::string>& command, const std::string& name) {
                return execInCurrentPod(command, kProbeTimeout, name);
            });
        noteProbeSite(result.livePart, podProbeSite(inputs_.container.value("name", "")));
        return result;
    }

    CheckResult nothingSurvivesCheck() {
        CheckResult result;
        result.kind = CheckKind::NothingSurvives;
        result.staticPart = withTemplate([&](const json& pod) {
            return nothingSurvivesStatic(pod, inputs_.sandbox, inputs_.storageClasses);
        });
        result.livePart.probe = "canary";
        if (!options_.restart) {
            result.livePart.evidence.push_back(
                "skipped with --no-restart: the canary test needs a pod restart, not proven");
            return result;
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
            result.livePart.evidence.push_back(fmt::format(
                "no canary could be written (tried {} places), so the pod was not restarted",
                tried));
            return result;
        }
        step(fmt::format("deleting pod {} to prove nothing survives (--no-restart skips this)",
                         podName_));
        app::RestartOptions restart;
        restart.timeout = options_.timeout;
        restart.cancel = options_.cancel;
        restart.onStep = [this](const std::string& text) { step(text); };
        app::RestartResult restarted;
        try {
            restarted = app::restartSandbox(client_, clock_, sandboxes_, ns_, name_, restart,
                                            inputs_.sandbox);
        } catch (const Error& error) {
            noteIfOutage(error);
            result.livePart.evidence.push_back(
                fmt::format("{} canaries written, but the restart did not complete: {}", written,
                            error.what()));
            return result;
        }
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
        result.livePart.verdict = Verdict::Pass;
        for (const auto& [container, paths] : planted)
            absorb(result.livePart,
                   canariesAfterRestart(
                       exec(client_, newPod, canaryReadCommand(paths), kProbeTimeout, container),
                       paths, summary),
                   planted.size() > 1 ? "container " + container + ": " : "");
        for (const auto& note : containers.notes)
            absorb(result.livePart, Finding{Verdict::Unproven, {note + ": no canary in it"}, ""});
        result.livePart.probe = "canary";
        noteProbeSite(result.livePart, podProbeSite(inputs_.container.value("name", "")));
        if (replacementPod_.is_null())
            absorb(result.livePart,
                   Finding{Verdict::Unproven,
                           {fmt::format("replacement pod {} (uid {}) could not be read, so it was "
                                        "not judged",
                                        newPod, app::shortUid(restarted.newUid))},
                           ""});
        return result;
    }

    // The replacement pod's static parts, its token path and its cgroups, beside the first pod's.
    void judgeReplacement(std::vector<CheckResult>& checks) {
        const json& next = replacementPod_;
        const std::string name = next["metadata"].value("name", "");
        const std::string prefix =
            fmt::format("replacement pod {} (uid {}): ", name, app::shortUid(app::uidOf(next)));
        readCredentialSources(client_, ns_, next, inputs_.credentialSources);
        const std::string account = next["spec"].value("serviceAccountName", "default");
        const auto serviceAccount =
            account == inputs_.pod["spec"].value("serviceAccountName", "default")
                ? inputs_.serviceAccount
                : client_.getIfExists(kube::resources::serviceAccounts(), ns_, account);
        CheckResult& token = checks[0];
        CheckResult& egress = checks[1];
        CheckResult& limits = checks[2];
        CheckResult& survives = checks[3];
        token.staticPart = alongside(token.staticPart, tokenStaticOf(next, serviceAccount), prefix);
        egress.staticPart = alongside(
            egress.staticPart, egressStatic(next, inputs_.networkPolicies, inputs_.egress), prefix);
        limits.staticPart = alongside(
            limits.staticPart,
            limitsStatic(next, inputs_.sandbox, inputs_.resourceQuotas, inputs_.deadline), prefix);
        survives.staticPart =
            alongside(survives.staticPart,
                      nothingSurvivesStatic(next, inputs_.sandbox, inputs_.storageClasses), prefix);
        Finding tokenNow = tokenLive(exec(client_, name, tokenProbeCommand()));
        tokenNow.probe = "sh";
        noteProbeSite(tokenNow, podProbeSite(inputs_.container.value("name", "")));
        token.livePart = alongside(token.livePart, tokenNow, prefix);
        limits.livePart = alongside(
            limits.livePart,
            limitsLiveEveryContainer(
                next,
                [&](const std::vector<std::string>& command, const std::string& container) {
                    return exec(client_, name, command, kProbeTimeout, container);
                }),
            prefix);
    }

    // One probe, read once for both isolation checks: in the pod, and with --trusted-probe
    // also in the trusted container (never instead: the capabilities are the pod's own).
    void readIsolationFacts() {
        podFacts_ = parseIsolationFacts(execInCurrentPod(isolationProbeCommand()));
        if (options_.trustedProbeImage.empty()) return;
        std::call_once(probeSiteOnce_, [this] { startProbeSite(); });
        IsolationFacts trusted;
        trusted.failure = trustedProbeProblem_;
        if (trustedProbeProblem_.empty())
            trusted = parseIsolationFacts(
                execInCurrentPod(isolationProbeCommand(), kProbeTimeout, egressSite_.container));
        trustedFacts_ = trusted;
    }

    CheckResult hostIsolationCheck() {
        CheckResult result;
        result.kind = CheckKind::HostIsolation;
        result.staticPart = hostIsolationStatic(inputs_.pod, inputs_.namespaceObject);
        std::call_once(isolationFactsOnce_, [this] { readIsolationFacts(); });
        result.livePart = hostIsolationLive({podFacts_, trustedFacts_, inputs_.nodeAddresses});
        if (trustedFacts_) noteProbeSite(result.livePart, egressSite_);
        noteProbeSite(result.livePart, podProbeSite(inputs_.container.value("name", "")));
        return result;
    }

    CheckResult kernelIsolationCheck() {
        CheckResult result;
        result.kind = CheckKind::KernelIsolation;
        result.staticPart = kernelIsolationStatic(inputs_.pod, inputs_.kernel);
        result.required = kernelIsolationRequired(inputs_.pod, inputs_.kernel);
        std::call_once(isolationFactsOnce_, [this] { readIsolationFacts(); });
        result.livePart = kernelIsolationLive(trustedFacts_ ? *trustedFacts_ : podFacts_,
                                              trustedFacts_.has_value(), inputs_.kernel);
        noteProbeSite(result.livePart, trustedFacts_
                                           ? egressSite_
                                           : podProbeSite(inputs_.container.value("name", "")));
        return result;
    }

    CheckResult imageProvenanceCheck() {
        CheckResult result;
        result.kind = CheckKind::ImageProvenance;
        const auto allowed = allowedRegistries(inputs_.namespaceObject.value_or(json()));
        result.required = allowed.has_value();
        result.staticPart = imageProvenanceStatic(inputs_.pod, allowed);
        result.livePart = imageProvenanceLive(inputs_.pod, allowed);
        return result;
    }

    void step(const std::string& text) const {
        if (options_.onStep) options_.onStep(text);
    }

    kube::Client& client_;
    const ClientFactory& newClient_;
    const Clock& clock_;
    const kube::ResourceRef& sandboxes_;
    std::string ns_;
    std::string name_;
    const VerifyOptions& options_;
    Inputs inputs_;
    std::string podName_;
    std::mutex runErrorMutex_;
    std::string runError_;
    std::mutex mutex_;  // guards runProblems_ (checks run on threads)
    std::vector<std::string> runProblems_;
    ProbeSite egressSite_;
    json replacementPod_;           // the pod verify's restart made (null: none)
    std::once_flag probeSiteOnce_;  // the trusted probe starts once, for every check using it
    std::once_flag isolationFactsOnce_;
    IsolationFacts podFacts_;
    std::optional<IsolationFacts> trustedFacts_;
    std::string trustedProbeProblem_;   // why the trusted probe is not available
    bool trustedProbeRefused_ = false;  // the API forbade it: verification cannot run
};

}  // namespace

SandboxReport verifySandbox(kube::Client& client, const ClientFactory& newClient,
                            const Clock& clock, const kube::ResourceRef& sandboxes,
                            const std::string& ns, const std::string& name,
                            const VerifyOptions& options) {
    return Verification(client, newClient, clock, sandboxes, ns, name, options).run();
}

}  // namespace rossoctl::verify
