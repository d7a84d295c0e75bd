#include "rossoctl/verify/runner.hpp"

#include <fmt/format.h>

#include <thread>

#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/app/sandbox_restart.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/exec.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kProbeTimeout{30000};

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
    json networkPolicies;
    json resourceQuotas;
};

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
        report.checks.resize(4);
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
        for (auto& thread : threads) thread.join();
        // Destructive: deletes the pod, so it runs after the others are done with it.
        report.checks[3] = timed(&Verification::nothingSurvivesCheck, CheckKind::NothingSurvives);
        report.took = since(started);
        return report;
    }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(fmt::format("sandbox/{} {}", name_, what));
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
            fail(
                fmt::format("has pod {} in phase {}, not Running; wait with \"rossoctl agents "
                            "wait {}\" and verify again",
                            (*pod)["metadata"].value("name", ""), phase, name_));
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
    }

    CheckResult timed(CheckResult (Verification::*check)(), CheckKind kind) {
        const auto started = clock_.monotonic();
        CheckResult result;
        result.kind = kind;
        try {
            result = (this->*check)();
        } catch (const std::exception& error) {
            // A thread must not throw; what broke becomes the live part's evidence.
            result.livePart =
                Finding{Verdict::Unproven, {std::string("error: ") + error.what()}, ""};
        }
        result.took = since(started);
        return result;
    }

    ProbeOutput exec(kube::Client& client, const std::string& pod,
                     const std::vector<std::string>& command) {
        ProbeOutput output;
        kube::ExecRequest request;
        request.namespaceName = ns_;
        request.pod = pod;
        request.container = inputs_.container.value("name", "");
        request.command = command;
        request.timeout = kProbeTimeout;
        try {
            auto captured = kube::execCapture(client, request);
            output.exitCode = captured.result.exitCode;
            output.timedOut = captured.result.timedOut;
            output.stdoutText = std::move(captured.stdoutText);
            output.stderrText = std::move(captured.stderrText);
            output.failure = captured.result.message;
            output.started = captured.result.message.empty();
        } catch (const std::exception& error) {
            output.started = false;
            output.failure = error.what();
        }
        return output;
    }

    ProbeOutput execInCurrentPod(const std::vector<std::string>& command) {
        std::unique_ptr<kube::Client> client;
        try {
            client = newClient_();
        } catch (const std::exception& error) {
            ProbeOutput output;
            output.started = false;
            output.failure = error.what();
            return output;
        }
        return exec(*client, podName_, command);
    }

    CheckResult tokenCheck() {
        CheckResult result;
        result.kind = CheckKind::ServiceAccountToken;
        result.staticPart = tokenStatic(inputs_.pod, inputs_.serviceAccount);
        result.livePart = tokenLive(execInCurrentPod(tokenProbeCommand()));
        result.livePart.probe = "cat";
        return result;
    }

    CheckResult egressCheck() {
        CheckResult result;
        result.kind = CheckKind::Egress;
        result.staticPart = egressStatic(inputs_.pod, inputs_.networkPolicies);
        const auto& target = options_.egressTarget;
        result.livePart = egressLive(execInCurrentPod(egressProbeCommand(target)), target);
        return result;
    }

    CheckResult limitsCheck() {
        CheckResult result;
        result.kind = CheckKind::Limits;
        result.staticPart = limitsStatic(inputs_.pod, inputs_.sandbox, inputs_.resourceQuotas);
        result.livePart =
            limitsLive(execInCurrentPod(cgroupProbeCommand()), memoryLimitBytes(inputs_.container));
        result.livePart.probe = "cgroup";
        return result;
    }

    CheckResult nothingSurvivesCheck() {
        CheckResult result;
        result.kind = CheckKind::NothingSurvives;
        result.staticPart = nothingSurvivesStatic(inputs_.pod);
        result.livePart.probe = "canary";
        if (!options_.restart) {
            result.livePart.evidence.push_back(
                "skipped with --no-restart: the canary test needs a pod restart, not proven");
            return result;
        }
        const CanaryPlace place = canaryPlace(inputs_.pod, inputs_.container);
        const std::string path =
            place.directory + "/.rossoctl-canary-" + randomHex(client_.random(), 16);
        const std::string content = "rossoctl canary " + randomHex(client_.random(), 32);
        const auto written = exec(client_, podName_, canaryWriteCommand(path, content));
        if (auto problem = canaryWriteProblem(written, content); !problem.empty()) {
            result.livePart.evidence.push_back(
                fmt::format("could not write a canary to {} ({}), so the pod was not restarted: {}",
                            place.directory, place.why, problem));
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
            result.livePart.evidence.push_back(fmt::format(
                "canary written to {}, but the restart did not complete: {}", path, error.what()));
            return result;
        }
        const auto pods = app::findSandboxPods(client_, inputs_.sandbox);
        std::string newPod = restarted.podName;
        for (const auto& pod : pods.owned)
            if (app::uidOf(pod) == restarted.newUid) newPod = pod["metadata"].value("name", "");
        const std::string summary =
            fmt::format("{}, pod uid {} → {}", place.why, app::shortUid(restarted.oldUid),
                        app::shortUid(restarted.newUid));
        result.livePart = canaryAfterRestart(exec(client_, newPod, canaryReadCommand(path)), path,
                                             content, summary);
        result.livePart.probe = "canary";
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
};

}  // namespace

SandboxReport verifySandbox(kube::Client& client, const ClientFactory& newClient,
                            const Clock& clock, const kube::ResourceRef& sandboxes,
                            const std::string& ns, const std::string& name,
                            const VerifyOptions& options) {
    return Verification(client, newClient, clock, sandboxes, ns, name, options).run();
}

}  // namespace rossoctl::verify
