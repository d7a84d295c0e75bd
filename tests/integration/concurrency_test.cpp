// Concurrent writers: many `project create` runs of one project converge on one set of
// objects, and `sandbox restart` never deletes a pod it did not mean to. (20 concurrent
// `sandbox set-env` runs are in sandbox_change_test.cpp.)
#include <catch2/catch.hpp>
#include <regex>
#include <thread>

#include "fault_server.hpp"
#include "harness.hpp"
#include "rossoctl/kube/resource.hpp"

using nlohmann::json;
namespace resources = rossoctl::kube::resources;

TEST_CASE("20 concurrent project create runs of one project lose nothing", "[concurrency]") {
    harness::TestNamespace ns("race-project", false);
    std::vector<harness::RunResult> results(20);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < results.size(); ++i)
        threads.emplace_back([&, i] {
            results[i] = harness::rossoctl(
                {"project", "create", ns.name(), "--allow-cidr", "10.245.0.10/32", "--pods", "7",
                 "--no-check"});  // 20 live checks would not fit the quota of 7 pods
        });
    for (auto& thread : threads) thread.join();
    for (const auto& result : results) {
        INFO(result.err);
        CHECK(result.exitCode == 0);
    }
    auto& admin = harness::admin();
    auto names = [&](const rossoctl::kube::ResourceRef& kind) {
        std::vector<std::string> found;
        const json list = admin.list(kind, ns.name());  // kept: range-for would not extend it
        for (const auto& item : list["items"]) found.push_back(item["metadata"]["name"]);
        std::sort(found.begin(), found.end());
        return found;
    };
    CHECK(names(resources::resourceQuotas()) == std::vector<std::string>{"sandbox-quota"});
    CHECK(names(resources::limitRanges()) == std::vector<std::string>{"sandbox-limits"});
    auto policies = names(resources::networkPolicies());
    CHECK(std::count(policies.begin(), policies.end(), "default-deny") == 1);
    CHECK(std::count(policies.begin(), policies.end(), "allow-dns") == 1);
    auto quota = admin.get(resources::resourceQuotas(), ns.name(), "sandbox-quota");
    CHECK(quota["spec"]["hard"]["pods"] == "7");
    auto nsObject = admin.get(resources::namespaces(), "", ns.name());
    CHECK(nsObject["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted");
    // Every run owns the same fields: one field manager for the spec, no conflicts left
    // behind (the quota controller owns status, as it does in any cluster).
    for (const auto& entry : quota["metadata"]["managedFields"])
        if (entry.value("subresource", "") != "status") CHECK(entry["manager"] == "rossoctl");
}

TEST_CASE("restart with the pod replaced between its read and its delete deletes nothing else",
          "[concurrency][restart]") {
    harness::TestNamespace ns("race-restart", true,
                              {{"pod-security.kubernetes.io/enforce", "restricted"}});
    auto import =
        harness::rossoctl({"agents", "import", "--deployment-type", "sandbox", "from-image",
                           "--name", "orders", "--containerImage", "busybox", "-n", ns.name()});
    REQUIRE(import.exitCode == 0);
    REQUIRE(harness::rossoctl({"agents", "wait", "orders", "--timeout", "2m", "-n", ns.name()})
                .exitCode == 0);
    // The front deletes the pod itself and waits for the controller's replacement before it
    // passes rossoctl's DELETE (UID precondition of the old pod) on.
    harness::FaultApiserver front({"DELETE /pods/orders replace-pod 1"});
    auto result = harness::rossoctl({"--kubeconfig", front.kubeconfig(), "sandbox", "restart",
                                     "orders", "--timeout", "2m", "-n", ns.name()});
    INFO("exit " << result.exitCode << "\nstdout: " << result.out << "stderr: " << result.err
                 << "\nrequests:\n"
                 << front.log());
    std::smatch match;
    const std::string log = front.log();
    REQUIRE(std::regex_search(log, match, std::regex("new uid ([0-9a-f-]+)")));
    const std::string replacement = match[1];
    CHECK(result.exitCode == 0);
    CHECK(front.count({"DELETE", "/pods/orders"}) == 1);
    auto pod = harness::admin().get(resources::pods(), ns.name(), "orders");
    CHECK(pod["metadata"]["uid"] == replacement);
}
