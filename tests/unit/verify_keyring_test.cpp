// Issue 35 point 8: a key added to the kernel keyring outlives the pod for its uid unless a
// seccomp filter refuses add_key. The live seccomp mode of every container decides, not the
// spec alone: a node may ignore RuntimeDefault.
#include <catch2/catch.hpp>

#include "rossoctl/verify/pod_checks.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl;
using namespace rossoctl::verify;
using nlohmann::json;
using rossoctl::testing::Listener;
using rossoctl::testing::mentions;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;

namespace {

// The isolation probe's answer with `mode` on both Seccomp lines ("" leaves them out).
ProbeOutput statusWithSeccomp(const std::string& mode) {
    ProbeOutput output;
    for (const char* who : {"self", "1"}) {
        output.stdoutText += std::string("rossoctl-") + who + "-Name:\tsleep\n";
        output.stdoutText += std::string("rossoctl-") + who + "-Uid:\t65532\t65532\t65532\t65532\n";
        if (!mode.empty())
            output.stdoutText += std::string("rossoctl-") + who + "-Seccomp:\t" + mode + "\n";
    }
    output.stdoutText += "rossoctl-processes=3\nrossoctl-done=1\n";
    return output;
}

json podWithSidecar() {
    json pod = hardenedPod("pod-uid-1");
    pod["spec"]["containers"].push_back({{"name", "sidecar"}});
    pod["status"]["containerStatuses"].push_back(
        {{"name", "sidecar"}, {"state", {{"running", json::object()}}}});
    return pod;
}

// The hardened pod's answers, with `mode` on the isolation probe's Seccomp lines.
testing::RoutedServer::ExecResponder answersWithSeccomp(const std::string& mode) {
    auto hardened = hardenedPodAnswers("curl");
    return [hardened, mode](const std::vector<std::string>& command) {
        auto script = hardened(command);
        for (auto at = script.stdoutText.find("Seccomp:\t2"); at != std::string::npos;
             at = script.stdoutText.find("Seccomp:\t2", at + 1))
            script.stdoutText.replace(at, 10, "Seccomp:\t" + mode);
        return script;
    };
}

json verifyReport(TestHost& host, testing::RoutedServer::ExecResponder answers,
                  const std::vector<std::string>& extra = {}) {
    serveHardened(host, "curl", sandbox(), hardenedPod("pod-uid-1"), hardenedPod("pod-uid-2"),
                  std::move(answers));
    runVerifyJson(host, extra);
    INFO(host.out.str() << host.err.str());
    return verdicts(testing::printedJson(host.out.str()));
}

}  // namespace

TEST_CASE("keyring live: every container's seccomp mode", "[verify][keyring]") {
    const json pod = podWithSidecar();
    std::map<std::string, std::string> modes = {{"agent", "2"}, {"sidecar", "2"}};
    std::vector<std::string> asked;
    auto exec = [&](const std::vector<std::string>& command, const std::string& container) {
        CHECK(command == isolationProbeCommand());
        asked.push_back(container);
        return statusWithSeccomp(modes[container]);
    };
    SECTION("a filter everywhere under RuntimeDefault: the runtime's default profile") {
        auto finding = keyringLiveEveryContainer(pod, exec);
        CHECK(finding.verdict == Verdict::Pass);
        CHECK(asked == std::vector<std::string>{"agent", "sidecar"});
        CHECK(mentions(finding,
                       "container sidecar (a process exec'd in it): Seccomp: 2 (a "
                       "filter): the runtime's default profile is in force"));
        CHECK(mentions(finding, "container agent PID 1 (sleep): Seccomp: 2"));
        CHECK(mentions(finding, "the agent could forge these lines"));
    }
    SECTION("a sidecar with no filter, though the spec says RuntimeDefault, fails") {
        modes["sidecar"] = "0";
        auto finding = keyringLiveEveryContainer(pod, exec);
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding,
                       "container sidecar (a process exec'd in it): Seccomp: 0 (no "
                       "filter, though the spec says RuntimeDefault): a key it adds to "
                       "the kernel keyring (add_key) outlives the pod for its uid"));
    }
    SECTION("no Seccomp line, or a probe that did not run, is unproven, never pass") {
        modes["agent"] = "";
        auto finding = keyringLiveEveryContainer(pod, exec);
        CHECK(finding.verdict == Verdict::Unproven);
        CHECK(mentions(finding, "container agent (a process exec'd in it): no Seccomp line"));
        ProbeOutput noShell;
        noShell.started = false;
        noShell.failure = "no sh";
        auto refused = keyringLive(parseIsolationFacts(noShell), "agent", "RuntimeDefault", true);
        CHECK(refused.verdict == Verdict::Unproven);
        CHECK(mentions(refused, "its live seccomp mode is not read"));
    }
    SECTION("a container that does not run is unproven") {
        json stopped = pod;
        stopped["status"]["containerStatuses"][1]["state"] = {{"waiting", json::object()}};
        auto finding = keyringLiveEveryContainer(stopped, exec);
        CHECK(finding.verdict == Verdict::Unproven);
        CHECK(asked == std::vector<std::string>{"agent"});
    }
    SECTION("one PID namespace for the pod: PID 1 is the pause process, not judged") {
        json shared = pod;
        shared["spec"]["shareProcessNamespace"] = true;
        auto finding = keyringLiveEveryContainer(shared, exec);
        CHECK_FALSE(mentions(finding, "PID 1"));
    }
    SECTION("a running ephemeral container is read too") {
        json debug = pod;
        debug["spec"]["ephemeralContainers"] = {{{"name", "debug"}}};
        debug["status"]["ephemeralContainerStatuses"] = {
            {{"name", "debug"}, {"state", {{"running", json::object()}}}}};
        modes["debug"] = "0";
        CHECK(keyringLiveEveryContainer(debug, exec).verdict == Verdict::Fail);
        CHECK(asked.back() == "debug");
    }
    CHECK(seccompProfileType(pod, pod["spec"]["containers"][0]) == "RuntimeDefault");
    CHECK(seccompProfileType(pod, {{"securityContext", {{"privileged", true}}}}) == "Unconfined");
}

TEST_CASE("false pass 8: RuntimeDefault in the spec, Seccomp 0 in the pod, fails",
          "[verify][false-pass][keyring]") {
    SECTION("the node ignores the profile: nothing survives fails, restart or not") {
        for (const std::vector<std::string>& extra :
             {std::vector<std::string>{}, std::vector<std::string>{"--no-restart"}}) {
            TestHost host;
            const json checks = verifyReport(host, answersWithSeccomp("0"), extra);
            const json& survives = checks["nothing-survives"];
            CHECK(survives["result"] == "fail");
            CHECK(survives["static"]["result"] == "pass");
            CHECK_THAT(survives["live"]["evidence"].dump(),
                       Catch::Contains("container agent (a process exec'd in it): Seccomp: 0"));
        }
    }
    SECTION("the profile in force: the live evidence says so and the boundary holds") {
        TestHost host;
        const json checks = verifyReport(host, answersWithSeccomp("2"));
        CHECK(checks["nothing-survives"]["result"] == "pass");
        CHECK_THAT(checks["nothing-survives"]["live"]["evidence"].dump(),
                   Catch::Contains("the runtime's default profile is in force"));
        // Read for host isolation, for the keyring before the restart and in the replacement
        // pod (which says the same, so adds no line), and for the replacement's host isolation.
        size_t probes = 0;
        for (const auto& session : host.server.execs)
            probes += session.command == isolationProbeCommand();
        CHECK(probes == 4);
    }
}
