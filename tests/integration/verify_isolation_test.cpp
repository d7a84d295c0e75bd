// The host- and kernel-isolation boundaries of sandbox verify against the local cluster (issue
// 30): one sandbox per way to the host, in a project whose Pod Security level admits them,
// each exit 3 naming the field (unsafe sysctls only in the unit tests: a kubelet refuses to
// start such a pod, so it never gets to verify); host-network egress fails; a RuntimeClass named
// for gVisor whose handler is runc fails kernel isolation, naming both kernels.
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <utility>

#include "harness.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "verify_report.hpp"

using harness::evidenceOf;
using nlohmann::json;
namespace resources = rossoctl::kube::resources;

namespace {

const rossoctl::kube::ResourceRef kRuntimeClasses{"node.k8s.io", "v1", "runtimeclasses",
                                                  "RuntimeClass", false};

json& podSpec(json& sandbox) {
    return sandbox["spec"]["podTemplate"]["spec"];
}
json& context(json& sandbox) {
    return podSpec(sandbox)["containers"][0]["securityContext"];
}

// A runtime without user namespaces (containerd 1.6 on the real node) can never start a pod
// with hostUsers: false: the kubelet says so in a FailedCreatePodSandBox event.
bool runtimeLacksUserNamespaces(const std::string& ns, const std::string& pod) {
    rossoctl::kube::ListOptions options;
    options.fieldSelector = "involvedObject.name=" + pod;
    for (const auto& event :
         harness::admin().list(resources::events(), ns, options).value("items", json::array()))
        if (event.value("message", "").find("does not support user namespaces") !=
            std::string::npos)
            return true;
    return false;
}

struct Case {
    std::string name;
    std::function<void(json&)> open;
    std::string check;     // the check that must not pass
    std::string verdict;   // its result
    std::string evidence;  // what its evidence must name
    std::vector<std::string> extraArgs = {};
};

// Deletes the RuntimeClass it made (cluster-scoped: the namespace guard does not).
struct RuntimeClassGuard {
    std::string name;
    ~RuntimeClassGuard() {
        try {
            harness::admin().remove(kRuntimeClasses, "", name, {});
        } catch (...) {
        }
    }
};

}  // namespace

// [outage]: its privileged namespace admits pods whose probes name a host, which leaves every
// sandbox verified meanwhile unproven (attack 59 K1).
TEST_CASE("sandbox verify: every way to the host and a lying RuntimeClass exit 3, naming why",
          "[verify-isolation][outage]") {
    // Privileged Pod Security: the apiserver admits what verify must catch.
    harness::TestNamespace project("verify30-host", false);
    const std::string ns = project.name();
    {
        auto created = harness::rossoctl({"project", "create", ns, "--pod-security", "privileged",
                                          "--cpu", "8", "--memory", "8Gi", "--pods", "40"});
        INFO(created.out << created.err);
        REQUIRE(created.exitCode == 0);
    }
    const std::string outside = harness::outsideUrl();
    RuntimeClassGuard lying{"gvisor-" + ns.substr(ns.rfind('-') + 1)};
    harness::admin().create(kRuntimeClasses, "",
                            {{"apiVersion", "node.k8s.io/v1"},
                             {"kind", "RuntimeClass"},
                             {"metadata", {{"name", lying.name}}},
                             {"handler", "runc"}});

    std::vector<Case> cases = {
        {"privileged",
         [](json& s) {
             context(s)["privileged"] = true;
             context(s).erase("allowPrivilegeEscalation");  // the API refuses false beside it
         },
         "host-isolation", "fail", "container agent: securityContext.privileged: true"},
        {"host-pid", [](json& s) { podSpec(s)["hostPID"] = true; }, "host-isolation", "fail",
         "pod: spec.hostPID: true"},
        {"host-ipc", [](json& s) { podSpec(s)["hostIPC"] = true; }, "host-isolation", "fail",
         "pod: spec.hostIPC: true"},
        {"host-network", [](json& s) { podSpec(s)["hostNetwork"] = true; }, "host-isolation",
         "fail", "pod: spec.hostNetwork: true"},
        {"host-network-egress", [](json& s) { podSpec(s)["hostNetwork"] = true; }, "egress", "fail",
         "spec.hostNetwork: true: no NetworkPolicy selects a host-network pod"},
        {"host-port",
         [](json& s) {
             podSpec(s)["containers"][0]["ports"] =
                 json::array({{{"containerPort", 18730}, {"hostPort", 18730}}});
         },
         "host-isolation", "fail", "container agent: ports[].hostPort: 18730"},
        {"cap-add", [](json& s) { context(s)["capabilities"]["add"] = json::array({"SYS_ADMIN"}); },
         "host-isolation", "fail", "container agent: securityContext.capabilities.add: SYS_ADMIN"},
        {"cap-keep", [](json& s) { context(s)["capabilities"].erase("drop"); }, "host-isolation",
         "fail", "container agent: securityContext.capabilities.drop does not include ALL"},
        {"escalation", [](json& s) { context(s)["allowPrivilegeEscalation"] = true; },
         "host-isolation", "fail",
         "container agent: securityContext.allowPrivilegeEscalation: true"},
        {"root",
         [](json& s) {
             context(s)["runAsNonRoot"] = false;
             context(s)["runAsUser"] = 0;
         },
         "host-isolation", "fail", "container agent: runAsUser: 0 (root)"},
        {"seccomp-unconfined",
         [](json& s) {
             context(s)["seccompProfile"] = {{"type", "Unconfined"}};
         },
         "host-isolation", "fail", "container agent: seccompProfile.type: Unconfined"},
        {"apparmor-unconfined",
         [](json& s) {
             context(s)["appArmorProfile"] = {{"type", "Unconfined"}};
         },
         "host-isolation", "fail", "container agent: appArmorProfile.type: Unconfined"},
        {"proc-unmasked",
         [](json& s) {
             podSpec(s)["hostUsers"] = false;  // the API allows Unmasked only in a user namespace
             context(s)["procMount"] = "Unmasked";
         },
         "host-isolation", "fail", "container agent: securityContext.procMount: Unmasked"},
        {"selinux-spc",
         [](json& s) {
             context(s)["seLinuxOptions"] = {{"type", "spc_t"}};
         },
         "host-isolation", "fail", "container agent: seLinuxOptions.type: spc_t"},
        {"host-path",
         [](json& s) {
             podSpec(s)["volumes"].push_back(
                 {{"name", "node-tmp"}, {"hostPath", {{"path", "/tmp"}}}});
             podSpec(s)["containers"][0]["volumeMounts"].push_back(
                 {{"name", "node-tmp"}, {"mountPath", "/node-tmp"}, {"readOnly", true}});
         },
         "host-isolation", "fail", "pod: volume node-tmp is hostPath /tmp"},
        {"init-privileged",
         [](json& s) {
             json init = podSpec(s)["containers"][0];
             init["name"] = "setup";
             init["command"] = {"true"};
             init["securityContext"]["privileged"] = true;
             init["securityContext"].erase("allowPrivilegeEscalation");
             podSpec(s)["initContainers"].push_back(init);
         },
         "host-isolation", "fail", "init container setup: securityContext.privileged: true"},
        // The trusted probe reads the kernel inside the pod's runtime: runc's is the node's.
        {"lying-runtime-class",
         [&](json& s) { podSpec(s)["runtimeClassName"] = lying.name; },
         "kernel-isolation",
         "fail",
         "runtimeclass/" + lying.name + " has handler runc: a runtime on the node's kernel",
         {"--trusted-probe", "busybox:1.36"}},
        {"required-runtime",
         [](json&) {},
         "kernel-isolation",
         "fail",
         "spec.runtimeClassName is unset; --require-runtime-class requires gvisor",
         {"--require-runtime-class", "gvisor"}},
    };
    for (const auto& c : cases) {
        json sandbox = harness::smallSandbox(ns, c.name, "busybox:1.36");
        c.open(sandbox);
        INFO("creating " << c.name);
        harness::admin().create(harness::sandboxRef(), ns, sandbox);
    }
    std::vector<Case> runnable;
    for (const auto& c : cases) {
        INFO("sandbox " << c.name << " Ready");
        bool unsupported = false;
        REQUIRE(harness::eventually(
            [&] {
                auto found = harness::admin().getIfExists(harness::sandboxRef(), ns, c.name);
                if (found && rossoctl::model::sandboxReady(*found)) return true;
                unsupported = c.name == "proc-unmasked" && runtimeLacksUserNamespaces(ns, c.name);
                return unsupported;
            },
            180));
        if (unsupported)
            WARN("SKIPPED: " << c.name
                             << ": the node's runtime does not support user namespaces, which "
                                "procMount Unmasked needs (the static check has its unit case)");
        else
            runnable.push_back(c);
    }
    cases = runnable;
    std::vector<std::future<harness::RunResult>> runs;
    for (const auto& c : cases) {
        std::vector<std::string> args{
            "sandbox",      "verify",          c.name, "-n", ns, "-o", "json",
            "--no-restart", "--egress-target", outside};
        args.insert(args.end(), c.extraArgs.begin(), c.extraArgs.end());
        runs.push_back(std::async(std::launch::async,
                                  [args] { return harness::rossoctl(args, {}, {}, 300); }));
    }
    std::string matrix;
    for (size_t i = 0; i < cases.size(); ++i) {
        const auto& c = cases[i];
        const auto result = runs[i].get();
        INFO("case " << c.name << "\n" << result.out << result.err);
        CHECK(result.exitCode == 3);
        const json report = json::parse(result.out, nullptr, false);
        REQUIRE(report.is_object());
        bool seen = false;
        for (const auto& check : report["checks"]) {
            if (check["id"] != c.check) continue;
            seen = true;
            CHECK(check["result"] == c.verdict);
            CHECK(check["required"] == true);
            CHECK_THAT(evidenceOf(check), Catch::Contains(c.evidence));
            if (c.name == "lying-runtime-class")
                // Both kernels named, as read by the trusted probe.
                CHECK_THAT(evidenceOf(check), Catch::Contains("the pod sees kernel "));
            matrix += c.name + ": " + c.check + " " + check["result"].get<std::string>() + "\n";
        }
        CHECK(seen);
    }
    WARN("verify isolation matrix:\n" << matrix);
}

TEST_CASE("sandbox verify of a plain hardened sandbox reports kernel isolation, not required",
          "[verify-isolation]") {
    harness::TestNamespace project("verify30-seed", false);
    const std::string ns = project.name();
    REQUIRE(harness::rossoctl({"project", "create", ns}).exitCode == 0);
    harness::admin().create(harness::sandboxRef(), ns,
                            harness::smallSandbox(ns, "seed", "busybox:1.36"));
    REQUIRE(harness::eventually(
        [&] {
            auto found = harness::admin().getIfExists(harness::sandboxRef(), ns, "seed");
            return found && rossoctl::model::sandboxReady(*found);
        },
        180));
    const auto started = std::chrono::steady_clock::now();
    const auto result =
        harness::rossoctl({"sandbox", "verify", "seed", "-n", ns, "-o", "json", "--no-restart",
                           "--egress-target", harness::outsideUrl()});
    const auto took = std::chrono::steady_clock::now() - started;
    INFO(result.out << result.err);
    const json report = json::parse(result.out, nullptr, false);
    REQUIRE(report.is_object());
    for (const auto& check : report["checks"]) {
        if (check["id"] == "kernel-isolation") {
            CHECK(check["required"] == false);
            CHECK_THAT(evidenceOf(check), Catch::Contains("reported, not judged"));
        }
        if (check["id"] == "host-isolation") CHECK(check["static"]["result"] == "pass");
    }
    WARN("verify of one hardened sandbox (--no-restart): "
         << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms\n"
         << result.out);  // the time is bench/'s to judge (issue 30 asks 2.5 s)
}

// The node's `gvisor` RuntimeClass (handler runsc, ptrace platform): the trusted probe reads a
// kernel that is not the node's, so kernel isolation passes with live evidence, where the same
// sandbox on runc fails it because gvisor is required; gVisor's own /proc, keyring and cgroup
// readings do not fail it, and its kernel's MemTotal (the pod's memory limit) passes limits.
TEST_CASE("sandbox verify: a gVisor sandbox passes kernel isolation, read live; runc fails it",
          "[verify-isolation][gvisor]") {
    harness::TestNamespace project("verify30-gvisor", false);
    const std::string ns = project.name();
    REQUIRE(harness::rossoctl({"project", "create", ns}).exitCode == 0);
    REQUIRE(harness::admin().getIfExists(kRuntimeClasses, "", "gvisor"));
    json gvisor = harness::smallSandbox(ns, "gvisor", "busybox:1.36");
    podSpec(gvisor)["runtimeClassName"] = "gvisor";
    harness::admin().create(harness::sandboxRef(), ns, gvisor);
    harness::admin().create(harness::sandboxRef(), ns,
                            harness::smallSandbox(ns, "runc", "busybox:1.36"));
    for (const char* name : {"gvisor", "runc"}) {
        INFO("sandbox " << name << " Ready");
        REQUIRE(harness::eventually(
            [&] {
                auto found = harness::admin().getIfExists(harness::sandboxRef(), ns, name);
                return found && rossoctl::model::sandboxReady(*found);
            },
            180));
    }
    // The gVisor sandbox is verified whole (its restart too): a hardened one passes every
    // required boundary; the runc one only needs its static kernel verdict.
    const auto verify = [&](const std::string& name) {
        std::vector<std::string> args{"sandbox",
                                      "verify",
                                      name,
                                      "-n",
                                      ns,
                                      "-o",
                                      "json",
                                      "--egress-target",
                                      harness::outsideUrl(),
                                      "--trusted-probe",
                                      "busybox:1.36",
                                      "--require-runtime-class",
                                      "gvisor"};
        if (name == "runc") args.push_back("--no-restart");
        return harness::rossoctl(args, {}, {}, 300);
    };
    auto gvisorRun = std::async(std::launch::async, verify, "gvisor");
    const auto runcResult = verify("runc");
    const auto gvisorResult = gvisorRun.get();
    std::string verdicts;
    for (const auto& [name, result] : {std::pair{"gvisor", gvisorResult}, {"runc", runcResult}}) {
        INFO(name << "\n" << result.out << result.err);
        const json report = json::parse(result.out, nullptr, false);
        REQUIRE(report.is_object());
        bool seen = false;
        for (const auto& check : report["checks"]) {
            verdicts += std::string(name) + " " + check["id"].get<std::string>() + ": " +
                        check["result"].get<std::string>() + "\n";
            // In gVisor the pod's /proc status, keyring and cgroup files are gVisor's: no
            // false fail from them; its limits are read from the kernel's own size.
            if (std::string(name) == "gvisor" && check["id"] == "host-isolation")
                CHECK(check["result"] == "pass");
            // Read before the egress probes run in it: only its own init, sleep and shell (CI
            // of stop 51 saw 12 while they ran beside it, a false fail).
            if (check["id"] == "host-isolation")
                CHECK_THAT(evidenceOf(check), Catch::Contains("its own sh (3 processes visible)"));
            // The cluster gives pods no IPv6 (kube-router filters IPv4 only): gVisor's netstack
            // copies none either.
            if (check["id"] == "egress")
                CHECK_THAT(evidenceOf(check), Catch::Contains("sees no IPv6 address but loopback"));
            if (std::string(name) == "gvisor" && check["id"] == "limits") {
                CHECK(check["live"]["result"] == "pass");
                CHECK_THAT(evidenceOf(check),
                           Catch::Contains("container agent: its kernel shows MemTotal 64Mi, no "
                                           "more than the container's memory limit 64Mi"));
            }
            if (std::string(name) == "gvisor" && check["id"] == "nothing-survives")
                CHECK_THAT(evidenceOf(check), Catch::Contains("kernel keyring ends with the pod"));
            // Under gVisor the trusted probe cannot read the agent's sockets (attack 59 D1):
            // egress is unproven, every other required boundary passes.
            if (std::string(name) == "gvisor" && check["id"] == "egress") {
                CHECK(check["result"] == "unproven");
                CHECK_THAT(evidenceOf(check), Catch::Contains("the pod runs under gVisor"));
            } else if (std::string(name) == "gvisor" && check["required"] == true) {
                CHECK(check["result"] == "pass");
            }
            if (check["id"] != "kernel-isolation") continue;
            seen = true;
            CHECK(check["required"] == true);
            if (std::string(name) == "gvisor") {
                CHECK(check["result"] == "pass");
                CHECK(check["static"]["result"] == "pass");
                CHECK(check["live"]["result"] == "pass");
                CHECK_THAT(evidenceOf(check), Catch::Contains("has handler runsc (a sandboxed"));
                CHECK_THAT(evidenceOf(check), Catch::Contains("the pod sees kernel 4.4.0"));
            } else {
                CHECK(result.exitCode == 3);
                CHECK(check["result"] == "fail");
                CHECK_THAT(evidenceOf(check),
                           Catch::Contains("spec.runtimeClassName is unset; "
                                           "--require-runtime-class requires gvisor"));
            }
        }
        CHECK(seen);
    }
    CHECK(gvisorResult.exitCode == 3);  // egress alone unproven (attack 59 D1)
    WARN("gVisor and runc, every check:\n" << verdicts);
}
