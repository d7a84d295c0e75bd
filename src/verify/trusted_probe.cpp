#include <fmt/format.h>

#include "rossoctl/kube/exec.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/verify/probe_site.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

std::string randomSuffix(Random& random) {
    return fmt::format("{:06x}", random.next() & 0xffffff);
}

// The container's entry in status.ephemeralContainerStatuses, if the node reported one.
std::optional<json> ephemeralStatus(const json& pod, const std::string& name) {
    const auto& status = pod.value("status", json::object());
    for (const auto& entry : status.value("ephemeralContainerStatuses", json::array())) {
        if (entry.value("name", "") == name) return entry;
    }
    return std::nullopt;
}

// Why the running probe is not the one verify wrote, or "": what the server stored under its
// name (a mutating webhook may have changed it) and whether the pod now shares PID namespaces.
std::string admittedDifference(const json& pod, const std::string& name,
                               const TrustedProbeOptions& options) {
    const auto& spec = pod.value("spec", json::object());
    if (spec.value("shareProcessNamespace", false) || spec.value("hostPID", false))
        return "runs in a pod that shares a PID namespace (shareProcessNamespace or hostPID)";
    for (const auto& container : spec.value("ephemeralContainers", json::array())) {
        if (!container.is_object() || container.value("name", "") != name) continue;
        if (!isTrustedProbeContainer(container, options.image) ||
            container.value("command", json()) != trustedProbeContainer(name, options)["command"])
            return "is not the container verify wrote (an admission webhook changed its image, "
                   "command, user or target)";
        return {};
    }
    return "is not in the pod's spec.ephemeralContainers";
}

// Why the container will not run, or "" while it may still start.
std::string startFailure(const json& status) {
    const auto& state = status.value("state", json::object());
    if (state.contains("terminated")) {
        const auto& terminated = state["terminated"];
        return fmt::format(
            "exited ({}, code {}{})", terminated.value("reason", "no reason"),
            terminated.value("exitCode", -1),
            terminated.value("message", "").empty() ? "" : ": " + terminated.value("message", ""));
    }
    if (state.contains("waiting")) {
        const std::string reason = state["waiting"].value("reason", "");
        if (reason == "ContainerCreating" || reason == "PodInitializing" || reason.empty())
            return {};
        return fmt::format("{}{}", reason,
                           state["waiting"].value("message", "").empty()
                               ? ""
                               : ": " + state["waiting"].value("message", ""));
    }
    return {};
}

}  // namespace

std::string ProbeSite::label() const {
    return trusted() ? fmt::format(
                           "ran in a trusted probe container ({}), not with the pod's tools", image)
                     : "ran in the pod, with the pod's own tools: from the pod, forgeable (the "
                       "agent shares its processes and user)";
}

ProbeSite podProbeSite(const std::string& container) {
    return ProbeSite{container, ""};
}

void noteProbeSite(Finding& finding, const ProbeSite& site) {
    finding.evidence.insert(finding.evidence.begin(), site.label());
    finding.forgeable = !site.trusted();
}

Finding withoutForgeableDenial(Finding live) {
    if (!live.forgeable || live.verdict != Verdict::Pass) return live;
    live.verdict = Verdict::Unproven;
    live.evidence.push_back(
        "a denial seen from the pod's own PID space proves nothing: an agent of the same user can "
        "take the probe's output (pidfd_getfd) and write it first; verify with --trusted-probe "
        "IMAGE for a probe outside its reach");
    return live;
}

namespace {

// PID 1 of a PID namespace ignores a signal it has no handler for: a bare `sleep` made the
// pod's deletion wait out the whole grace period (30 s); this shell exits on TERM.
constexpr std::string_view kLifetimeScriptHead = "trap 'exit 0' TERM; sleep ";
constexpr std::string_view kLifetimeScriptTail = " & wait";

std::string lifetimeScript(std::chrono::seconds lifetime) {
    return fmt::format("{}{}{}", kLifetimeScriptHead, lifetime.count(), kLifetimeScriptTail);
}

// The seconds of a command trustedProbeContainer writes (or earlier versions' bare `sleep N`),
// or nullopt for any other command.
std::optional<std::chrono::seconds> lifetimeOf(const json& command) {
    std::string seconds;
    if (command.size() == 2 && command[0] == "sleep" && command[1].is_string()) {
        seconds = command[1].get<std::string>();
    } else if (command.size() == 3 && command[0] == kTrustedProbeInit && command[1] == "-c" &&
               command[2].is_string()) {
        const std::string script = command[2].get<std::string>();
        if (script.size() <= kLifetimeScriptHead.size() + kLifetimeScriptTail.size() ||
            !script.starts_with(kLifetimeScriptHead) || !script.ends_with(kLifetimeScriptTail))
            return std::nullopt;
        seconds =
            script.substr(kLifetimeScriptHead.size(),
                          script.size() - kLifetimeScriptHead.size() - kLifetimeScriptTail.size());
    } else {
        return std::nullopt;
    }
    if (seconds.empty() || seconds.size() > 6 ||
        seconds.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    return std::chrono::seconds(std::stoll(seconds));
}

json probeContainer(const std::string& name, const std::string& image, json command) {
    return {{"name", name},
            {"image", image},
            {"command", std::move(command)},
            {"securityContext",
             {{"allowPrivilegeEscalation", false},
              {"capabilities", {{"drop", json::array({"ALL"})}}},
              {"runAsNonRoot", true},
              {"runAsUser", kTrustedProbeUser},
              {"runAsGroup", kTrustedProbeUser},
              {"readOnlyRootFilesystem", true},
              {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
            {"terminationMessagePolicy", "File"},
            {"stdin", false},
            {"tty", false}};
}

}  // namespace

json trustedProbeContainer(const std::string& name, const TrustedProbeOptions& options) {
    return probeContainer(
        name, options.image,
        json::array({std::string(kTrustedProbeInit), "-c", lifetimeScript(options.lifetime)}));
}

bool isTrustedProbeContainer(const json& container, const std::string& image) {
    if (image.empty() || !container.is_object()) return false;
    const std::string name = container.value("name", "");
    if (name.rfind("rossoctl-probe-", 0) != 0) return false;
    const json command = container.value("command", json::array());
    if (!lifetimeOf(command)) return false;
    const json written = probeContainer(name, image, command);
    // What the API server fills in on its own; anything else is not verify's.
    const json defaults = {{"imagePullPolicy", nullptr},
                           {"terminationMessagePath", "/dev/termination-log"},
                           {"resources", json::object()}};
    for (const auto& [key, value] : container.items()) {
        if (written.contains(key)) {
            if (written[key] != value) return false;
        } else if (!defaults.contains(key) ||
                   (!defaults[key].is_null() && defaults[key] != value)) {
            return false;
        }
    }
    for (const auto& [key, value] : written.items())
        if (!container.contains(key) && key != "stdin" && key != "tty") return false;
    return true;
}

ProbeSite startTrustedProbe(kube::Client& client, const Clock& clock, const json& pod,
                            const TrustedProbeOptions& options) {
    const auto& metadata = pod.value("metadata", json::object());
    const std::string ns = metadata.value("namespace", "");
    const std::string podName = metadata.value("name", "");
    const std::string uid = metadata.value("uid", "");
    const std::string name =
        options.name.empty() ? "rossoctl-probe-" + randomSuffix(client.random()) : options.name;
    // A strategic merge adds to spec.ephemeralContainers by name, keeping earlier ones.
    const json patch = {
        {"spec", {{"ephemeralContainers", json::array({trustedProbeContainer(name, options)})}}}};
    try {
        client.request(
            "PATCH", kube::objectPath(kube::resources::pods(), ns, podName, "ephemeralcontainers"),
            patch.dump(), "application/strategic-merge-patch+json", false);
    } catch (const kube::ApiError& error) {
        if (error.isForbidden())
            throw Error(fmt::format(
                "--trusted-probe: may not add an ephemeral container to pod {} in namespace {} "
                "({}); it needs permission to patch pods/ephemeralcontainers there, or verify "
                "without --trusted-probe",
                podName, ns, error.what()));
        if (error.isNotFound())
            throw TrustedProbeUnavailable(fmt::format(
                "--trusted-probe: the cluster does not serve pods/ephemeralcontainers for pod {} "
                "({}): live probes unproven",
                podName, error.what()));
        throw TrustedProbeUnavailable(
            fmt::format("--trusted-probe: the cluster refused ephemeral container {} in pod {} "
                        "({}): live probes unproven",
                        name, podName, error.what()));
    }
    std::string failure;
    kube::WaitOptions wait;
    wait.timeout = options.startTimeout;
    wait.cancel = options.cancel;
    const auto result =
        kube::waitForObject(client, clock, kube::resources::pods(), ns, podName, wait,
                            [&](const std::optional<json>& current) {
                                if (!current || (*current)["metadata"].value("uid", "") != uid) {
                                    failure = "was lost: the pod was replaced or deleted";
                                    return true;
                                }
                                const auto status = ephemeralStatus(*current, name);
                                if (!status) return false;
                                if (status->value("state", json::object()).contains("running")) {
                                    failure = admittedDifference(*current, name, options);
                                    return true;
                                }
                                const std::string why = startFailure(*status);
                                if (!why.empty()) failure = "did not run: " + why;
                                return !failure.empty();
                            });
    if (result.outcome == kube::WaitOutcome::Cancelled) throw Error("cancelled");
    if (!result.satisfied())
        throw TrustedProbeUnavailable(fmt::format(
            "--trusted-probe: ephemeral container {} in pod {} did not start within {}s (does "
            "the node support ephemeral containers?): live probes unproven",
            name, podName,
            std::chrono::duration_cast<std::chrono::seconds>(options.startTimeout).count()));
    if (!failure.empty())
        throw TrustedProbeUnavailable(
            fmt::format("--trusted-probe: ephemeral container {} ({}) in pod {} {}: "
                        "live probes unproven",
                        name, options.image, podName, failure));
    return ProbeSite{name, options.image};
}

void endTrustedProbe(kube::Client& client, const std::string& namespaceName, const std::string& pod,
                     const ProbeSite& site) {
    if (!site.trusted() || site.container.empty()) return;
    kube::ExecRequest request;
    request.namespaceName = namespaceName;
    request.pod = pod;
    request.container = site.container;
    // The probe's shell traps TERM and exits; the exec dies with its PID namespace.
    request.command = {std::string(kTrustedProbeInit), "-c", "kill -TERM 1"};
    request.timeout = std::chrono::seconds(5);
    try {
        kube::execCapture(client, request, {4096, request.timeout});
    } catch (const std::exception&) {
        // Nothing to report: the container still ends when its lifetime runs out.
    }
}

}  // namespace rossoctl::verify
