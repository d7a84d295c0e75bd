// API server outages inside the commands that wait: each rides the outage out within its own
// --timeout and finishes the job. The sandbox controller (or the scheduler) is held stopped so
// the command is surely waiting when the apiserver goes away.
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <thread>

#include "fault_support.hpp"
#include "rossoctl/kube/resource.hpp"

using nlohmann::json;
using namespace std::chrono_literals;
namespace resources = rossoctl::kube::resources;

namespace {

const json kRestricted = {{"pod-security.kubernetes.io/enforce", "restricted"}};
constexpr auto kOutage = 6s;  // twice what the client's own retries cover

// Until the pod with `uid` is gone or on its way out.
bool podReplacedOrGoing(const std::string& ns, const std::string& uid) {
    return harness::eventually([&] {
        auto pod = harness::pod(ns, "orders");
        return !pod || harness::uidOf(pod) != uid ||
               (*pod)["metadata"].contains("deletionTimestamp");
    });
}

bool podReadyWithNewUid(const std::string& ns, const std::string& oldUid) {
    auto pod = harness::pod(ns, "orders");
    if (!pod || harness::uidOf(pod) == oldUid) return false;
    for (const auto& condition : (*pod)["status"].value("conditions", json::array()))
        if (condition.value("type", "") == "Ready") return condition.value("status", "") == "True";
    return false;
}

std::string envOf(const std::optional<json>& pod, const std::string& name) {
    if (!pod) return "<no pod>";
    for (const auto& var : (*pod)["spec"]["containers"][0].value("env", json::array()))
        if (var.value("name", "") == name) return var.value("value", "");
    return "<unset>";
}

}  // namespace

// One outage for every command that waits: each apiserver restart costs the cluster's own
// controllers tens of seconds to recover, so the commands share it rather than pay it five times.
TEST_CASE("one apiserver outage is ridden out by every command that waits", "[fault][outage]") {
    harness::TestNamespace restartNs("fault-restart", true, kRestricted);
    harness::TestNamespace setEnvNs("fault-setenv", true, kRestricted);
    harness::TestNamespace waitNs("fault-wait", true, kRestricted);
    harness::TestNamespace runNs("fault-run", false);
    harness::TestNamespace cleanupNs("fault-cleanup", false);
    for (const auto* ns : {&restartNs, &setEnvNs, &waitNs})
        harness::importReadyAgent(ns->name(), "orders");
    for (const auto* ns : {&runNs, &cleanupNs})
        REQUIRE(harness::rossoctl({"project", "create", ns->name(), "--no-check"}).exitCode == 0);
    std::map<std::string, std::string> oldUid;
    for (const auto* ns : {&restartNs, &setEnvNs, &waitNs})
        oldUid[ns->name()] = harness::uidOf(harness::pod(ns->name(), "orders"));

    // run's cleanup: a run whose exec stream will die with the apiserver.
    harness::Background longRun({"sandbox", "run", "-n", cleanupNs.name(), "--", "sleep", "300"});
    REQUIRE(harness::eventually(
        [&] {
            for (const auto& pod : harness::pods(cleanupNs.name(), "rossoctl.dev/run=true"))
                if (pod["status"].value("phase", "") == "Running") return true;
            return false;
        },
        60));

    // run waiting for its pod: nothing schedules it until after the outage.
    harness::Stopped scheduler("kube-scheduler");
    harness::Background run(
        {"sandbox", "run", "-n", runNs.name(), "--", "sh", "-c", "echo finished"});
    REQUIRE(harness::eventually(
        [&] { return !harness::pods(runNs.name(), "rossoctl.dev/run=true").empty(); }));

    // restart, set-env --restart and agents wait: no new pod until after the outage.
    harness::Stopped controller("sandbox-controller");
    harness::Background restart(
        {"sandbox", "restart", "orders", "--timeout", "150s", "-n", restartNs.name()});
    harness::Background setEnv({"sandbox", "set-env", "orders", "OUTAGE=ridden", "--restart",
                                "--timeout", "150s", "-n", setEnvNs.name()});
    auto noWait =
        harness::rossoctl({"sandbox", "restart", "orders", "--wait=false", "-n", waitNs.name()});
    REQUIRE(noWait.exitCode == 0);
    harness::Background wait(
        {"agents", "wait", "orders", "--timeout", "150s", "-n", waitNs.name()});
    REQUIRE(podReplacedOrGoing(restartNs.name(), oldUid[restartNs.name()]));
    REQUIRE(podReplacedOrGoing(setEnvNs.name(), oldUid[setEnvNs.name()]));
    // The waitNs Sandbox still says Ready=True (its controller is stopped): that is stale.
    std::this_thread::sleep_for(2s);
    CHECK(wait.running());

    harness::apiserverOutage(kOutage);
    CHECK(wait.running());
    controller.restore();
    scheduler.restore();

    auto report = [](const char* what, const harness::RunResult& result) {
        UNSCOPED_INFO(what << ": exit " << result.exitCode << "\nstdout: " << result.out
                           << "stderr: " << result.err);
    };
    auto restarted = restart.wait();
    report("restart", restarted);
    CHECK(restarted.exitCode == 0);
    CHECK(restarted.out.find("restarted") != std::string::npos);
    CHECK(podReadyWithNewUid(restartNs.name(), oldUid[restartNs.name()]));

    auto setEnvResult = setEnv.wait();
    report("set-env --restart", setEnvResult);
    CHECK(setEnvResult.exitCode == 0);
    CHECK(podReadyWithNewUid(setEnvNs.name(), oldUid[setEnvNs.name()]));
    CHECK(envOf(harness::pod(setEnvNs.name(), "orders"), "OUTAGE") == "ridden");

    auto waited = wait.wait();
    report("agents wait", waited);
    CHECK(waited.exitCode == 0);
    CHECK(podReadyWithNewUid(waitNs.name(), oldUid[waitNs.name()]));

    auto ran = run.wait();
    report("run", ran);
    CHECK(ran.exitCode == 0);
    CHECK(ran.out == "finished\n");
    CHECK(harness::eventually(
        [&] { return harness::pods(runNs.name(), "rossoctl.dev/run=true").empty(); }, 30));

    // The exec stream died with the apiserver: the run fails, and its cleanup waited for the
    // server to come back rather than leave the pod behind.
    auto cleaned = longRun.wait();
    report("run's cleanup", cleaned);
    CHECK(cleaned.exitCode == 125);
    CHECK(cleaned.err.find("could not delete pod") == std::string::npos);
    CHECK(harness::eventually(
        [&] { return harness::pods(cleanupNs.name(), "rossoctl.dev/run=true").empty(); }, 30));
}

TEST_CASE("set-env --restart restarts a pod that lacks a value the template already has",
          "[fault]") {
    harness::TestNamespace ns("fault-idem", true, kRestricted);
    harness::importReadyAgent(ns.name(), "orders");
    // An earlier run wrote the template and never restarted (or set-env without --restart).
    auto write = harness::rossoctl({"sandbox", "set-env", "orders", "LEVEL=2", "-n", ns.name()});
    REQUIRE(write.exitCode == 0);
    const std::string oldUid = harness::uidOf(harness::pod(ns.name(), "orders"));
    auto restart = harness::rossoctl(
        {"sandbox", "set-env", "orders", "LEVEL=2", "--restart", "-n", ns.name()});
    INFO(restart.out << restart.err);
    CHECK(restart.exitCode == 0);
    CHECK(restart.out.find("restarted") != std::string::npos);
    CHECK(podReadyWithNewUid(ns.name(), oldUid));
    CHECK(envOf(harness::pod(ns.name(), "orders"), "LEVEL") == "2");
    // Now pod and template agree: nothing to do, no restart.
    const std::string newUid = harness::uidOf(harness::pod(ns.name(), "orders"));
    auto again = harness::rossoctl(
        {"sandbox", "set-env", "orders", "LEVEL=2", "--restart", "-n", ns.name()});
    CHECK(again.exitCode == 0);
    CHECK(again.out.find("environment unchanged") != std::string::npos);
    CHECK(harness::uidOf(harness::pod(ns.name(), "orders")) == newUid);
}
