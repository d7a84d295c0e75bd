// Faults: the apiserver restarting mid-command, throttling and 503 storms, slow responses, an
// exec stream cut short. The tool retries what is safe, never repeats a create blindly, says
// what state it left, and a re-run finishes the job.
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <thread>

#include "fault_server.hpp"
#include "fault_support.hpp"
#include "harness.hpp"
#include "rossoctl/kube/resource.hpp"

using nlohmann::json;
namespace resources = rossoctl::kube::resources;

namespace {

const json kRestricted = {{"pod-security.kubernetes.io/enforce", "restricted"}};

void importAgent(const std::string& ns, const std::string& name) {
    auto result =
        harness::rossoctl({"agents", "import", "--deployment-type", "sandbox", "from-image",
                           "--name", name, "--containerImage", "curlimages/curl:8", "-n", ns});
    INFO(result.err);
    REQUIRE(result.exitCode == 0);
    auto wait = harness::rossoctl({"agents", "wait", name, "--timeout", "2m", "-n", ns});
    INFO(wait.err);
    REQUIRE(wait.exitCode == 0);
}

bool oneLine(const std::string& text) {
    return std::count(text.begin(), text.end(), '\n') == 1 && text.back() == '\n' &&
           text.find("terminate called") == std::string::npos;
}

// Waits until the fault server has seen a request with all the parts.
bool seen(const harness::FaultApiserver& server, const std::vector<std::string>& parts,
          int seconds = 60) {
    return harness::eventually([&] { return server.count(parts) > 0; }, seconds);
}

}  // namespace

TEST_CASE("apiserver restarted in the middle of sandbox verify", "[fault][outage]") {
    harness::TestNamespace ns("fault-verify", true, kRestricted);
    auto project = harness::rossoctl({"project", "create", ns.name(), "--adopt"});
    INFO(project.err);
    importAgent(ns.name(), "orders");
    harness::FaultApiserver front;
    auto running = std::async(std::launch::async, [&] {
        return harness::rossoctl({"--kubeconfig", front.kubeconfig(), "sandbox", "verify", "orders",
                                  "-n", ns.name(), "--egress-target", harness::outsideUrl(),
                                  "--trusted-probe", "curlimages/curl:8"});
    });
    REQUIRE(seen(front, {"/exec"}));
    harness::apiserverOutage(std::chrono::seconds(6));
    auto result = running.get();
    INFO("exit " << result.exitCode << "\nstdout: " << result.out << "stderr: " << result.err);
    CHECK(result.err.find("terminate called") == std::string::npos);
    // The outage is ridden out: a probe's exec the outage refused or cut runs again once the
    // server is back, and the restart's reads wait for it too. (Never 3: CI reads 3 as a
    // sandbox that is not isolated.)
    CHECK(result.exitCode == 0);
    // A target the positive control reaches: the default (example.com) is dead offline. The
    // trusted probe: a denial seen from the pod's own processes is unproven (issue 35).
    auto rerun =
        harness::rossoctl({"sandbox", "verify", "orders", "-n", ns.name(), "--egress-target",
                           harness::outsideUrl(), "--trusted-probe", "curlimages/curl:8"});
    INFO(rerun.out << rerun.err);
    CHECK(rerun.exitCode == 0);
}

TEST_CASE("apiserver restarted in the middle of project create", "[fault][outage]") {
    harness::TestNamespace ns("fault-project", false);
    // Held on the quota, then the apiserver goes away under the request.
    harness::FaultApiserver front({"PATCH /resourcequotas/ delay:2 1"});
    auto running = std::async(std::launch::async, [&] {
        return harness::rossoctl(
            {"--kubeconfig", front.kubeconfig(), "project", "create", ns.name()});
    });
    REQUIRE(seen(front, {"PATCH", "/resourcequotas/"}));
    // Isolation was written before the quota: a run stopped here leaves the namespace denied.
    CHECK(harness::admin().getIfExists(resources::networkPolicies(), ns.name(), "default-deny"));
    CHECK(harness::admin().getIfExists(resources::networkPolicies(), ns.name(), "allow-dns"));
    harness::apiserverOutage(std::chrono::seconds(6));
    auto result = running.get();
    INFO("exit " << result.exitCode << "\nstdout: " << result.out << "stderr: " << result.err);
    CHECK(result.exitCode == 0);  // each write rides out the outage
    auto rerun = harness::rossoctl({"project", "create", ns.name()});
    INFO(rerun.err);
    CHECK(rerun.exitCode == 0);
    for (const auto& [kind, name] :
         std::vector<std::pair<rossoctl::kube::ResourceRef, std::string>>{
             {resources::resourceQuotas(), "sandbox-quota"},
             {resources::limitRanges(), "sandbox-limits"},
             {resources::networkPolicies(), "default-deny"},
             {resources::networkPolicies(), "allow-dns"}})
        CHECK(harness::admin().getIfExists(kind, ns.name(), name));
}

TEST_CASE("429 with Retry-After is waited out, for reads and for writes", "[fault]") {
    harness::TestNamespace ns("fault-429", true, kRestricted);
    importAgent(ns.name(), "orders");
    harness::FaultApiserver front({"GET /sandboxes/orders$ 429:1 2",
                                   "PUT /sandboxes/orders 429:1 1",
                                   "PATCH /sandboxes/orders 429:1 1"});
    const auto start = std::chrono::steady_clock::now();
    auto result = harness::rossoctl({"--kubeconfig", front.kubeconfig(), "sandbox", "set-env",
                                     "orders", "THROTTLED=yes", "-n", ns.name()});
    INFO(result.err << front.log());
    CHECK(result.exitCode == 0);
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::seconds(2));
    CHECK(front.count({"-> 429:1"}) >= 2);
    auto list = harness::rossoctl({"sandbox", "set-env", "orders", "--list", "-n", ns.name()});
    CHECK(list.out.find("THROTTLED=yes") != std::string::npos);
}

TEST_CASE("503 storms: reads retried, creates never repeated, a re-run completes", "[fault]") {
    harness::TestNamespace ns("fault-503", true, kRestricted);
    importAgent(ns.name(), "orders");
    SECTION("a short storm on reads is ridden out") {
        harness::FaultApiserver front({"GET /sandboxes/orders$ 503 3"});
        auto result = harness::rossoctl(
            {"--kubeconfig", front.kubeconfig(), "sandbox", "get", "orders", "-n", ns.name()});
        INFO(result.err);
        CHECK(result.exitCode == 0);
        CHECK(front.count({"GET", "/sandboxes/orders", "-> 503"}) == 3);
    }
    SECTION("an endless storm on an update fails cleanly and changes nothing") {
        const auto before = harness::settledSnapshot(ns.name());
        harness::FaultApiserver front({"PUT /sandboxes/orders 503", "PATCH /sandboxes/orders 503"});
        auto result = harness::rossoctl({"--kubeconfig", front.kubeconfig(), "sandbox", "set-env",
                                         "orders", "STORM=1", "-n", ns.name()});
        INFO(result.err);
        CHECK(result.exitCode == 1);
        CHECK(oneLine(result.err));
        CHECK(harness::snapshot(ns.name()) == before);
        auto rerun =
            harness::rossoctl({"sandbox", "set-env", "orders", "STORM=1", "-n", ns.name()});
        CHECK(rerun.exitCode == 0);
    }
    SECTION("a create answered 503 is sent once, and a re-run creates it") {
        harness::FaultApiserver front({"POST /sandboxes 503"});
        auto result = harness::rossoctl(
            {"--kubeconfig", front.kubeconfig(), "agents", "import", "--deployment-type", "sandbox",
             "from-image", "--name", "billing", "--containerImage", "busybox", "-n", ns.name()});
        INFO(result.err << front.log());
        CHECK(result.exitCode == 1);
        CHECK(oneLine(harness::withoutGateWarning(result.err)));
        CHECK(front.count({"POST", "/sandboxes", "-> 503"}) == 1);
        auto rerun = harness::rossoctl({"agents", "import", "--deployment-type", "sandbox",
                                        "from-image", "--name", "billing", "--containerImage",
                                        "busybox", "-n", ns.name()});
        INFO(rerun.err);
        CHECK(rerun.exitCode == 0);
    }
}

TEST_CASE("a response slower than --request-timeout fails in time, with one line", "[fault]") {
    harness::TestNamespace ns("fault-slow", true, kRestricted);
    importAgent(ns.name(), "orders");
    harness::FaultApiserver front({"GET /sandboxes/orders$ delay:8"});
    const auto start = std::chrono::steady_clock::now();
    auto result = harness::rossoctl({"--kubeconfig", front.kubeconfig(), "--request-timeout", "1s",
                                     "sandbox", "get", "orders", "-n", ns.name()});
    const auto took = std::chrono::steady_clock::now() - start;
    INFO(result.err);
    CHECK(result.exitCode == 1);
    CHECK(oneLine(result.err));
    CHECK(took < std::chrono::seconds(6));
}

TEST_CASE("an exec stream cut mid-output is an error; a watch cut mid-event is watched again",
          "[fault]") {
    harness::TestNamespace ns("fault-exec", true, kRestricted);
    importAgent(ns.name(), "orders");
    harness::FaultApiserver front({"* /exec cut:4000"});
    auto result =
        harness::rossoctl({"--kubeconfig", front.kubeconfig(), "sandbox", "exec", "orders", "-n",
                           ns.name(), "--", "sh", "-c", "seq 1 20000; sleep 1; echo done"});
    INFO("exit " << result.exitCode << " stderr: " << result.err);
    CHECK(result.exitCode != 0);
    CHECK(result.out.find("done") == std::string::npos);
    CHECK(oneLine(result.err));
    CHECK(result.err.find("what():") == std::string::npos);
    // A watch cut inside an event (CI: the apiserver went away mid-write) ends that watch; the
    // wait watches again. It was read as a malformed event, and verify's restart failed.
    harness::FaultApiserver watchCut({"GET /pods\\?.*watch=true cut:1500 1"});
    auto restart = harness::rossoctl(
        {"--kubeconfig", watchCut.kubeconfig(), "sandbox", "restart", "orders", "-n", ns.name()});
    INFO("restart: exit " << restart.exitCode << " stderr: " << restart.err << watchCut.log());
    CHECK(watchCut.count({"-> cut:1500"}) == 1);
    CHECK(restart.exitCode == 0);
}
