// Attack 53 F2 against the local cluster: an agent that connects to the outside world in its
// first milliseconds, before the network plugin programmed its policy, and keeps the
// connection; verify with --trusted-probe must fail egress whenever the pod really holds it.
#include <catch2/catch.hpp>
#include <regex>

#include "harness.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "verify_report.hpp"

using nlohmann::json;

namespace {

// The agent's log: each attempt, then the outside server's answers on that connection.
std::string agentLog(const std::string& space, const std::string& pod) {
    auto result =
        harness::run({harness::kubectlPath(), "--kubeconfig", harness::kubeconfigPath(), "exec",
                      "-n", space, pod, "-c", "agent", "--", "cat", "/tmp/early.log"});
    return result.out;
}

// The highest request number the outside server answered on the first attempt's connection
// (0: none): it rises only while that one connection lives.
int firstConnectionAnswers(const std::string& log) {
    static const std::regex answered(R"(asked for /early-1-(\d+))");
    int highest = 0;
    for (auto it = std::sregex_iterator(log.begin(), log.end(), answered);
         it != std::sregex_iterator(); ++it)
        highest = std::max(highest, std::stoi((*it)[1]));
    return highest;
}

}  // namespace

TEST_CASE("sandbox verify: a connection the agent opened before its policy held fails egress",
          "[verify-egress-held]") {
    harness::TestNamespace project("verify53-held", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    json box = harness::smallSandbox(ns, "early");
    // Without rossoctl's egress gate (attack 56 E7), whose start window stays shut: the first
    // milliseconds' connection must get out for the held connection to be judged.
    box["spec"]["podTemplate"]["spec"].erase("initContainers");
    json& agent = box["spec"]["podTemplate"]["spec"]["containers"][0];
    agent["image"] = "busybox:1.36";
    // outside.rossoctl.test by its address: a DNS round trip first loses the race with the
    // network plugin.
    std::string outside = harness::outsideUrl(true);
    outside = outside.substr(outside.find("//") + 2);
    outside = outside.substr(0, outside.find_first_of(":/"));
    // Connect at once and keep the connection busy (a request every 3 s); retry when refused.
    agent["command"] = {
        "/bin/sh", "-c",
        "( n=0; while [ $n -lt 100 ]; do n=$((n+1)); echo \"attempt $n\" >> /tmp/early.log; "
        "( i=0; while :; do i=$((i+1)); printf 'GET /early-%s-%s HTTP/1.1\\r\\nHost: "
        "outside.rossoctl.test\\r\\n\\r\\n' $n $i; sleep 3; done ) | nc " +
            outside +
            " 80 >> /tmp/early.log 2>&1; sleep 0.1; done ) & trap 'exit 0' TERM; "
            "while :; do sleep 1 & wait $!; done"};
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "early"); }, 180));
    // Two answers on the first connection: it was made and lives.
    harness::eventually([&] { return firstConnectionAnswers(agentLog(ns, "early")) >= 2; }, 15);
    const int before = firstConnectionAnswers(agentLog(ns, "early"));
    const auto [result, report] = harness::verifyTrusted(ns, "early");
    INFO(result.out << result.err);
    json egress;
    for (const auto& check : report["checks"])
        if (check["id"] == "egress") egress = check;
    REQUIRE(egress.is_object());
    // An answer after verify on the same connection (one every 3 s) shows it lived throughout.
    harness::eventually([&] { return firstConnectionAnswers(agentLog(ns, "early")) > before; }, 10);
    const std::string log = agentLog(ns, "early");
    INFO(log);
    const int after = firstConnectionAnswers(log);
    // Never a pass with egress open; held before and after verify: the pod held it throughout.
    CHECK(result.exitCode == 3);
    CHECK(egress["result"] != "pass");
    if (before >= 2 && after > before) {
        CHECK(egress["live"]["result"] == "fail");
        CHECK_THAT(
            egress["live"]["evidence"].dump(),
            Catch::Contains("already held an open TCP connection") && Catch::Contains(":80 "));
    } else {
        WARN(
            "the agent's first connection did not get through (or did not last): the race "
            "with the network plugin was lost, nothing held to judge");
    }
    // Attack 55 E6: the pod verify's own restart makes connects in its first milliseconds too;
    // its sockets are read last, from a trusted probe of its own.
    auto restarted =
        harness::rossoctl({"sandbox", "verify", "early", "-n", ns, "--trusted-probe",
                           "busybox:1.36", "--egress-target", harness::outsideUrl(), "-o", "json"},
                          {}, {}, 300);
    INFO(restarted.out << restarted.err);
    const json second = json::parse(restarted.out, nullptr, false);
    REQUIRE(second.is_object());
    const std::string replacementLog = agentLog(ns, "early");
    INFO(replacementLog);
    CHECK(restarted.exitCode == 3);
    if (firstConnectionAnswers(replacementLog) >= 1)
        CHECK_THAT(harness::evidenceOf(harness::checkNamed(second, "egress")),
                   Catch::Matches(
                       "[\\s\\S]*replacement pod early \\(uid [^)]*\\): as verify ended, the pod's "
                       "network namespace already held an open TCP connection[\\s\\S]*"));
    else
        WARN("the replacement's first connection did not get through: nothing held to judge");
}

// Attack 54 E3 and E4: the held connection goes to a pod of the project (a relay whose own
// policy opens its egress, which default-deny gives the sandbox no right to reach), and that
// relay half-closes it at once: the pod's socket is CLOSE_WAIT and still sends.
TEST_CASE("sandbox verify: a half-closed connection held to a relay pod of the project fails",
          "[verify-egress-held]") {
    harness::TestNamespace project("verify54-relay", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    // The relay: its own policy opens it both ways; it shuts its sending half on accept and
    // counts what it reads.
    json relaySpec = harness::smallSandbox(ns, "relay", "python:3.12-slim")["spec"]["podTemplate"];
    relaySpec["metadata"] = {{"name", "relay"}, {"labels", {{"app", "relay54"}}}};
    relaySpec["spec"]["containers"][0]["command"] = {
        "python3", "-c",
        "import socket, threading\n"
        "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        "s.bind(('0.0.0.0', 8080)); s.listen(8)\n"
        "def serve(c):\n"
        "    c.shutdown(socket.SHUT_WR)\n"
        "    while True:\n"
        "        data = c.recv(4096)\n"
        "        if not data: break\n"
        "        open('/tmp/relay.log', 'a').write(data.decode(errors='replace'))\n"
        "while True:\n"
        "    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()\n"};
    relaySpec["apiVersion"] = "v1";
    relaySpec["kind"] = "Pod";
    harness::admin().create(rossoctl::kube::resources::pods(), ns, relaySpec);
    harness::admin().create(
        rossoctl::kube::resources::networkPolicies(), ns,
        json::parse(R"({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "relay-open"}, "spec": {"podSelector": {"matchLabels":
            {"app": "relay54"}}, "policyTypes": ["Ingress", "Egress"], "ingress": [{}],
            "egress": [{}]}})"));
    std::string relayIp;
    REQUIRE(harness::eventually(
        [&] {
            const auto pod =
                harness::admin().getIfExists(rossoctl::kube::resources::pods(), ns, "relay");
            if (!pod || pod->value("status", json::object()).value("phase", "") != "Running")
                return false;
            relayIp = (*pod)["status"].value("podIP", "");
            return !relayIp.empty();
        },
        120));
    json box = harness::smallSandbox(ns, "held", "busybox:1.36");
    box["spec"]["podTemplate"]["spec"].erase("initContainers");  // no egress gate, as above
    // Connect at once (before the plugin programs default-deny) and write every 3 s through
    // the connection, whatever its peer closed; retry when refused.
    box["spec"]["podTemplate"]["spec"]["containers"][0]["command"] = {
        "/bin/sh", "-c",
        "printf '#!/bin/sh\\nn=0; while :; do n=$((n+1)); echo \"ping $HOSTNAME $n\"; sleep 3; "
        "done\\n' > /tmp/x.sh; chmod +x /tmp/x.sh; ( while :; do nc " +
            relayIp +
            " 8080 -e /tmp/x.sh; sleep 0.1; done ) & trap 'exit 0' TERM; "
            "while :; do sleep 1 & wait $!; done"};
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "held"); }, 180));
    const auto relayLog = [&] {
        return harness::run({harness::kubectlPath(), "--kubeconfig", harness::kubeconfigPath(),
                             "exec", "-n", ns, "relay", "--", "cat", "/tmp/relay.log"})
            .out;
    };
    const auto pings = [&] {
        const std::string log = relayLog();
        int count = 0;
        for (auto at = log.find("ping "); at != std::string::npos; at = log.find("ping ", at + 1))
            ++count;
        return count;
    };
    harness::eventually([&] { return pings() >= 2; }, 15);
    const int before = pings();
    const auto [result, report] = harness::verifyTrusted(ns, "held");
    INFO(result.out << result.err);
    json egress;
    for (const auto& check : report["checks"])
        if (check["id"] == "egress") egress = check;
    REQUIRE(egress.is_object());
    harness::eventually([&] { return pings() > before; }, 10);
    const int after = pings();
    INFO(relayLog());
    CHECK(result.exitCode == 3);
    CHECK(egress["result"] != "pass");
    if (before >= 2 && after > before) {
        CHECK(egress["live"]["result"] == "fail");
        CHECK_THAT(egress["live"]["evidence"].dump(),
                   Catch::Contains(relayIp + ":8080") && Catch::Contains("CLOSE_WAIT"));
    } else {
        WARN(
            "the agent's connection to the relay did not get through (or did not last): the "
            "race with the network plugin was lost, nothing held to judge");
    }
}

TEST_CASE("sandbox verify: a UDP socket with no peer leaves egress unproven",
          "[verify-egress-held]") {
    harness::TestNamespace project("verify54-udp", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    std::string outside = harness::outsideUrl(true);
    outside = outside.substr(outside.find("//") + 2);
    outside = outside.substr(0, outside.find_first_of(":/"));
    json box = harness::smallSandbox(ns, "udp", "python:3.12-slim");
    // Attack 54 E2's shape: datagrams to the outside from one socket kept open, no connect().
    box["spec"]["podTemplate"]["spec"]["containers"][0]["command"] = {
        "python3", "-c",
        "import signal, socket, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\n"
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "s.bind(('0.0.0.0', 40000))\n"
        "while True:\n"
        "    try: s.sendto(b'x', ('" +
            outside +
            "', 9999))\n"
            "    except OSError: pass\n"
            "    time.sleep(3)\n"};
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "udp"); }, 180));
    const auto [result, report] = harness::verifyTrusted(ns, "udp");
    INFO(result.out << result.err);
    const json& egress = harness::checkNamed(report, "egress");
    CHECK(egress["live"]["result"] == "unproven");
    CHECK_THAT(harness::evidenceOf(egress),
               Catch::Contains("holds a UDP socket on port 40000 with no peer"));
    CHECK(result.exitCode == 3);
}

// Attack 56 N2: the node, and so any host-network pod, connects into a pod past its project's
// default-deny ingress; an agent that listens has a channel out without opening one.
TEST_CASE("sandbox verify: an agent listening off loopback leaves egress unproven",
          "[verify-egress-held]") {
    harness::TestNamespace project("verify56-listen", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    json box = harness::smallSandbox(ns, "listener");
    json& agent = box["spec"]["podTemplate"]["spec"]["containers"][0];
    agent["image"] = "busybox:1.36";
    agent["command"] = {"/bin/sh", "-c",
                        "( while :; do nc -l -p 8080 < /dev/null; done ) & trap 'exit 0' TERM; "
                        "while :; do sleep 1 & wait $!; done"};
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "listener"); }, 180));
    const auto [result, report] = harness::verifyTrusted(ns, "listener");
    INFO(result.out << result.err);
    const json& egress = harness::checkNamed(report, "egress");
    CHECK(result.exitCode == 3);
    CHECK(egress["result"] == "unproven");
    CHECK_THAT(harness::evidenceOf(egress),
               Catch::Contains("listens on TCP port 8080") && Catch::Contains("host-network pod"));
}

// Attack 57 N1b: an ingress rule for pods of the sandbox's own namespace lets in a relay whose
// own policy opens its egress: the relay reads what the agent serves and carries it out.
TEST_CASE("sandbox verify: ingress from a namespace pod whose egress is open fails egress",
          "[verify-egress-held]") {
    harness::TestNamespace project("verify57-relay-in", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    json relay = harness::smallSandbox(ns, "relay", "busybox:1.36")["spec"]["podTemplate"];
    relay["apiVersion"] = "v1";
    relay["kind"] = "Pod";
    relay["metadata"] = {{"name", "relay"}, {"labels", {{"app", "relay57"}}}};
    relay["spec"]["containers"][0]["command"] = {"/bin/sh", "-c",
                                                 "trap 'exit 0' TERM; while :; do sleep 1; done"};
    harness::admin().create(rossoctl::kube::resources::pods(), ns, relay);
    for (const char* policy : {R"({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              "metadata": {"name": "relay-out"}, "spec": {"podSelector": {"matchLabels":
              {"app": "relay57"}}, "policyTypes": ["Egress"], "egress": [{}]}})",
                               R"({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              "metadata": {"name": "let-relay-in"}, "spec": {"podSelector": {},
              "policyTypes": ["Ingress"], "ingress": [{"from": [{"podSelector":
              {"matchLabels": {"app": "relay57"}}}]}]}})"})
        harness::admin().create(rossoctl::kube::resources::networkPolicies(), ns,
                                json::parse(policy));
    json box = harness::smallSandbox(ns, "served", "busybox:1.36");
    box["spec"]["podTemplate"]["spec"]["containers"][0]["command"] = {
        "/bin/sh", "-c",
        "( while :; do echo key=sk-demo-not-a-real-key | nc -l -p 8080; done ) & "
        "trap 'exit 0' TERM; while :; do sleep 1 & wait $!; done"};
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "served"); }, 180));
    std::string servedIp;
    REQUIRE(harness::eventually(
        [&] {
            const auto pod =
                harness::admin().getIfExists(rossoctl::kube::resources::pods(), ns, "served");
            servedIp = pod ? (*pod)["status"].value("podIP", "") : "";
            const auto other =
                harness::admin().getIfExists(rossoctl::kube::resources::pods(), ns, "relay");
            return !servedIp.empty() && other && (*other)["status"].value("phase", "") == "Running";
        },
        120));
    // The way out is real: the relay reads the agent's key through the rule.
    std::string got;
    harness::eventually(
        [&] {
            got = harness::run({harness::kubectlPath(), "--kubeconfig", harness::kubeconfigPath(),
                                "exec", "-n", ns, "relay", "--", "nc", "-w", "3", servedIp, "8080"})
                      .out;
            return got.find("key=") != std::string::npos;
        },
        30);
    INFO(got);
    CHECK_THAT(got, Catch::Contains("key=sk-demo"));
    const auto [result, report] = harness::verifyTrusted(ns, "served");
    INFO(result.out << result.err);
    const json& egress = harness::checkNamed(report, "egress");
    CHECK(result.exitCode == 3);
    CHECK(egress["result"] == "fail");
    CHECK(egress["static"]["result"] == "fail");
    CHECK_THAT(harness::evidenceOf(egress),
               Catch::Contains("networkpolicy/let-relay-in ingress rule 1 lets pod relay, whose "
                               "own egress is open"));
}
