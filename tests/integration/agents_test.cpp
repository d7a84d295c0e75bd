// agents import/list/get/wait/delete and sandbox list/get against the local cluster.
#include <catch2/catch.hpp>
#include <chrono>

#include "harness.hpp"
#include "rossoctl/kube/discovery.hpp"
#include "rossoctl/model/sandbox.hpp"

using nlohmann::json;
using namespace rossoctl;

namespace {

const json kRestricted = {{"pod-security.kubernetes.io/enforce", "restricted"}};

kube::Discovery& discovery() {
    static SystemClock clock;
    static kube::Discovery instance(harness::admin(), clock, "");
    return instance;
}

std::vector<std::string> importArgs(const std::string& ns, const std::string& type,
                                    const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "agents",      "import",     "-n",     ns,   "--deployment-type",
        type,          "from-image", "--name", name, "--containerImage",
        "busybox:1.36"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

kube::ResourceRef workloadRef(const std::string& type) {
    if (type == "deployment") return kube::resources::deployments();
    if (type == "statefulset") return kube::resources::statefulSets();
    if (type == "job") return kube::resources::jobs();
    return discovery().sandboxes();
}

// Nothing of the agent's is left: workload, runtime, service, pods.
bool nothingLeft(const std::string& ns, const std::string& name, const std::string& type) {
    auto& admin = harness::admin();
    if (admin.getIfExists(workloadRef(type), ns, name)) return false;
    if (admin.getIfExists(kube::resources::agentRuntimes(), ns, name)) return false;
    if (admin.getIfExists(kube::resources::services(), ns, name)) return false;
    kube::ListOptions options;
    options.labelSelector = "app.kubernetes.io/name=" + name;
    return admin.list(kube::resources::pods(), ns, options)["items"].empty();
}

}  // namespace

TEST_CASE("every deployment type imports, becomes ready, lists, and deletes cleanly", "[agents]") {
    for (std::string type : {"deployment", "statefulset", "job", "sandbox"}) {
        DYNAMIC_SECTION(type) {
            harness::TestNamespace ns("agents-" + type, true, kRestricted);
            const std::string name = "agent-" + type;
            auto imported = harness::rossoctl(
                importArgs(ns.name(), type, name, {"--envVar", "MODE=test", "--port", "8080"}));
            INFO(imported.err);
            REQUIRE(imported.exitCode == 0);
            CHECK(imported.out.find("/" + name + " created") != std::string::npos);
            CHECK(imported.err.find("rossoctl agents wait " + name + " -n " + ns.name()) !=
                  std::string::npos);

            // The AgentRuntime points at the workload.
            auto ref = workloadRef(type);
            auto runtime = harness::admin().get(kube::resources::agentRuntimes(), ns.name(), name);
            CHECK(runtime["spec"]["type"] == "agent");
            CHECK(runtime["spec"]["targetRef"] ==
                  json({{"apiVersion", ref.apiVersion()}, {"kind", ref.kind}, {"name", name}}));
            auto workload = harness::admin().get(ref, ns.name(), name);
            CHECK(workload["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "rossoctl");

            auto waited = harness::rossoctl(
                {"agents", "wait", name, "-n", ns.name(), "--timeout", "3m"}, {}, {}, 240);
            INFO(waited.err);
            REQUIRE(waited.exitCode == 0);
            CHECK(waited.out.find("is ready") != std::string::npos);

            auto listed = harness::rossoctl({"agents", "list", "-n", ns.name()});
            REQUIRE(listed.exitCode == 0);
            CHECK(listed.out.rfind("NAME", 0) == 0);
            CHECK(listed.out.find(name) != std::string::npos);
            CHECK(listed.out.find(type) != std::string::npos);
            CHECK(listed.out.find("1/1") != std::string::npos);

            auto got = harness::rossoctl({"agents", "get", name, "-n", ns.name(), "-o", "wide"});
            REQUIRE(got.exitCode == 0);
            CHECK(got.out.find("busybox:1.36") != std::string::npos);
            CHECK(got.out.find("<none>") == std::string::npos);  // a pod is shown

            auto all = harness::rossoctl({"agents", "list", "-A", "--no-headers"});
            REQUIRE(all.exitCode == 0);
            CHECK(all.out.find(ns.name()) != std::string::npos);

            auto deleted =
                harness::rossoctl({"agents", "delete", name, "-n", ns.name()}, {}, {}, 240);
            INFO(deleted.err);
            REQUIRE(deleted.exitCode == 0);
            CHECK(harness::eventually([&] { return nothingLeft(ns.name(), name, type); }, 60));
            auto again = harness::rossoctl({"agents", "delete", name, "-n", ns.name()});
            CHECK(again.exitCode == 1);
            CHECK(again.err.find("not found") != std::string::npos);
        }
    }
}

TEST_CASE("agents wait stops on an agent that keeps exiting, saying so", "[agents][crashloop]") {
    // walk5 J1: a container that exits at once read Ready between its restarts, and the wait
    // said "ready" (exit 0), at once or after waiting out the back-off.
    harness::TestNamespace ns("agents-dies", true, kRestricted);
    REQUIRE(harness::rossoctl(importArgs(ns.name(), "sandbox", "dies",
                                         {"--command", "sh", "--args=-c", "--args", "exit 3"}))
                .exitCode == 0);
    const auto started = std::chrono::steady_clock::now();
    auto waited = harness::rossoctl({"agents", "wait", "dies", "-n", ns.name(), "--timeout", "3m"},
                                    {}, {}, 240);
    const auto took = std::chrono::steady_clock::now() - started;
    INFO(waited.out << waited.err);
    CHECK(waited.exitCode == 1);
    CHECK(waited.out.find("is ready") == std::string::npos);
    CHECK_THAT(waited.err, Catch::Contains("sandbox.agents.x-k8s.io/dies will not become ready") &&
                               Catch::Contains("container agent keeps exiting (exit 3, "));
    CHECK(took < std::chrono::seconds(150));  // not the 3m
    // Asked again later, it says the same at once.
    auto again = harness::rossoctl({"agents", "wait", "dies", "-n", ns.name(), "--timeout", "3m"},
                                   {}, {}, 240);
    INFO(again.out << again.err);
    CHECK(again.exitCode == 1);
    CHECK_THAT(again.err, Catch::Contains("keeps exiting (exit 3, "));
}

TEST_CASE("bad input and duplicates change nothing", "[agents]") {
    harness::TestNamespace ns("agents-bad", true, kRestricted);
    REQUIRE(harness::rossoctl(importArgs(ns.name(), "sandbox", "orders")).exitCode == 0);
    // The controller and the node keep writing status until the sandbox is Ready: settle first.
    REQUIRE(harness::rossoctl({"agents", "wait", "orders", "-n", ns.name(), "--timeout", "2m"})
                .exitCode == 0);
    auto before = harness::settledSnapshot(ns.name());

    std::vector<std::vector<std::string>> bad = {{"--envVar", "9X=1"},
                                                 {"--port", "0"},
                                                 {"--memory", "lots"},
                                                 {"--lifetime", "-1h"},
                                                 {"--envVarsFile", "/nonexistent/env"},
                                                 {"--runtime-class", "A B"}};
    for (const auto& extra : bad) {
        auto result = harness::rossoctl(importArgs(ns.name(), "sandbox", "other", extra));
        INFO(extra.front() << ": " << result.err);
        CHECK(result.exitCode == 2);
    }
    auto badName = harness::rossoctl(importArgs(ns.name(), "deployment", "Bad_Name"));
    CHECK(badName.exitCode == 2);

    for (std::string type : {"sandbox", "deployment"}) {
        auto duplicate = harness::rossoctl(importArgs(ns.name(), type, "orders"));
        CHECK(duplicate.exitCode == 1);
        CHECK(harness::withoutGateWarning(duplicate.err) ==
              "error: agent \"orders\" already exists in namespace \"" + ns.name() +
                  "\"; delete it first with \"rossoctl agents delete "
                  "orders -n " +
                  ns.name() + "\"\n");
    }
    auto dryRun = harness::rossoctl(
        importArgs(ns.name(), "job", "preview", {"--dry-run=client", "-o", "yaml"}));
    CHECK(dryRun.exitCode == 0);
    CHECK(dryRun.out.find("kind: Job") != std::string::npos);
    CHECK(dryRun.out.find("kind: AgentRuntime") != std::string::npos);
    auto serverDryRun =
        harness::rossoctl(importArgs(ns.name(), "deployment", "preview", {"--dry-run=server"}));
    CHECK(serverDryRun.exitCode == 0);
    CHECK(serverDryRun.out.find("(server dry run)") != std::string::npos);

    CHECK(harness::snapshot(ns.name()) == before);
}

TEST_CASE("the default lifetime comes from the namespace annotation", "[agents]") {
    harness::TestNamespace ns("agents-life", true, kRestricted);
    json patch = {{"metadata", {{"annotations", {{"rossoctl.dev/default-lifetime", "90m"}}}}}};
    harness::admin().patch(kube::resources::namespaces(), "", ns.name(), kube::PatchType::Merge,
                           patch.dump());
    REQUIRE(harness::rossoctl(importArgs(ns.name(), "sandbox", "short")).exitCode == 0);
    auto sandbox = harness::admin().get(discovery().sandboxes(), ns.name(), "short");
    CHECK(sandbox["spec"]["podTemplate"]["spec"]["activeDeadlineSeconds"] == 5400);
    CHECK(sandbox["spec"].contains("shutdownTime"));
}

TEST_CASE("sandbox list and get read sandboxes of both served versions", "[agents]") {
    harness::TestNamespace ns("sandbox-read", true, kRestricted);
    REQUIRE(harness::rossoctl(importArgs(ns.name(), "sandbox", "beta")).exitCode == 0);
    auto alphaServed = discovery().pickVersion("agents.x-k8s.io", {"v1alpha1"});
    if (alphaServed) {
        // Written through the client at v1alpha1, the way an older rossoctl or tool would.
        model::SandboxOptions options;
        options.name = "alpha";
        options.namespaceName = ns.name();
        options.version = "v1alpha1";
        options.pod.image = "busybox:1.36";
        options.shutdownTime = std::chrono::system_clock::now() + std::chrono::hours(1);
        harness::admin().create(kube::resources::sandboxes("v1alpha1"), ns.name(),
                                model::buildSandbox(options, std::chrono::system_clock::now()));
    }
    REQUIRE(harness::rossoctl({"agents", "wait", "beta", "-n", ns.name()}, {}, {}, 240).exitCode ==
            0);
    if (alphaServed)
        REQUIRE(
            harness::rossoctl({"agents", "wait", "alpha", "-n", ns.name()}, {}, {}, 240).exitCode ==
            0);

    auto listed = harness::rossoctl({"sandbox", "list", "-n", ns.name()});
    REQUIRE(listed.exitCode == 0);
    CHECK(listed.out.rfind("NAME", 0) == 0);
    CHECK(listed.out.find("REASON") != std::string::npos);
    CHECK(listed.out.find("beta") != std::string::npos);
    if (alphaServed) CHECK(listed.out.find("alpha") != std::string::npos);
    CHECK(listed.out.find("True") != std::string::npos);

    auto names = harness::rossoctl({"sandbox", "list", "-n", ns.name(), "-o", "name"});
    CHECK(names.out.find("sandbox.agents.x-k8s.io/beta\n") != std::string::npos);

    if (alphaServed) {
        auto got = harness::rossoctl({"sandbox", "get", "alpha", "-n", ns.name(), "--no-headers"});
        REQUIRE(got.exitCode == 0);
        CHECK(got.out.rfind("alpha", 0) == 0);
        CHECK(got.out.find("True") != std::string::npos);

        // The walkthrough's change works on a sandbox written at v1alpha1 too.
        auto changed =
            harness::rossoctl({"sandbox", "set-env", "alpha", "MCP_URL=http://new-address:8080/mcp",
                               "--restart", "-n", ns.name()});
        INFO(changed.err);
        REQUIRE(changed.exitCode == 0);
        auto env = harness::rossoctl({"sandbox", "exec", "alpha", "-n", ns.name(), "--", "env"});
        CHECK(env.out.find("MCP_URL=http://new-address:8080/mcp\n") != std::string::npos);
        auto alpha =
            harness::admin().get(kube::resources::sandboxes("v1alpha1"), ns.name(), "alpha");
        CHECK(alpha["spec"]["podTemplate"]["spec"]["containers"][0]["env"].dump().find(
                  "new-address") != std::string::npos);
    }
    auto json = harness::rossoctl({"sandbox", "get", "beta", "-n", ns.name(), "-o", "json"});
    REQUIRE(json.exitCode == 0);
    CHECK(nlohmann::json::parse(json.out)["kind"] == "Sandbox");
    auto missing = harness::rossoctl({"sandbox", "get", "nope", "-n", ns.name()});
    CHECK(missing.exitCode == 1);
    CHECK(missing.err.find("sandbox list -n " + ns.name()) != std::string::npos);
}
