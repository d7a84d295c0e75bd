// Issue 21 against the local cluster: what a kubectl user types works the way kubectl's does.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "rossoctl/kube/discovery.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/model/sandbox.hpp"

using nlohmann::json;
using namespace rossoctl;

namespace {

const json kRestricted = {{"pod-security.kubernetes.io/enforce", "restricted"}};

// A Sandbox written straight through the client; suspended ones never get a pod.
void createSandbox(const std::string& ns, const std::string& name, bool suspended) {
    model::SandboxOptions options;
    options.name = name;
    options.namespaceName = ns;
    options.version = harness::sandboxRef().version;
    options.pod.image = "busybox";
    options.pod.command = {"sleep", "3600"};
    options.pod.env = {{"LOG_LEVEL", "info"}};
    options.shutdownTime = std::chrono::system_clock::now() + std::chrono::hours(1);
    json sandbox = model::buildSandbox(options, std::chrono::system_clock::now());
    sandbox["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "rossoctl";
    if (suspended) {
        if (options.version == "v1alpha1")
            sandbox["spec"]["replicas"] = 0;
        else
            sandbox["spec"]["operatingMode"] = "Suspended";
    }
    harness::admin().create(harness::sandboxRef(), ns, sandbox);
}

}  // namespace

TEST_CASE("-o name round-trips into get, set-env and restart; --dry-run=server writes nothing",
          "[conventions]") {
    harness::TestNamespace ns("conv-names", true, kRestricted);
    createSandbox(ns.name(), "orders", /*suspended=*/true);
    auto names = harness::rossoctl({"sandbox", "list", "-n", ns.name(), "-o=name"});
    REQUIRE(names.exitCode == 0);
    REQUIRE(names.out == "sandbox.agents.x-k8s.io/orders\n");
    const std::string typed = names.out.substr(0, names.out.size() - 1);

    auto got = harness::rossoctl({"sandbox", "get", typed, "sandboxes/orders", "-n", ns.name(),
                                  "-o", "jsonpath={.metadata.name}"});
    CHECK(got.exitCode == 0);
    CHECK(got.out == "orders");  // the same sandbox named twice is shown once

    const auto before = harness::admin().get(harness::sandboxRef(), ns.name(), "orders");
    auto server = harness::rossoctl(
        {"sandbox", "set-env", typed, "NEW=1", "--dry-run=server", "-n", ns.name()});
    INFO(server.err);
    CHECK(server.exitCode == 0);
    CHECK(server.out.find("(server dry run)") != std::string::npos);
    auto client = harness::rossoctl(
        {"sandbox", "set-env", typed, "NEW=1", "--dry-run", "-o", "yaml", "-n", ns.name()});
    CHECK(client.exitCode == 0);
    CHECK(client.out.find("name: NEW") != std::string::npos);
    CHECK(client.out.find("managedFields") == std::string::npos);
    CHECK(client.out.find("creationTimestamp: \"") != std::string::npos);
    const auto after = harness::admin().get(harness::sandboxRef(), ns.name(), "orders");
    CHECK(after["metadata"]["generation"] == before["metadata"]["generation"]);

    auto missing = harness::rossoctl({"sandbox", "set-env", "ordres", "A=1", "-n", ns.name()});
    CHECK(missing.exitCode == 1);
    // A near name is suggested (issue 34 walkthrough); with none, the list command is named.
    CHECK(missing.err.find("did you mean \"orders\"?") != std::string::npos);
    CHECK(missing.err.find("Error from server") == std::string::npos);
    auto far = harness::rossoctl({"sandbox", "set-env", "zzzzzzzz", "A=1", "-n", ns.name()});
    CHECK(far.exitCode == 1);
    CHECK(far.err.find("rossoctl sandbox list -n " + ns.name()) != std::string::npos);
}

TEST_CASE("agents wait on a suspended sandbox fails at once", "[conventions]") {
    harness::TestNamespace ns("conv-wait", true, kRestricted);
    createSandbox(ns.name(), "paused", /*suspended=*/true);
    const auto start = std::chrono::steady_clock::now();
    auto wait = harness::rossoctl({"agents", "wait", "paused", "--timeout", "5m", "-n", ns.name()});
    const auto took = std::chrono::steady_clock::now() - start;
    INFO(wait.err);
    CHECK(wait.exitCode == 1);
    CHECK(wait.err.find("will not become Ready: it is suspended") != std::string::npos);
    CHECK(took < std::chrono::seconds(30));
}

TEST_CASE("agents import over the project's LimitRange: exit 2, nothing written", "[conventions]") {
    harness::TestNamespace project("conv-limits", /*create=*/false);
    const auto& ns = project.name();
    REQUIRE(harness::rossoctl({"project", "create", ns, "--max-container-cpu", "2"}, {}, {}, 240)
                .exitCode == 0);
    // Settled: the quota controller writes the new ResourceQuota's status a moment later (CI).
    const auto before = harness::settledSnapshot(ns);
    auto import = harness::rossoctl({"agents", "import", "from-image", "--name", "big",
                                     "--containerImage", "busybox:1.36", "--cpu", "10", "-n", ns});
    INFO(import.err);
    CHECK(import.exitCode == 2);
    CHECK(import.err.find("--cpu 10 is more than a container may have") != std::string::npos);
    CHECK(harness::snapshot(ns) == before);

    // A re-run without the earlier --allow-host narrows egress: said, not silent.
    REQUIRE(harness::rossoctl({"project", "create", ns, "--max-container-cpu", "2", "--allow-host",
                               "outside.rossoctl.test:80"},
                              {}, {}, 240)
                .exitCode == 0);
    auto narrowed =
        harness::rossoctl({"project", "create", ns, "--max-container-cpu", "2"}, {}, {}, 240);
    CHECK(narrowed.exitCode == 0);
    CHECK(narrowed.err.find("Warning: the egress policy of project " + ns + " changed") !=
          std::string::npos);
    auto same =
        harness::rossoctl({"project", "create", ns, "--max-container-cpu", "2"}, {}, {}, 240);
    CHECK(same.err.find("egress policy") == std::string::npos);

    auto wide = harness::rossoctl({"project", "create", ns, "--allow-cidr", "0.0.0.0/0"});
    CHECK(wide.exitCode == 2);
    CHECK(wide.err.find("add --force") != std::string::npos);

    auto gone = harness::rossoctl({"project", "delete", ns + "-nowhere", "--yes"});
    CHECK(gone.exitCode == 1);
    CHECK(gone.err.find("does not exist") != std::string::npos);
}

TEST_CASE("agents wait names the quota that refuses the sandbox's pod, long before its time-out",
          "[conventions]") {
    harness::TestNamespace ns("conv-quota", true, kRestricted);
    const json quota = {{"apiVersion", "v1"},
                        {"kind", "ResourceQuota"},
                        {"metadata", {{"name", "no-pods"}}},
                        {"spec", {{"hard", {{"pods", "0"}}}}}};
    harness::createCountedQuota(ns.name(), quota);
    createSandbox(ns.name(), "blocked", /*suspended=*/false);
    const auto start = std::chrono::steady_clock::now();
    auto wait =
        harness::rossoctl({"agents", "wait", "blocked", "--timeout", "5m", "-n", ns.name()});
    const auto took = std::chrono::steady_clock::now() - start;
    INFO(wait.err);
    CHECK(wait.exitCode == 1);
    CHECK(wait.err.find("exceeded quota: no-pods") != std::string::npos);
    CHECK(took < std::chrono::seconds(60));
}
