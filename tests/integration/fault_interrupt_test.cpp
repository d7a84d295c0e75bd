// Ctrl-C and kill -9: every command exits 130 promptly on Ctrl-C, sandbox run leaves no pod
// at any moment of its life, and the pod of a killed run is reaped by the next run.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "fault_support.hpp"
#include "rossoctl/kube/resource.hpp"

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

const json kRestricted = {{"pod-security.kubernetes.io/enforce", "restricted"}};
const std::string kRunPods = "rossoctl.dev/run=true";

bool runPodIn(const std::string& ns, const std::string& phase) {
    for (const auto& pod : harness::pods(ns, kRunPods))
        if (phase.empty() || pod["status"].value("phase", "") == phase) return true;
    return false;
}

bool noRunPodLeft(const std::string& ns) {
    return harness::eventually([&] { return harness::pods(ns, kRunPods).empty(); }, 20);
}

// Ctrl-C, then the exit code and how long the command took to honour it.
std::pair<int, std::chrono::milliseconds> interrupt(harness::Background& command) {
    const auto start = std::chrono::steady_clock::now();
    command.signal(SIGINT);
    auto result = command.wait(60);
    INFO("stdout: " << result.out << "stderr: " << result.err);
    return {result.exitCode, std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - start)};
}

}  // namespace

TEST_CASE("Ctrl-C at any moment of sandbox run exits 130 and leaves no pod", "[fault]") {
    harness::TestNamespace ns("fault-ctrlc", false);
    REQUIRE(harness::rossoctl({"project", "create", ns.name()}).exitCode == 0);
    const std::vector<std::string> run = {"sandbox", "run", "-n", ns.name(), "--", "sleep", "30"};
    SECTION("while the pod is being created") {
        harness::Background command(run);
        std::this_thread::sleep_for(150ms);
        CHECK(interrupt(command).first == 130);
    }
    SECTION("while the pod is Pending") {
        harness::Background command(run);
        REQUIRE(harness::eventually([&] { return runPodIn(ns.name(), ""); }, 30));
        CHECK(interrupt(command).first == 130);
    }
    SECTION("in the work-dir check, the moment the pod runs") {
        // The window the issue saw leak (about 4 in 30): tried several times.
        for (int attempt = 0; attempt < 6; ++attempt) {
            harness::Background command(run);
            REQUIRE(harness::eventually([&] { return runPodIn(ns.name(), "Running"); }, 60));
            CHECK(interrupt(command).first == 130);
            CHECK(noRunPodLeft(ns.name()));
        }
    }
    SECTION("while the command runs") {
        harness::Background command(run);
        REQUIRE(harness::eventually([&] { return runPodIn(ns.name(), "Running"); }, 60));
        std::this_thread::sleep_for(2s);
        auto [code, took] = interrupt(command);
        CHECK(code == 130);
        CHECK(took < 10s);
    }
    CHECK(noRunPodLeft(ns.name()));
}

TEST_CASE("the pod of a run killed with kill -9 is reaped by the next run", "[fault]") {
    harness::TestNamespace ns("fault-kill9", false);
    REQUIRE(harness::rossoctl({"project", "create", ns.name()}).exitCode == 0);
    std::string leftover;
    {
        harness::Background killed({"sandbox", "run", "-n", ns.name(), "--", "sleep", "120"});
        REQUIRE(harness::eventually([&] { return runPodIn(ns.name(), "Running"); }, 60));
        killed.signal(SIGKILL);
        killed.wait(10);
        auto left = harness::pods(ns.name(), kRunPods);
        REQUIRE(left.size() == 1);  // nothing could clean up after kill -9
        leftover = left.front()["metadata"].value("name", "");
    }
    auto next = harness::rossoctl({"sandbox", "run", "-n", ns.name(), "--", "echo", "next"});
    INFO(next.out << next.err);
    CHECK(next.exitCode == 0);
    CHECK(next.err.find("deleted pod " + leftover + ", left over") != std::string::npos);
    CHECK(noRunPodLeft(ns.name()));
}

TEST_CASE("exit codes under faults: 130 on Ctrl-C, 3 only for the sandbox itself",
          "[fault][outage]") {
    harness::TestNamespace ns("fault-exit", true, kRestricted);
    REQUIRE(harness::rossoctl({"project", "create", ns.name(), "--adopt"}).exitCode == 0);
    harness::importReadyAgent(ns.name(), "orders");
    SECTION("3: a boundary the sandbox leaves unproven (--no-restart)") {
        auto verify =
            harness::rossoctl({"sandbox", "verify", "orders", "--no-restart", "-n", ns.name()});
        INFO(verify.out << verify.err);
        CHECK(verify.exitCode == 3);
    }
    SECTION("130: Ctrl-C in verify") {
        // Against the outside server its egress probe waits out the connect time-out (1.3 s at
        // least) under the default-deny; the default target does not resolve offline, and then
        // verify can end before the interrupt arrives.
        harness::Background verify({"sandbox", "verify", "orders", "-n", ns.name(),
                                    "--egress-target", harness::outsideUrl()});
        // verify of one sandbox takes about 2 s now: interrupt it well inside that.
        std::this_thread::sleep_for(400ms);
        auto [code, took] = interrupt(verify);
        CHECK(code == 130);
        CHECK(took < 10s);
    }
    SECTION("130: Ctrl-C in restart and agents wait, while they wait") {
        harness::Stopped controller("sandbox-controller");
        harness::Background restart(
            {"sandbox", "restart", "orders", "--timeout", "60s", "-n", ns.name()});
        // Interrupted once its DELETE is out (the pod leaving), while it waits for the new one.
        REQUIRE(harness::eventually([&] {
            auto pod = harness::admin().getIfExists(rossoctl::kube::resources::pods(), ns.name(),
                                                    "orders");
            return !pod || (*pod)["metadata"].contains("deletionTimestamp");
        }));
        auto [restartCode, restartTook] = interrupt(restart);
        CHECK(restartCode == 130);
        CHECK(restartTook < 10s);
        harness::Background wait({"agents", "wait", "orders", "--timeout", "60s", "-n", ns.name()});
        std::this_thread::sleep_for(2s);
        auto [waitCode, waitTook] = interrupt(wait);
        CHECK(waitCode == 130);
        CHECK(waitTook < 10s);
        // The pod is gone and the Sandbox still says Ready, as a verify cut short in its own
        // restart leaves them (CI): the next verify waits for the pod instead of failing (1).
        controller.restore();
        auto verify =
            harness::rossoctl({"sandbox", "verify", "orders", "--no-restart", "-n", ns.name()});
        INFO(verify.out << verify.err);
        CHECK(verify.exitCode == 3);
        CHECK(verify.err.find("has no pod") == std::string::npos);
        CHECK(verify.out.find("limits enforced") != std::string::npos);
    }
}
