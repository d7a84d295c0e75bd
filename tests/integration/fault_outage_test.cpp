// API server outages inside the commands that wait: each rides the outage out within its own
// --timeout and finishes the job. The sandbox controller (or the scheduler) is held stopped so
// the command is surely waiting when the apiserver goes away.
#include <catch2/catch.hpp>
#include <chrono>
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

TEST_CASE("an apiserver outage inside sandbox restart is ridden out", "[fault]") {
    harness::TestNamespace ns("fault-restart", true, kRestricted);
    harness::importReadyAgent(ns.name(), "orders");
    const std::string oldUid = harness::uidOf(harness::pod(ns.name(), "orders"));
    harness::Stopped controller("sandbox-controller");
    harness::Background restart(
        {"sandbox", "restart", "orders", "--timeout", "90s", "-n", ns.name()});
    REQUIRE(podReplacedOrGoing(ns.name(), oldUid));
    harness::apiserverOutage(kOutage);
    controller.restore();
    auto result = restart.wait();
    INFO("exit " << result.exitCode << "\nstdout: " << result.out << "stderr: " << result.err);
    CHECK(result.exitCode == 0);
    CHECK(result.out.find("restarted") != std::string::npos);
    CHECK(podReadyWithNewUid(ns.name(), oldUid));
}

TEST_CASE("an apiserver outage inside set-env --restart is ridden out", "[fault]") {
    harness::TestNamespace ns("fault-setenv", true, kRestricted);
    harness::importReadyAgent(ns.name(), "orders");
    const std::string oldUid = harness::uidOf(harness::pod(ns.name(), "orders"));
    harness::Stopped controller("sandbox-controller");
    harness::Background setEnv({"sandbox", "set-env", "orders", "OUTAGE=ridden", "--restart",
                                "--timeout", "90s", "-n", ns.name()});
    REQUIRE(podReplacedOrGoing(ns.name(), oldUid));
    harness::apiserverOutage(kOutage);
    controller.restore();
    auto result = setEnv.wait();
    INFO("exit " << result.exitCode << "\nstdout: " << result.out << "stderr: " << result.err);
    CHECK(result.exitCode == 0);
    CHECK(podReadyWithNewUid(ns.name(), oldUid));
    CHECK(envOf(harness::pod(ns.name(), "orders"), "OUTAGE") == "ridden");
}

TEST_CASE("agents wait after restart --wait=false waits for the new pod, through an outage",
          "[fault]") {
    harness::TestNamespace ns("fault-wait", true, kRestricted);
    harness::importReadyAgent(ns.name(), "orders");
    const std::string oldUid = harness::uidOf(harness::pod(ns.name(), "orders"));
    harness::Stopped controller("sandbox-controller");
    auto restart =
        harness::rossoctl({"sandbox", "restart", "orders", "--wait=false", "-n", ns.name()});
    REQUIRE(restart.exitCode == 0);
    harness::Background wait({"agents", "wait", "orders", "--timeout", "90s", "-n", ns.name()});
    // The Sandbox still says Ready=True (its controller is stopped): that status is stale.
    std::this_thread::sleep_for(2s);
    CHECK(wait.running());
    harness::apiserverOutage(kOutage);
    CHECK(wait.running());
    controller.restore();
    auto result = wait.wait();
    INFO("exit " << result.exitCode << "\nstdout: " << result.out << "stderr: " << result.err);
    CHECK(result.exitCode == 0);
    CHECK(podReadyWithNewUid(ns.name(), oldUid));
}

TEST_CASE("an apiserver outage while sandbox run waits for its pod is ridden out", "[fault]") {
    harness::TestNamespace ns("fault-run", false);
    auto project = harness::rossoctl({"project", "create", ns.name()});
    REQUIRE(project.exitCode == 0);
    harness::Stopped scheduler("kube-scheduler");
    harness::Background run({"sandbox", "run", "-n", ns.name(), "--", "sh", "-c", "echo finished"});
    REQUIRE(harness::eventually(
        [&] { return !harness::pods(ns.name(), "rossoctl.dev/run=true").empty(); }));
    harness::apiserverOutage(kOutage);
    scheduler.restore();
    auto result = run.wait();
    INFO("exit " << result.exitCode << "\nstdout: " << result.out << "stderr: " << result.err);
    CHECK(result.exitCode == 0);
    CHECK(result.out == "finished\n");
    CHECK(harness::eventually(
        [&] { return harness::pods(ns.name(), "rossoctl.dev/run=true").empty(); }, 30));
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

TEST_CASE("sandbox run's cleanup rides out an apiserver outage: no pod left", "[fault]") {
    harness::TestNamespace ns("fault-cleanup", false);
    REQUIRE(harness::rossoctl({"project", "create", ns.name()}).exitCode == 0);
    harness::Background run({"sandbox", "run", "-n", ns.name(), "--", "sleep", "20"});
    REQUIRE(harness::eventually(
        [&] {
            for (const auto& pod : harness::pods(ns.name(), "rossoctl.dev/run=true"))
                if (pod["status"].value("phase", "") == "Running") return true;
            return false;
        },
        60));
    std::this_thread::sleep_for(2s);
    // The exec stream dies with the apiserver; the run fails, and its cleanup must wait for
    // the server to come back rather than leave the pod behind.
    harness::apiserverOutage(kOutage);
    auto result = run.wait();
    INFO("exit " << result.exitCode << "\nstdout: " << result.out << "stderr: " << result.err);
    CHECK(result.exitCode == 125);
    CHECK(result.err.find("could not delete pod") == std::string::npos);
    CHECK(harness::eventually(
        [&] { return harness::pods(ns.name(), "rossoctl.dev/run=true").empty(); }, 30));
}
