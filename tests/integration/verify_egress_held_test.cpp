// Attack 53 F2 against the local cluster: an agent that connects to the outside world in its
// first milliseconds, before the network plugin programmed its policy, and keeps the
// connection; verify with --trusted-probe must fail egress whenever the pod really holds it.
#include <catch2/catch.hpp>
#include <regex>

#include "harness.hpp"
#include "rossoctl/model/sandbox.hpp"

using nlohmann::json;

namespace {

bool sandboxIsReady(const std::string& space, const std::string& name) {
    auto sandbox = harness::admin().getIfExists(harness::sandboxRef(), space, name);
    return sandbox && rossoctl::model::sandboxReady(*sandbox);
}

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
    {
        auto created = harness::rossoctl({"project", "create", ns, "--no-check"});
        INFO(created.out << created.err);
        REQUIRE(created.exitCode == 0);
    }
    json box = harness::smallSandbox(ns, "early");
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
    REQUIRE(harness::eventually([&] { return sandboxIsReady(ns, "early"); }, 180));
    // Two answers on the first connection: it was made and lives.
    harness::eventually([&] { return firstConnectionAnswers(agentLog(ns, "early")) >= 2; }, 15);
    const int before = firstConnectionAnswers(agentLog(ns, "early"));
    auto result = harness::rossoctl(
        {"sandbox", "verify", "early", "-n", ns, "--no-restart", "--trusted-probe", "busybox:1.36",
         "--egress-target", harness::outsideUrl(), "-o", "json"},
        {}, {}, 300);
    INFO(result.out << result.err);
    const json report = json::parse(result.out, nullptr, false);
    REQUIRE(report.is_object());
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
}
