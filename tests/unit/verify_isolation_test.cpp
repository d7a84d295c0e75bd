// The host- and kernel-isolation boundaries of sandbox verify: each field of the static part,
// the probe script run here against this machine's /proc, and the live verdicts.
#include <sys/utsname.h>

#include <catch2/catch.hpp>

#include "probe_fixtures.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/model/egress.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/verify/isolation.hpp"
#include "rossoctl/verify/report.hpp"

using namespace rossoctl;
using namespace rossoctl::verify;
using nlohmann::json;
using rossoctl::testing::mentions;

namespace {

json hardenedPod() {
    model::HardenedPodOptions options;
    options.image = "python:3.12-slim";
    return {{"metadata", {{"name", "orders"}, {"namespace", "team1"}}},
            {"spec", model::hardenedPodSpec(options)}};
}

json restrictedNamespace(const std::string& level = "restricted") {
    return {{"metadata",
             {{"name", "team1"}, {"labels", {{"pod-security.kubernetes.io/enforce", level}}}}}};
}

std::string evidence(const Finding& finding) {
    std::string out;
    for (const auto& line : finding.evidence) out += line + "\n";
    return out;
}

// A probe's output: the status lines of the shell and of PID 1, addresses, kernel, boot ID.
std::string probeText(const std::string& status, const std::string& extra = "") {
    std::string out;
    for (const char* who : {"self", "1"}) {
        std::istringstream lines(status);
        for (std::string line; std::getline(lines, line);)
            out += std::string("rossoctl-") + who + "-" + line + "\n";
    }
    return out + extra + "rossoctl-done=1\n";
}

const std::string kConfined =
    "Name:\tsleep\nUid:\t65532\t65532\t65532\t65532\nCapEff:\t0000000000000000\n"
    "CapBnd:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n";

// A namespace's own loopback is always read unless the case says which addresses it reads.
IsolationFacts facts(const std::string& status, const std::string& extra = "") {
    ProbeOutput output;
    output.stdoutText =
        probeText(status, extra.find("rossoctl-local") == std::string::npos
                              ? "rossoctl-local=127.0.0.1\nrossoctl-local=10.244.0.7\n" + extra
                              : extra);
    return parseIsolationFacts(output);
}

IsolationFacts factsWithoutAddresses(const std::string& status) {
    ProbeOutput output;
    output.stdoutText = probeText(status);
    return parseIsolationFacts(output);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return text;
}

KernelInputs nodeKernel() {
    KernelInputs inputs;
    inputs.nodeName = "node-1";
    inputs.nodeKernel = "6.18.44-fc";
    inputs.nodeBootId = "0f9c6a1e-2d3b-4c5d-8e7f-a1b2c3d4e5f6";
    return inputs;
}

json withRuntimeClass(json pod, const std::string& name) {
    pod["spec"]["runtimeClassName"] = name;
    return pod;
}

}  // namespace

TEST_CASE("host isolation: rossoctl's hardened pod in a restricted namespace passes",
          "[verify][isolation]") {
    const Finding finding = hostIsolationStatic(hardenedPod(), restrictedNamespace());
    INFO(evidence(finding));
    CHECK(finding.verdict == Verdict::Pass);
    CHECK(mentions(finding, "namespace team1 enforces Pod Security restricted"));
}

TEST_CASE("host isolation: each way to the host fails, naming the container and the field",
          "[verify][isolation]") {
    struct Case {
        std::string field;
        std::function<void(json& pod)> open;
        std::string evidence;
        Verdict verdict = Verdict::Fail;
    };
    auto agent = [](json& pod) -> json& { return pod["spec"]["containers"][0]; };
    auto context = [&](json& pod) -> json& { return agent(pod)["securityContext"]; };
    const std::vector<Case> cases = {
        {"privileged", [&](json& p) { context(p)["privileged"] = true; },
         "container agent: securityContext.privileged: true"},
        {"hostPID", [](json& p) { p["spec"]["hostPID"] = true; }, "pod: spec.hostPID: true"},
        {"hostIPC", [](json& p) { p["spec"]["hostIPC"] = true; }, "pod: spec.hostIPC: true"},
        {"hostNetwork", [](json& p) { p["spec"]["hostNetwork"] = true; },
         "pod: spec.hostNetwork: true"},
        {"hostPort",
         [&](json& p) {
             agent(p)["ports"] = json::array({{{"containerPort", 80}, {"hostPort", 8080}}});
         },
         "container agent: ports[].hostPort: 8080"},
        {"capabilities.add",
         [&](json& p) {
             context(p)["capabilities"]["add"] = json::array({"NET_BIND_SERVICE", "SYS_ADMIN"});
         },
         "container agent: securityContext.capabilities.add: SYS_ADMIN (only"},
        {"capabilities.drop", [&](json& p) { context(p)["capabilities"].erase("drop"); },
         "container agent: securityContext.capabilities.drop does not include ALL"},
        {"allowPrivilegeEscalation true",
         [&](json& p) { context(p)["allowPrivilegeEscalation"] = true; },
         "container agent: securityContext.allowPrivilegeEscalation: true"},
        {"allowPrivilegeEscalation unset",
         [&](json& p) { context(p).erase("allowPrivilegeEscalation"); },
         "container agent: securityContext.allowPrivilegeEscalation is unset"},
        {"runAsUser 0", [&](json& p) { context(p)["runAsUser"] = 0; },
         "container agent: runAsUser: 0 (root)"},
        {"runAsNonRoot unset",
         [&](json& p) {
             context(p).erase("runAsNonRoot");
             p["spec"]["securityContext"].erase("runAsNonRoot");
             p["spec"]["securityContext"].erase("runAsUser");
         },
         "container agent: neither runAsNonRoot: true nor runAsUser", Verdict::Unproven},
        {"seccomp Unconfined",
         [&](json& p) {
             context(p)["seccompProfile"] = {{"type", "Unconfined"}};
         },
         "container agent: seccompProfile.type: Unconfined"},
        {"seccomp unset",
         [&](json& p) {
             context(p).erase("seccompProfile");
             p["spec"]["securityContext"].erase("seccompProfile");
         },
         "container agent: seccompProfile is unset", Verdict::Unproven},
        {"appArmor",
         [&](json& p) {
             context(p)["appArmorProfile"] = {{"type", "Unconfined"}};
         },
         "container agent: appArmorProfile.type: Unconfined"},
        {"appArmor annotation",
         [](json& p) {
             p["metadata"]["annotations"] = {
                 {"container.apparmor.security.beta.kubernetes.io/agent", "unconfined"}};
         },
         "container agent: annotation container.apparmor.security.beta.kubernetes.io/agent"},
        {"appArmor Localhost",
         [&](json& p) {
             context(p)["appArmorProfile"] = {{"type", "Localhost"},
                                              {"localhostProfile", "allow-everything"}};
         },
         "container agent: appArmorProfile.type: Localhost (allow-everything)", Verdict::Unproven},
        {"appArmor annotation localhost",
         [](json& p) {
             p["metadata"]["annotations"] = {
                 {"container.apparmor.security.beta.kubernetes.io/agent", "localhost/open"}};
         },
         "container agent: annotation container.apparmor.security.beta.kubernetes.io/agent: "
         "localhost/open",
         Verdict::Unproven},
        {"procMount", [&](json& p) { context(p)["procMount"] = "Unmasked"; },
         "container agent: securityContext.procMount: Unmasked"},
        {"sysctls",
         [](json& p) {
             p["spec"]["securityContext"]["sysctls"] =
                 json::array({{{"name", "net.ipv4.tcp_syncookies"}, {"value", "1"}},
                              {{"name", "kernel.msgmax"}, {"value", "65536"}}});
         },
         "pod: securityContext.sysctls: kernel.msgmax"},
        {"seLinux type",
         [&](json& p) {
             context(p)["seLinuxOptions"] = {{"type", "spc_t"}};
         },
         "container agent: seLinuxOptions.type: spc_t"},
        {"seLinux user",
         [](json& p) {
             p["spec"]["securityContext"]["seLinuxOptions"] = {{"user", "system_u"}};
         },
         "container agent: seLinuxOptions.user: system_u"},
        {"hostPath",
         [](json& p) {
             p["spec"]["volumes"].push_back({{"name", "node-root"}, {"hostPath", {{"path", "/"}}}});
         },
         "pod: volume node-root is hostPath /"},
        {"init container",
         [](json& p) {
             p["spec"]["initContainers"] =
                 json::array({{{"name", "setup"}, {"securityContext", {{"privileged", true}}}}});
         },
         "init container setup: securityContext.privileged: true"},
        {"ephemeral container",
         [](json& p) {
             p["spec"]["ephemeralContainers"] = json::array(
                 {{{"name", "debug"},
                   {"securityContext",
                    {{"allowPrivilegeEscalation", false},
                     {"capabilities", {{"drop", {"ALL"}}, {"add", {"SYS_PTRACE"}}}}}}}});
         },
         "ephemeral container debug: securityContext.capabilities.add: SYS_PTRACE"},
    };
    for (const auto& c : cases) {
        json pod = hardenedPod();
        c.open(pod);
        const Finding finding = hostIsolationStatic(pod, restrictedNamespace());
        INFO(c.field << "\n" << evidence(finding));
        CHECK(finding.verdict == c.verdict);
        CHECK(mentions(finding, c.evidence));
    }
}

TEST_CASE("host isolation: the namespace's Pod Security level is said, not judged",
          "[verify][isolation]") {
    const Finding privileged =
        hostIsolationStatic(hardenedPod(), restrictedNamespace("privileged"));
    CHECK(privileged.verdict == Verdict::Pass);
    CHECK(
        mentions(privileged, "enforces Pod Security privileged: it would admit a privileged pod"));
    const Finding unlabelled =
        hostIsolationStatic(hardenedPod(), json{{"metadata", {{"name", "x"}}}});
    CHECK(
        mentions(unlabelled, "enforces Pod Security (none set): it would admit a privileged pod"));
    CHECK(mentions(hostIsolationStatic(hardenedPod(), std::nullopt), "could not be read"));
}

TEST_CASE("egress of a host-network pod is a static fail whatever the policies say",
          "[verify][isolation]") {
    Finding egress{Verdict::Pass, {"egress isolated by networkpolicy/default-deny"}, ""};
    json pod = hardenedPod();
    failEgressOnHostNetwork(pod, egress);
    CHECK(egress.verdict == Verdict::Pass);
    pod["spec"]["hostNetwork"] = true;
    failEgressOnHostNetwork(pod, egress);
    CHECK(egress.verdict == Verdict::Fail);
    CHECK(egress.evidence.front().rfind(
              "pod: spec.hostNetwork: true: no NetworkPolicy selects a host-network pod", 0) == 0);
}

TEST_CASE("the isolation probe runs with sh alone and reads this machine's /proc",
          "[verify][isolation]") {
    const ProbeOutput output = testing::runLocally(isolationProbeCommand(), {"sh"});
    INFO(output.stdoutText << output.stderrText);
    const IsolationFacts read = parseIsolationFacts(output);
    REQUIRE(read.ran);
    utsname uts{};
    ::uname(&uts);
    CHECK(read.kernelRelease == uts.release);
    CHECK(read.self.readable);
    CHECK_FALSE(read.self.uid.empty());
    CHECK_FALSE(read.self.seccomp.empty());
    CHECK(read.processes > 0);
    CHECK(read.bootId.size() == 36);
}

TEST_CASE("where /proc has no osrelease (gVisor), the release comes from /proc/version",
          "[verify][isolation][gvisor]") {
    std::vector<std::string> command = isolationProbeCommand();
    const std::string path = "/proc/sys/kernel/osrelease";
    const auto at = command[2].find(path);
    REQUIRE(at != std::string::npos);
    command[2].replace(at, path.size(), "/proc/sys/kernel/no-such-file");
    const IsolationFacts read = parseIsolationFacts(testing::runLocally(command, {"sh"}));
    REQUIRE(read.ran);
    utsname uts{};
    ::uname(&uts);
    CHECK(read.kernelRelease == uts.release);
}

TEST_CASE("host isolation live: what the container really has", "[verify][isolation]") {
    HostLiveInputs inputs;
    inputs.pod = facts(kConfined);
    inputs.nodeAddresses = {"192.0.2.10"};
    Finding confined = hostIsolationLive(inputs);
    INFO(evidence(confined));
    CHECK(confined.verdict == Verdict::Pass);
    CHECK(mentions(confined, "the agent could forge these lines"));

    inputs.pod = facts(replaced(kConfined, "Seccomp:\t2", "Seccomp:\t0"));
    CHECK(hostIsolationLive(inputs).verdict == Verdict::Fail);
    CHECK(mentions(hostIsolationLive(inputs), "PID 1 (sleep): Seccomp: 0"));

    // In a kernel of the pod's own (gVisor) its system calls reach that kernel: Seccomp 0 and
    // gVisor's missing NoNewPrivs line are said, not failed; root and capabilities still fail.
    inputs.ownKernel = "the pod runs kernel 4.4.0 of its own";
    inputs.pod = facts(replaced(replaced(kConfined, "Seccomp:\t2", "Seccomp:\t0"), "NoNewPrivs:\t1",
                                "NoNewPrivs:\t"));
    const Finding gvisor = hostIsolationLive(inputs);
    INFO(evidence(gvisor));
    CHECK(gvisor.verdict == Verdict::Pass);
    CHECK(mentions(gvisor,
                   "Seccomp: 0 (the pod runs kernel 4.4.0 of its own): its system calls "
                   "reach that kernel, not the node's"));
    CHECK(mentions(gvisor, "in a kernel of the pod's own"));
    inputs.pod = facts(
        replaced(replaced(kConfined, "Seccomp:\t2", "Seccomp:\t0"), "Uid:\t65532", "Uid:\t0"));
    CHECK(hostIsolationLive(inputs).verdict == Verdict::Fail);
    inputs.ownKernel.clear();

    inputs.pod = facts(replaced(kConfined, "Uid:\t65532", "Uid:\t0"));
    CHECK(mentions(hostIsolationLive(inputs), "PID 1 (sleep): Uid 0 65532 65532 65532 holds 0"));

    inputs.pod =
        facts(replaced(kConfined, "CapBnd:\t0000000000000000", "CapBnd:\t00000000a80425fb"));
    const Finding bounding = hostIsolationLive(inputs);
    CHECK(bounding.verdict == Verdict::Fail);
    CHECK(mentions(bounding, "the bounding set (CapBnd) holds CHOWN, DAC_OVERRIDE"));
    CHECK(mentions(bounding, "NET_RAW"));

    // NET_BIND_SERVICE alone is what restricted allows.
    inputs.pod =
        facts(replaced(kConfined, "CapEff:\t0000000000000000", "CapEff:\t0000000000000400"));
    CHECK(hostIsolationLive(inputs).verdict == Verdict::Pass);

    inputs.pod = facts(replaced(kConfined, "NoNewPrivs:\t1", "NoNewPrivs:\t0"));
    CHECK(mentions(hostIsolationLive(inputs), "NoNewPrivs: 0"));

    inputs.pod = facts(kConfined, "rossoctl-local=192.0.2.10\n");
    CHECK(mentions(hostIsolationLive(inputs), "holds the node's address 192.0.2.10"));

    ProbeOutput none;
    none.started = false;
    none.failure = "executable file not found";
    inputs.pod = parseIsolationFacts(none);
    CHECK(hostIsolationLive(inputs).verdict == Verdict::Unproven);
}

TEST_CASE("review46: a probe that reads no local address leaves the network unproven",
          "[verify][isolation]") {
    HostLiveInputs inputs;
    inputs.nodeAddresses = {"192.0.2.10"};
    inputs.pod = factsWithoutAddresses(kConfined);
    const Finding unread = hostIsolationLive(inputs);
    CHECK(unread.verdict == Verdict::Unproven);
    CHECK(mentions(unread, "read no local address"));
    inputs.pod = facts(kConfined);
    CHECK(mentions(hostIsolationLive(inputs), "has 2 local addresses, none of the node's"));
    // In a kernel of its own (gVisor) the interfaces are that kernel's: said, left to the spec.
    inputs.ownKernel = "the pod runs kernel 4.4.0 of its own";
    inputs.pod = factsWithoutAddresses(replaced(kConfined, "Seccomp:\t2", "Seccomp:\t0"));
    const Finding gvisor = hostIsolationLive(inputs);
    CHECK(gvisor.verdict == Verdict::Pass);
    CHECK(mentions(gvisor, "its interfaces are that kernel's"));
}

TEST_CASE("host isolation live: the trusted probe tells whether PID 1 is the node's",
          "[verify][isolation]") {
    HostLiveInputs inputs;
    inputs.pod = facts(kConfined);
    const std::string probeShell =
        replaced(replaced(kConfined, "Name:\tsleep", "Name:\tsh"), "65532\t65532\t65532\t65532",
                 "65534\t65534\t65534\t65534");
    inputs.trusted = facts(probeShell, "rossoctl-processes=3\n");
    CHECK(hostIsolationLive(inputs).verdict == Verdict::Pass);
    CHECK(mentions(hostIsolationLive(inputs), "PID 1 is its own sh (3 processes visible)"));
    // Not the shell the probe's container starts: PID 1 is someone else's.
    inputs.trusted = facts(kConfined, "rossoctl-processes=3\n");
    CHECK(hostIsolationLive(inputs).verdict == Verdict::Fail);
    inputs.trusted = facts(probeShell, "rossoctl-processes=9\n");
    CHECK(hostIsolationLive(inputs).verdict == Verdict::Fail);
    // review46: a shell of another user is not the probe's own (the agent's, the node's).
    inputs.trusted = facts(replaced(probeShell, "65534\t65534\t65534\t65534", "0\t0\t0\t0"),
                           "rossoctl-processes=3\n");
    CHECK(hostIsolationLive(inputs).verdict == Verdict::Fail);
    CHECK(mentions(hostIsolationLive(inputs), "PID 1 sh (uid 0 0 0 0) and 3 processes"));
    inputs.trusted =
        facts(replaced(kConfined, "Name:\tsleep", "Name:\tsystemd"), "rossoctl-processes=212\n");
    const Finding shared = hostIsolationLive(inputs);
    CHECK(shared.verdict == Verdict::Fail);
    CHECK(mentions(
        shared,
        "the trusted probe sees PID 1 systemd (uid 65532 65532 65532 65532) and 212 processes"));
    IsolationFacts broken;
    broken.failure = "--trusted-probe: ephemeral container did not start";
    inputs.trusted = broken;
    CHECK(hostIsolationLive(inputs).verdict == Verdict::Unproven);
}

TEST_CASE(
    "kernel isolation: a RuntimeClass named gvisor with handler runc fails, naming both "
    "kernels",
    "[verify][isolation]") {
    KernelInputs inputs = nodeKernel();
    inputs.runtimeClass = json{{"metadata", {{"name", "gvisor"}}}, {"handler", "runc"}};
    const json pod = withRuntimeClass(hardenedPod(), "gvisor");
    CHECK(kernelIsolationRequired(pod, inputs));
    const Finding lying = kernelIsolationStatic(pod, inputs);
    CHECK(lying.verdict == Verdict::Fail);
    CHECK(mentions(lying,
                   "runtimeclass/gvisor has handler runc: a runtime on the node's kernel "
                   "6.18.44-fc, though its name promises a sandbox"));
    // Live, the trusted probe sees the node's boot ID: the node's kernel.
    const IsolationFacts seen =
        facts(kConfined, "rossoctl-kernel=6.18.44-fc\nrossoctl-boot=" + inputs.nodeBootId + "\n");
    const Finding live = kernelIsolationLive(seen, true, inputs);
    CHECK(live.verdict == Verdict::Fail);
    CHECK(mentions(live, "the pod sees kernel 6.18.44-fc, the node runs 6.18.44-fc"));
    // Without a boot ID to compare, the same release is the node's too.
    inputs.nodeBootId = "1764640000";
    const IsolationFacts sameRelease =
        facts(kConfined, "rossoctl-kernel=6.18.44-fc\nrossoctl-boot=3a4b\n");
    CHECK(kernelIsolationLive(sameRelease, true, inputs).verdict == Verdict::Fail);
}

TEST_CASE(
    "kernel isolation: gVisor seen by the trusted probe passes; the pod's own word does "
    "not",
    "[verify][isolation]") {
    KernelInputs inputs = nodeKernel();
    inputs.runtimeClass = json{{"handler", "runsc"}};
    const json pod = withRuntimeClass(hardenedPod(), "gvisor");
    CHECK(kernelIsolationStatic(pod, inputs).verdict == Verdict::Pass);
    const IsolationFacts gvisor = facts(
        kConfined, "rossoctl-kernel=4.4.0\nrossoctl-boot=7c1e2a90-1111-4222-8333-944455556666\n");
    const Finding trusted = kernelIsolationLive(gvisor, true, inputs);
    CHECK(trusted.verdict == Verdict::Pass);
    CHECK(mentions(trusted, "the pod sees kernel 4.4.0, the node runs 6.18.44-fc"));
    const Finding forgeable = kernelIsolationLive(gvisor, false, inputs);
    CHECK(forgeable.verdict == Verdict::Unproven);
    CHECK(mentions(forgeable, "--trusted-probe"));
}

TEST_CASE("kernel isolation: judged only where a runtime is required or promised",
          "[verify][isolation]") {
    KernelInputs inputs = nodeKernel();
    const json plain = hardenedPod();
    CHECK_FALSE(kernelIsolationRequired(plain, inputs));
    const Finding unrequired = kernelIsolationStatic(plain, inputs);
    CHECK(unrequired.verdict == Verdict::Fail);
    CHECK(mentions(unrequired,
                   "pod: no runtimeClassName: it runs in node node-1's default "
                   "runtime, on the node's kernel 6.18.44-fc"));
    CHECK(mentions(unrequired, "reported, not judged"));
    inputs.required = "gvisor";
    inputs.requiredBy = "--require-runtime-class";
    CHECK(kernelIsolationRequired(plain, inputs));
    CHECK(mentions(kernelIsolationStatic(plain, inputs),
                   "pod: spec.runtimeClassName is unset; --require-runtime-class requires gvisor"));
    inputs.runtimeClass = json{{"handler", "kata-qemu"}};
    CHECK(kernelIsolationStatic(withRuntimeClass(plain, "kata"), inputs).verdict == Verdict::Fail);
    inputs.runtimeClassProblem = "forbidden";
    CHECK(kernelIsolationStatic(withRuntimeClass(plain, "gvisor"), inputs).verdict ==
          Verdict::Unproven);
}

TEST_CASE("a check that is not required is reported but neither fails the sandbox nor the gate",
          "[verify][isolation][report]") {
    SandboxReport report;
    report.name = "orders";
    report.namespaceName = "team1";
    CheckResult held;
    held.kind = CheckKind::HostIsolation;
    held.staticPart = held.livePart = {Verdict::Pass, {"ok"}, ""};
    CheckResult shared;
    shared.kind = CheckKind::KernelIsolation;
    shared.required = false;
    shared.staticPart = {Verdict::Fail, {"pod: no runtimeClassName"}, ""};
    shared.livePart = {Verdict::Fail, {"the node's kernel"}, "uname"};
    report.checks = {held, shared};
    CHECK(report.verdict() == Verdict::Pass);
    CHECK(exitCodeFor({report}) == 0);
    CHECK(summaryLine(report).find("1 pass, 0 fail, 0 unproven, 1 not held but not required") !=
          std::string::npos);
    std::ostringstream table;
    printReportTable(table, report, false);
    CHECK(table.str().find("fail (not required)") != std::string::npos);
    const json reported = reportJson(report);
    CHECK(reported["checks"][1]["required"] == false);
    // A CI author's `.checks[] | select(.result == "fail")` finds nothing on a passing run;
    // what was measured stays in "measured" (and in the parts).
    CHECK(reported["checks"][1]["result"] == "notRequired");
    CHECK(reported["checks"][1]["measured"] == "fail");
    CHECK(reported["checks"][1]["static"]["result"] == "fail");
    CHECK(reported["checks"][0]["result"] == "pass");
    CHECK(reported["checks"][0]["measured"] == "pass");
    for (const auto& check : reported["checks"]) CHECK(check["result"] != "fail");
    CHECK(reported["summary"]["notRequired"] == 1);
    std::ostringstream junit;
    writeJunit(junit, {report});
    CHECK(junit.str().find("failures=\"0\" errors=\"0\" skipped=\"1\"") != std::string::npos);
    CHECK(junit.str().find("<skipped message=\"not required: fail: pod: no runtimeClassName\"/>") !=
          std::string::npos);
    const json sarif = reportSarif({report});
    REQUIRE(sarif["runs"][0]["results"].size() == 1);
    CHECK(sarif["runs"][0]["results"][0]["level"] == "note");
    CHECK(sarif["runs"][0]["results"][0]["ruleId"] == "kernel-isolation");
    CHECK(sarif["runs"][0]["results"][0]["properties"]["result"] == "notRequired");
    CHECK(sarif["runs"][0]["results"][0]["properties"]["verdict"] == "fail");
    // Required, the same findings fail the sandbox.
    report.checks[1].required = true;
    CHECK(exitCodeFor({report}) == 3);
}

TEST_CASE("an --egress-target the project allows is named, so egress says to pick another",
          "[verify][isolation]") {
    const json ns = {
        {"metadata",
         {{"name", "team1"},
          {"annotations",
           {{model::kAllowedEgressAnnotation,
             model::allowedEgressAnnotation(true, false, {"10.20.0.0/16"}, {{"pypi.org", 443}},
                                            {{"151.101.0.223"}})}}}}}};
    const auto allowance = model::projectAllowance(ns);
    auto target = [](const std::string& url) { return *parseEgressTarget(url); };
    CHECK_THAT(targetAllowedBy(target("https://pypi.org/"), "151.101.0.223", allowance),
               Catch::Contains("pypi.org is an allowed host"));
    CHECK_THAT(targetAllowedBy(target("http://10.20.3.4:8080/"), "10.20.3.4", allowance),
               Catch::Contains("10.20.3.4 TCP 8080 is within the allowed 10.20.0.0/16"));
    CHECK_THAT(targetAllowedBy(target("https://mirror.test/"), "151.101.0.223", allowance),
               Catch::Contains("151.101.0.223 TCP 443"));
    CHECK(targetAllowedBy(target("https://example.com/"), "93.184.215.14", allowance).empty());
    CHECK(targetAllowedBy(target("http://10.21.0.1/"), "10.21.0.1", allowance).empty());
}

TEST_CASE("a warm-pool sandbox rossoctl creates passes its own verify's limits and host checks",
          "[verify][isolation][warm-pool]") {
    // The template once had no deadline, and an unclaimed warm Sandbox has no shutdownTime:
    // verify --all said "no deadline" of rossoctl's own pool.
    const json manifest = app::run::sandboxTemplateManifest(app::run::RunPodShape{}, 3600);
    const json pod = {{"metadata", {{"name", "warm"}}},
                      {"spec", manifest["spec"]["podTemplate"]["spec"]}};
    const json quotas = json::array(
        {{{"metadata", {{"name", "sandbox-quota"}}},
          {"spec", {{"hard", {{"pods", "20"}, {"limits.cpu", "4"}, {"limits.memory", "8Gi"}}}}}}});
    const Finding limits =
        limitsStatic(pod, json{{"spec", json::object()}}, quotas, DeadlineBound{},
                     {{"metadata", {{"name", "n"}}},
                      {"status", {{"capacity", {{"cpu", "8"}, {"memory", "32Gi"}}}}}});
    INFO(evidence(limits));
    CHECK(limits.verdict == Verdict::Pass);
    CHECK(hostIsolationStatic(pod, restrictedNamespace()).verdict == Verdict::Pass);
}

TEST_CASE("review 35 M2: a Localhost seccomp profile is no known filter", "[verify]") {
    json pod = hardenedPod();
    for (json* context :
         {&pod["spec"]["securityContext"], &pod["spec"]["containers"][0]["securityContext"]})
        (*context)["seccompProfile"] = {{"type", "Localhost"},
                                        {"localhostProfile", "allow-all.json"}};
    const Finding finding = hostIsolationStatic(pod, restrictedNamespace());
    CHECK(finding.verdict == Verdict::Unproven);
    CHECK(mentions(finding, "seccompProfile.type: Localhost (allow-all.json)"));
}
