#include "rossoctl/app/enforcement_check.hpp"

#include <fmt/format.h>

#include "rossoctl/app/run/reap.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/exec.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/model/pod_failure.hpp"

namespace rossoctl::app {

using nlohmann::json;
using std::chrono::milliseconds;
namespace resources = kube::resources;

namespace {

constexpr const char* kRoleLabel = "rossoctl.dev/enforcement-role";
constexpr long long kNobody = 65534;
constexpr int kPodDeadlineSeconds = kEnforcementCheckPodSeconds;  // they end on their own too

// Listens on $1 and closes every connection it accepts.
constexpr const char* kServerScript = R"SH(if command -v python3 >/dev/null 2>&1; then
exec python3 -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(16)
while True:
    c, _ = s.accept()
    c.close()' "$1"
fi
while :; do nc -l -p "$1" </dev/null >/dev/null 2>&1 || sleep 1; done)SH";

// $1 host, $2 port, $3 seconds.
constexpr const char* kConnectScript = R"SH(if command -v python3 >/dev/null 2>&1; then
python3 -c 'import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), int(sys.argv[3])).close()
    print("rossoctl-connect=connected")
except Exception as e:
    print("rossoctl-connect=failed " + type(e).__name__ + ": " + str(e))' "$1" "$2" "$3"
elif command -v nc >/dev/null 2>&1; then
if out=$(nc -w "$3" "$1" "$2" </dev/null 2>&1); then echo rossoctl-connect=connected
else echo "rossoctl-connect=failed $out"; fi
else echo rossoctl-connect=no-tool; fi)SH";

std::string randomId(Random& random) {
    return fmt::format("{:06x}", random.next() & 0xffffff);
}

json checkPod(const std::string& ns, const std::string& id, const std::string& role,
              const std::string& image, json command) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", fmt::format("rossoctl-check-{}-{}", id, role)},
              {"namespace", ns},
              {"labels",
               {{model::kManagedByLabel, model::kManagedByValue},
                {kEnforcementCheckLabel, id},
                {kRoleLabel, role}}}}},
            {"spec",
             {{"restartPolicy", "Never"},
              {"activeDeadlineSeconds", kPodDeadlineSeconds},
              {"automountServiceAccountToken", false},
              {"terminationGracePeriodSeconds", 0},
              {"securityContext",
               {{"runAsNonRoot", true},
                {"runAsUser", kNobody},
                {"runAsGroup", kNobody},
                {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
              {"containers",
               json::array({{{"name", "check"},
                             {"image", image},
                             {"command", std::move(command)},
                             {"resources",
                              {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}},
                               {"limits", {{"cpu", "100m"}, {"memory", "64Mi"}}}}},
                             {"securityContext",
                              {{"allowPrivilegeEscalation", false},
                               {"readOnlyRootFilesystem", true},
                               {"capabilities", {{"drop", json::array({"ALL"})}}}}}}})}}}};
}

json selectorFor(const std::string& id, const std::string& role) {
    return {{"matchLabels", {{kEnforcementCheckLabel, id}, {kRoleLabel, role}}}};
}

json policy(const std::string& ns, const std::string& name, const std::string& id, json spec) {
    return {{"apiVersion", "networking.k8s.io/v1"},
            {"kind", "NetworkPolicy"},
            {"metadata",
             {{"name", name},
              {"namespace", ns},
              {"labels",
               {{model::kManagedByLabel, model::kManagedByValue}, {kEnforcementCheckLabel, id}}}}},
            {"spec", std::move(spec)}};
}

std::string name(const json& object) {
    return object.value("metadata", json::object()).value("name", "");
}

enum class Connect { Connected, Failed, NoTool, NotRun };

struct Attempt {
    Connect outcome = Connect::NotRun;
    std::string detail;
};

Attempt tryConnect(kube::Client& client, const std::string& ns, const std::string& pod,
                   const std::string& host, const EnforcementCheckOptions& options) {
    const int seconds = std::max<int>(
        1, std::chrono::duration_cast<std::chrono::seconds>(options.connectTimeout).count());
    kube::ExecRequest request;
    request.namespaceName = ns;
    request.pod = pod;
    request.command = connectProbeCommand(host, kEnforcementCheckPort, seconds);
    request.timeout = options.connectTimeout + std::chrono::seconds(10);
    try {
        const auto captured = kube::execCapture(client, request, {4096, request.timeout});
        if (!captured.complete()) return {Connect::NotRun, captured.whyCut()};
        const std::string& out = captured.stdoutText;
        const std::string key = "rossoctl-connect=";
        const auto at = out.find(key);
        if (at == std::string::npos)
            return {Connect::NotRun,
                    captured.result.timedOut ? "the exec timed out" : "no answer from the probe"};
        std::string value = out.substr(at + key.size());
        value = value.substr(0, value.find('\n'));
        if (value == "connected") return {Connect::Connected, value};
        if (value == "no-tool") return {Connect::NoTool, "neither python3 nor nc in the image"};
        return {Connect::Failed, value.substr(value.find(' ') + 1)};
    } catch (const std::exception& error) {
        return {Connect::NotRun, error.what()};
    }
}

// Why the check's pods will not both run, or "" while they may.
std::string podProblem(const json& pod) {
    const std::string phase = pod.value("status", json::object()).value("phase", "");
    if (phase == "Failed" || phase == "Succeeded") return "pod " + name(pod) + " ended: " + phase;
    for (const auto& status :
         pod.value("status", json::object()).value("containerStatuses", json::array())) {
        const auto& waiting =
            status.value("state", json::object()).value("waiting", json::object());
        const std::string reason = waiting.value("reason", "");
        if (reason == "ErrImagePull" || reason == "ImagePullBackOff" ||
            reason == "InvalidImageName" || reason.find("Error") != std::string::npos)
            return fmt::format("pod {}: {} {}", name(pod), reason, waiting.value("message", ""));
    }
    return {};
}

// "Pending (ContainerCreating)", "Running without an IP": where a check pod is on its way.
std::string podState(const json& pod) {
    const json status = pod.value("status", json::object());
    std::string state = status.value("phase", "Pending");
    for (const auto& container : status.value("containerStatuses", json::array())) {
        const std::string reason = container.value("state", json::object())
                                       .value("waiting", json::object())
                                       .value("reason", "");
        if (!reason.empty()) return state + " (" + reason + ")";
    }
    if (state == "Running" && status.value("podIP", "").empty()) state += " without an IP";
    return state;
}

}  // namespace

std::vector<std::string> connectProbeCommand(const std::string& host, int port, int seconds) {
    return {"sh",
            "-c",
            kConnectScript,
            "rossoctl-check",
            host,
            std::to_string(port),
            std::to_string(seconds)};
}

EnforcementObjects enforcementObjects(const std::string& ns, const std::string& id,
                                      const EnforcementCheckOptions& options,
                                      const std::string& owner) {
    EnforcementObjects objects;
    const std::string port = std::to_string(kEnforcementCheckPort);
    objects.server = checkPod(ns, id, "server", options.image,
                              json::array({"sh", "-c", kServerScript, "rossoctl-check", port}));
    objects.client = checkPod(ns, id, "client", options.image,
                              json::array({"sleep", std::to_string(kPodDeadlineSeconds)}));
    for (json* pod : {&objects.server, &objects.client})
        if (!options.runtimeClass.empty())
            (*pod)["spec"]["runtimeClassName"] = options.runtimeClass;
    objects.serverIngress = policy(ns, fmt::format("rossoctl-check-{}-server", id), id,
                                   {{"podSelector", selectorFor(id, "server")},
                                    {"policyTypes", json::array({"Ingress"})},
                                    {"ingress", json::array({json::object()})}});
    objects.control =
        policy(ns, fmt::format("rossoctl-check-{}-control", id), id,
               {{"podSelector", selectorFor(id, "client")},
                {"policyTypes", json::array({"Egress"})},
                {"egress",
                 json::array({{{"to", json::array({{{"podSelector", selectorFor(id, "server")}}})},
                               {"ports", json::array({{{"protocol", "TCP"},
                                                       {"port", kEnforcementCheckPort}}})}}})}});
    if (!owner.empty())
        for (json* object :
             {&objects.server, &objects.client, &objects.serverIngress, &objects.control})
            (*object)["metadata"]["annotations"][run::kRunOwnerAnnotation] = owner;
    return objects;
}

namespace {

// Deletes the check's objects (pods at once, they also end by themselves); what could not be
// deleted, by kind/name.
std::vector<std::string> removeEnforcementObjects(kube::Client& checking, const std::string& ns,
                                                  const EnforcementObjects& objects,
                                                  const EnforcementCheckOptions& options) {
    std::unique_ptr<kube::Client> own;
    try {
        if (options.cleanupClient) own = options.cleanupClient();
    } catch (const std::exception&) {
        // the checking client it is, then
    }
    kube::Client& client = own ? *own : checking;
    std::vector<std::string> left;
    auto remove = [&](const kube::ResourceRef& ref, const char* kind, const json& object,
                      const kube::DeleteOptions& how) {
        try {
            client.remove(ref, ns, name(object), how);
        } catch (const kube::ApiError& error) {
            if (!error.isNotFound()) left.push_back(fmt::format("{}/{}", kind, name(object)));
        } catch (const std::exception&) {
            left.push_back(fmt::format("{}/{}", kind, name(object)));
        }
    };
    kube::DeleteOptions now;
    now.gracePeriodSeconds = 0;
    for (const auto* pod : {&objects.client, &objects.server})
        remove(resources::pods(), "pod", *pod, now);
    for (const auto* np : {&objects.control, &objects.serverIngress})
        remove(resources::networkPolicies(), "networkpolicy", *np, {});
    return left;
}

EnforcementResult runEnforcementCheck(kube::Client& client, const Clock& clock,
                                      const std::string& ns, const EnforcementCheckOptions& options,
                                      const std::string& id, const EnforcementObjects& objects,
                                      std::chrono::steady_clock::time_point started);

}  // namespace

EnforcementResult checkDefaultDenyEnforced(kube::Client& client, const Clock& clock,
                                           const std::string& ns,
                                           const EnforcementCheckOptions& options) {
    const auto started = clock.monotonic();
    const std::string id = randomId(client.random());
    const auto objects = enforcementObjects(ns, id, options, run::currentRunOwner(client.random()));
    // Removed on every path out, Ctrl-C included (by a client it does not cut); a second Ctrl-C
    // exits before that, so until then it is told what stays and what removes it.
    const InterruptNote::Scope left(
        options.interruptNote,
        fmt::format("second interrupt: exiting now; the enforcement check's pods and policies "
                    "rossoctl-check-{}-* are left in {} (the pods end within {}s); \"rossoctl gc "
                    "-n {}\" removes them",
                    id, ns, kPodDeadlineSeconds, ns));
    EnforcementResult result;
    try {
        result = runEnforcementCheck(client, clock, ns, options, id, objects, started);
    } catch (...) {
        removeEnforcementObjects(client, ns, objects, options);
        throw;
    }
    result.leftBehind = removeEnforcementObjects(client, ns, objects, options);
    result.cancelled = options.cancel && options.cancel->cancelled();
    return result;
}

namespace {

EnforcementResult runEnforcementCheck(kube::Client& client, const Clock& clock,
                                      const std::string& ns, const EnforcementCheckOptions& options,
                                      const std::string& id, const EnforcementObjects& objects,
                                      std::chrono::steady_clock::time_point started) {
    EnforcementResult result;
    auto finish = [&](Enforcement verdict, std::string line) {
        result.verdict = verdict;
        result.evidence.push_back(std::move(line));
        result.took = std::chrono::duration_cast<milliseconds>(clock.monotonic() - started);
        return result;
    };
    // In a namespace made a moment ago the ServiceAccount admission refuses pods until the
    // controller has created the "default" ServiceAccount, and quota admission until the quota
    // controller has counted usage ("status unknown for quota").
    const auto startBy = clock.monotonic() + options.startTimeout;
    auto createPod = [&](const json& pod) {
        while (true) {
            try {
                client.create(resources::pods(), ns, pod);
                return;
            } catch (const kube::ApiError& error) {
                const std::string what = error.what();
                const bool notYet = error.isForbidden() && model::admissionNotYetReady(what);
                if (!notYet || clock.monotonic() >= startBy) throw;
            }
            clock.sleepFor(milliseconds(200));
        }
    };
    try {
        client.create(resources::networkPolicies(), ns, objects.serverIngress);
        client.create(resources::networkPolicies(), ns, objects.control);
        createPod(objects.server);
        createPod(objects.client);
    } catch (const std::exception& error) {
        return finish(
            Enforcement::Unproven,
            fmt::format("could not create the check's pods and policies: {}", error.what()));
    }
    std::string problem;
    std::string serverIp;
    kube::WaitOptions wait;
    wait.labelSelector = std::string(kEnforcementCheckLabel) + "=" + id;
    wait.timeout = std::max(std::chrono::duration_cast<milliseconds>(startBy - clock.monotonic()),
                            milliseconds(1));
    wait.cancel = options.cancel;
    std::string lastSeen = "none of them created yet";  // for the time-out's message
    const auto running = kube::waitForSet(
        client, clock, resources::pods(), ns, wait, [&](const kube::ObjectSet& pods) {
            int ready = 0;
            lastSeen.clear();
            for (const auto& [podName, pod] : pods) {
                if (problem = podProblem(pod); !problem.empty()) return true;
                const auto& status = pod.value("status", json::object());
                lastSeen +=
                    fmt::format("{}{} {}", lastSeen.empty() ? "" : ", ", podName, podState(pod));
                if (status.value("phase", "") != "Running" || status.value("podIP", "").empty())
                    continue;
                ++ready;
                if (podName == name(objects.server)) serverIp = status.value("podIP", "");
            }
            return ready == 2;
        });
    if (!problem.empty())
        return finish(Enforcement::Unproven, "the check's pods did not run: " + problem);
    if (!running.satisfied())
        return finish(
            Enforcement::Unproven,
            fmt::format(
                "the check's pods ({}) were not running within {}s (last seen: {}); raise "
                "--timeout if the node is only slow",
                options.image,
                std::chrono::duration_cast<std::chrono::seconds>(options.startTimeout).count(),
                lastSeen));
    const std::string clientPod = name(objects.client);
    const std::string target = fmt::format("{}:{}", serverIp, kEnforcementCheckPort);

    // Positive control: with egress explicitly allowed the client must reach the server.
    Attempt attempt;
    auto deadline = clock.monotonic() + options.settleTimeout;
    do {
        attempt = tryConnect(client, ns, clientPod, serverIp, options);
        if (attempt.outcome != Connect::Failed) break;
        clock.sleepFor(milliseconds(200));
    } while (clock.monotonic() < deadline);
    if (attempt.outcome == Connect::NoTool || attempt.outcome == Connect::NotRun)
        return finish(Enforcement::Unproven, fmt::format("the probe could not run in pod {}: {}",
                                                         clientPod, attempt.detail));
    if (attempt.outcome != Connect::Connected)
        return finish(Enforcement::Unproven,
                      fmt::format("control failed: pod {} could not reach {} even with a policy "
                                  "allowing it ({}), so a denial would prove nothing",
                                  clientPod, target, attempt.detail));
    result.evidence.push_back(
        fmt::format("control: pod {} reached {} while networkpolicy/{} allowed it", clientPod,
                    target, name(objects.control)));

    // The real test: without the control policy, the project's default-deny must stop it.
    try {
        client.remove(resources::networkPolicies(), ns, name(objects.control));
    } catch (const std::exception& error) {
        return finish(Enforcement::Unproven,
                      fmt::format("could not remove the control policy: {}", error.what()));
    }
    deadline = clock.monotonic() + std::max(options.settleTimeout, options.removalTimeout);
    // One probe that fails proves little (a SYN lost while the plugin resyncs times out too):
    // a denial is two failures in a row, with no connection between them.
    int failedInARow = 0;
    do {
        attempt = tryConnect(client, ns, clientPod, serverIp, options);
        if (attempt.outcome == Connect::Failed) {
            if (++failedInARow == 2) break;
            // Apart in time, so one gap (the server between connections, a resync) is not both.
            clock.sleepFor(milliseconds(500));
            continue;
        }
        failedInARow = 0;
        if (attempt.outcome != Connect::Connected) break;
        clock.sleepFor(milliseconds(200));
    } while (clock.monotonic() < deadline);
    if (attempt.outcome == Connect::Connected)
        return finish(Enforcement::NotEnforced,
                      fmt::format("pod {} still reached {} {}s after the allowing policy was "
                                  "removed: egress is not isolated by networkpolicy/default-deny",
                                  clientPod, target,
                                  std::chrono::duration_cast<std::chrono::seconds>(
                                      std::max(options.settleTimeout, options.removalTimeout))
                                      .count()));
    if (attempt.outcome != Connect::Failed)
        return finish(Enforcement::Unproven, fmt::format("the probe could not run in pod {}: {}",
                                                         clientPod, attempt.detail));
    if (failedInARow < 2)
        return finish(Enforcement::Unproven,
                      fmt::format("pod {} failed to reach {} once, at the end of the check's "
                                  "time, and was not tried again ({})",
                                  clientPod, target, attempt.detail));
    return finish(Enforcement::Enforced,
                  fmt::format("denied: pod {} could not connect to {} under default-deny ({})",
                              clientPod, target, attempt.detail));
}

}  // namespace

}  // namespace rossoctl::app
