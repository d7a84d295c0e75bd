// sandbox set-env and sandbox restart against the local cluster.
#include <catch2/catch.hpp>
#include <map>
#include <sstream>
#include <thread>

#include "harness.hpp"
#include "rossoctl/kube/discovery.hpp"
#include "rossoctl/model/sandbox.hpp"

using nlohmann::json;
using namespace rossoctl;

namespace {

const json kRestricted = {{"pod-security.kubernetes.io/enforce", "restricted"}};

json agentEnv(const json& sandbox) {
    return sandbox["spec"]["podTemplate"]["spec"]["containers"][0].value("env", json::array());
}

std::string envValue(const json& sandbox, const std::string& name) {
    for (const auto& entry : agentEnv(sandbox))
        if (entry.value("name", "") == name) return entry.value("value", "");
    return "<absent>";
}

// The sandbox's pod (named like the sandbox), once Ready; its UID.
std::string readyPodUid(const std::string& ns, const std::string& name, int seconds = 120) {
    std::string uid;
    bool ready = harness::eventually(
        [&] {
            auto pod = harness::admin().getIfExists(kube::resources::pods(), ns, name);
            if (!pod || (*pod)["metadata"].contains("deletionTimestamp")) return false;
            for (const auto& condition : (*pod)["status"].value("conditions", json::array()))
                if (condition["type"] == "Ready" && condition["status"] == "True") {
                    uid = (*pod)["metadata"]["uid"];
                    return true;
                }
            return false;
        },
        seconds);
    REQUIRE(ready);
    return uid;
}

// What the agent does on SIGTERM. As PID 1, `sleep` (and python) ignore it, so their pod holds on
// for its whole 30 s grace period: the cases about a pod that goes slowly need that; the rest
// use an agent that exits on TERM, as a well-behaved one does, and see its pod go at once.
enum class OnTerm { Exit, Ignore };

// A running busybox Sandbox (the agents import command writes the same model).
void createSandbox(const std::string& ns, const std::string& name, OnTerm onTerm = OnTerm::Exit) {
    model::SandboxOptions options;
    options.name = name;
    options.namespaceName = ns;
    options.version = harness::sandboxRef().version;
    options.pod.image = "busybox";
    if (onTerm == OnTerm::Exit)
        options.pod.command = {"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"};
    else
        options.pod.command = {"sleep", "3600"};
    options.pod.env = {{"MCP_URL", "http://old-address:8080/mcp"}, {"LOG_LEVEL", "info"}};
    options.shutdownTime = std::chrono::system_clock::now() + std::chrono::hours(1);
    json sandbox = model::buildSandbox(options, std::chrono::system_clock::now());
    harness::admin().create(harness::sandboxRef(), ns, sandbox);
    readyPodUid(ns, name);
    REQUIRE(harness::eventually([&] { return model::sandboxReady(harness::getSandbox(ns, name)); },
                                60));
}

harness::RunResult kubectlExec(const std::string& ns, const std::string& pod,
                               const std::vector<std::string>& command) {
    std::vector<std::string> argv{harness::kubectlPath(),
                                  "--kubeconfig",
                                  harness::kubeconfigPath(),
                                  "exec",
                                  "-n",
                                  ns,
                                  pod,
                                  "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    return harness::run(argv);
}

}  // namespace

TEST_CASE("set-env updates an existing variable, adds an absent one, touches nothing else",
          "[set-env]") {
    harness::TestNamespace ns("setenv", true, kRestricted);
    createSandbox(ns.name(), "orders");
    const json before = harness::getSandbox(ns.name(), "orders");

    auto run = harness::rossoctl({"sandbox", "set-env", "orders", "-n", ns.name(),
                                  "MCP_URL=http://new-address:8080/mcp", "NEW_VAR=1"});
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    CHECK(run.out.find("MCP_URL updated, NEW_VAR added") != std::string::npos);
    CHECK(run.err.find("rossoctl sandbox restart orders -n " + ns.name()) != std::string::npos);

    const json after = harness::getSandbox(ns.name(), "orders");
    CHECK(envValue(after, "MCP_URL") == "http://new-address:8080/mcp");
    CHECK(envValue(after, "NEW_VAR") == "1");
    CHECK(envValue(after, "LOG_LEVEL") == "info");
    json beforeSpec = before["spec"], afterSpec = after["spec"];
    beforeSpec["podTemplate"]["spec"]["containers"][0].erase("env");
    afterSpec["podTemplate"]["spec"]["containers"][0].erase("env");
    CHECK(beforeSpec == afterSpec);

    // The same change again writes nothing.
    auto again = harness::rossoctl({"sandbox", "set-env", "orders", "-n", ns.name(),
                                    "MCP_URL=http://new-address:8080/mcp", "-v", "6"});
    CHECK(again.exitCode == 0);
    CHECK(again.out.find("sandbox/orders: environment unchanged") != std::string::npos);
    CHECK(again.err.find("PUT") == std::string::npos);
    // generation, not resourceVersion: the controller's status writes move the latter.
    CHECK(harness::getSandbox(ns.name(), "orders")["metadata"]["generation"] ==
          after["metadata"]["generation"]);

    auto removed = harness::rossoctl({"sandbox", "set-env", "orders", "NEW_VAR-", "-n", ns.name()});
    CHECK(removed.exitCode == 0);
    CHECK(envValue(harness::getSandbox(ns.name(), "orders"), "NEW_VAR") == "<absent>");

    auto list = harness::rossoctl({"sandbox", "set-env", "orders", "--list", "-n", ns.name()});
    CHECK(list.exitCode == 0);
    CHECK(list.out.find("MCP_URL=http://new-address:8080/mcp\n") != std::string::npos);
}

TEST_CASE("set-env validation failures change nothing", "[set-env]") {
    harness::TestNamespace ns("setenv-bad", true, kRestricted);
    createSandbox(ns.name(), "orders");
    const auto before = harness::snapshot(ns.name());
    const std::vector<std::vector<std::string>> usage = {
        {"sandbox", "set-env", "Bad_Name", "A=1"},
        {"sandbox", "set-env", "orders", "NOEQUALS"},
        {"sandbox", "set-env", "orders", "=value"},
        {"sandbox", "set-env", "orders", "A=1", "A-"},
        {"sandbox", "set-env", "orders", "1BAD=x"},
        {"sandbox", "set-env", "orders"},
        {"sandbox", "set-env", "orders", "--from-env-file", "/nonexistent/env"},
        {"sandbox", "set-env", "orders", "A=1", "--list"},
        {"sandbox", "set-env", "orders", "A=1", "--timeout", "soon"},
    };
    for (auto args : usage) {
        args.insert(args.end(), {"-n", ns.name()});
        auto run = harness::rossoctl(args);
        INFO(args[3] << ": " << run.err);
        CHECK(run.exitCode == 2);
        CHECK(run.err.rfind("error: ", 0) == 0);
    }
    auto unknown =
        harness::rossoctl({"sandbox", "set-env", "orders", "A=1", "-c", "nope", "-n", ns.name()});
    CHECK(unknown.exitCode == 1);
    CHECK(unknown.err.find("no container \"nope\"; its containers: agent") != std::string::npos);
    auto missing = harness::rossoctl({"sandbox", "set-env", "absent", "A=1", "-n", ns.name()});
    CHECK(missing.exitCode == 1);
    CHECK(harness::snapshot(ns.name()) == before);
}

TEST_CASE("20 concurrent set-env processes lose no update", "[set-env]") {
    harness::TestNamespace ns("setenv-race", true, kRestricted);
    createSandbox(ns.name(), "orders");
    std::vector<harness::RunResult> results(20);
    std::vector<std::thread> threads;
    for (int i = 0; i < 20; ++i)
        threads.emplace_back([&, i] {
            results[i] = harness::rossoctl({"sandbox", "set-env", "orders",
                                            "VAR_" + std::to_string(i) + "=" + std::to_string(i),
                                            "-n", ns.name()});
        });
    for (auto& thread : threads) thread.join();
    for (const auto& result : results) {
        INFO(result.err);
        CHECK(result.exitCode == 0);
    }
    const json sandbox = harness::getSandbox(ns.name(), "orders");
    for (int i = 0; i < 20; ++i)
        CHECK(envValue(sandbox, "VAR_" + std::to_string(i)) == std::to_string(i));
    CHECK(envValue(sandbox, "MCP_URL") == "http://old-address:8080/mcp");
}

TEST_CASE("set-env --restart makes the new value visible inside the pod", "[set-env][restart]") {
    harness::TestNamespace ns("setenv-restart", true, kRestricted);
    createSandbox(ns.name(), "orders");
    const std::string oldUid = readyPodUid(ns.name(), "orders");
    auto run = harness::rossoctl({"sandbox", "set-env", "orders", "-n", ns.name(),
                                  "MCP_URL=http://new-address:8080/mcp", "--restart"});
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    CHECK(run.out.find("sandbox/orders restarted (pod uid") != std::string::npos);
    const std::string newUid = readyPodUid(ns.name(), "orders");
    CHECK(newUid != oldUid);
    auto env = kubectlExec(ns.name(), "orders", {"env"});
    INFO(env.err);
    CHECK(env.out.find("MCP_URL=http://new-address:8080/mcp") != std::string::npos);
}

TEST_CASE("restart replaces the pod: nothing in its emptyDir survives", "[restart]") {
    harness::TestNamespace ns("restart", true, kRestricted);
    createSandbox(ns.name(), "orders");
    const std::string oldUid = readyPodUid(ns.name(), "orders");
    auto write = kubectlExec(ns.name(), "orders", {"sh", "-c", "echo x > /workspace/canary"});
    INFO(write.err);
    REQUIRE(write.exitCode == 0);
    auto run = harness::rossoctl({"sandbox", "restart", "orders", "-n", ns.name()});
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    CHECK(run.out.find("sandbox/orders restarted (pod uid " + oldUid.substr(0, 8)) !=
          std::string::npos);
    const std::string newUid = readyPodUid(ns.name(), "orders");
    CHECK(newUid != oldUid);
    CHECK(model::sandboxReady(harness::getSandbox(ns.name(), "orders")));
    auto check = kubectlExec(ns.name(), "orders", {"test", "-e", "/workspace/canary"});
    CHECK(check.exitCode != 0);
}

TEST_CASE("restart of a pod already replaced under it never deletes the replacement", "[restart]") {
    harness::TestNamespace ns("restart-race", true, kRestricted);
    createSandbox(ns.name(), "orders", OnTerm::Ignore);  // the old pod lingers while replaced
    const std::string oldUid = readyPodUid(ns.name(), "orders");
    // Someone else deletes the pod first; rossoctl must wait for, not delete, the replacement.
    harness::admin().remove(kube::resources::pods(), ns.name(), "orders");
    auto run = harness::rossoctl({"sandbox", "restart", "orders", "-n", ns.name(), "-v", "6"});
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    const std::string newUid = readyPodUid(ns.name(), "orders");
    CHECK(newUid != oldUid);
    CHECK(run.out.find(newUid.substr(0, 8)) != std::string::npos);
    // At most one DELETE was sent, and only ever with the old pod's UID as precondition.
    size_t deletes = 0;
    for (size_t at = 0; (at = run.err.find("DELETE ", at)) != std::string::npos; ++at) ++deletes;
    CHECK(deletes <= 1);
    auto pod = harness::admin().get(kube::resources::pods(), ns.name(), "orders");
    CHECK(pod["metadata"]["uid"] == newUid);
}

// Review 47b finding 1: anyone who may create pods can add one with the Sandbox's label and a
// plain ownerReference; restart deleted that newest pod and took the next one for the new pod.
TEST_CASE("restart replaces the Sandbox's own pod, never a newer pod that only names it",
          "[restart]") {
    harness::TestNamespace ns("restart-decoy", true, kRestricted);
    createSandbox(ns.name(), "orders");
    const std::string oldUid = readyPodUid(ns.name(), "orders");
    const json real = harness::admin().get(kube::resources::pods(), ns.name(), "orders");
    const json sandbox = harness::getSandbox(ns.name(), "orders");
    json spec = real["spec"];
    spec.erase("nodeName");
    const json decoy = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata",
                         {{"name", "decoy"},
                          {"labels", real["metadata"]["labels"]},
                          {"ownerReferences",
                           {{{"apiVersion", sandbox["apiVersion"]},
                             {"kind", "Sandbox"},
                             {"name", "orders"},
                             {"uid", sandbox["metadata"]["uid"]}}}}}},
                        {"spec", spec}};
    harness::admin().create(kube::resources::pods(), ns.name(), decoy);
    const std::string decoyUid = readyPodUid(ns.name(), "decoy");
    auto run = harness::rossoctl({"sandbox", "restart", "orders", "-n", ns.name()});
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    CHECK(run.out.find("sandbox/orders restarted (pod uid " + oldUid.substr(0, 8)) !=
          std::string::npos);
    const std::string newUid = readyPodUid(ns.name(), "orders");
    CHECK(newUid != oldUid);
    CHECK(run.out.find(newUid.substr(0, 8)) != std::string::npos);
    auto kept = harness::admin().getIfExists(kube::resources::pods(), ns.name(), "decoy");
    REQUIRE(kept);
    CHECK((*kept)["metadata"]["uid"] == decoyUid);
    CHECK_FALSE((*kept)["metadata"].contains("deletionTimestamp"));
}

TEST_CASE("restart explains what it cannot do", "[restart]") {
    harness::TestNamespace ns("restart-bad", true, kRestricted);
    createSandbox(ns.name(), "orders");
    auto usage = harness::rossoctl({"sandbox", "restart", "-n", ns.name()});
    CHECK(usage.exitCode == 2);
    auto missing = harness::rossoctl({"sandbox", "restart", "absent", "-n", ns.name()});
    CHECK(missing.exitCode == 1);
    CHECK(missing.err.find("sandbox/absent not found") != std::string::npos);

    json sandbox = harness::getSandbox(ns.name(), "orders");
    if (harness::sandboxRef().version == "v1alpha1")
        sandbox["spec"]["replicas"] = 0;
    else
        sandbox["spec"]["operatingMode"] = "Suspended";
    harness::admin().update(harness::sandboxRef(), ns.name(), sandbox);
    auto suspended = harness::rossoctl({"sandbox", "restart", "orders", "-n", ns.name()});
    CHECK(suspended.exitCode == 1);
    CHECK(suspended.err.find("sandbox/orders is suspended") != std::string::npos);
    // Of several names, one the namespace does not have restarts none (a typo, most often).
    auto typo = harness::rossoctl({"sandbox", "restart", "orders", "absent", "-n", ns.name()});
    INFO(typo.err);
    CHECK(typo.exitCode == 1);
    CHECK(typo.err.find("sandbox/absent not found in namespace " + ns.name()) != std::string::npos);
    CHECK(typo.err.find("sandbox/orders: not restarted: sandbox/absent not found") !=
          std::string::npos);
}

// Issue 31's restart row: several sandboxes share one list of each kind and one pod watch, so
// the requests are a DELETE each and a handful beside (a restart each was five or more).
TEST_CASE("restart of several sandboxes replaces each pod on shared lists and watches",
          "[restart]") {
    harness::TestNamespace ns("restart-many", true, kRestricted);
    const std::vector<std::string> names = {"alpha", "bravo", "charlie", "delta"};
    std::map<std::string, std::string> oldUids;
    for (const auto& name : names) createSandbox(ns.name(), name, OnTerm::Ignore);
    for (const auto& name : names) oldUids[name] = readyPodUid(ns.name(), name);
    auto run = harness::rossoctl(
        {"sandbox", "restart", "alpha", "bravo", "charlie", "delta", "-n", ns.name(), "-v", "6"});
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    for (const auto& name : names) {
        CHECK(run.out.find("sandbox/" + name + " restarted (pod uid " +
                           oldUids[name].substr(0, 8)) != std::string::npos);
        const std::string newUid = readyPodUid(ns.name(), name);
        CHECK(newUid != oldUids[name]);
        CHECK(run.out.find(newUid.substr(0, 8)) != std::string::npos);
        CHECK(model::sandboxReady(harness::getSandbox(ns.name(), name)));
    }
    size_t requests = 0, deletes = 0;
    std::istringstream lines(run.err);
    for (std::string line; std::getline(lines, line);) {
        for (const char* verb : {"GET ", "POST ", "PUT ", "PATCH ", "DELETE "})
            if (line.rfind(std::string(verb) + "https://", 0) == 0) ++requests;
        if (line.rfind("DELETE https://", 0) == 0) ++deletes;
    }
    CHECK(deletes == names.size());
    // Beside a DELETE each, shared reads: the two lists, the pod watch (cut every 2 s only while
    // a blocker may show: the agents here ignore SIGTERM, so their old pods leave after the 30 s
    // grace period; each wave of them going costs at most two lists and two watches) and the
    // Sandboxes' Ready list: 9 to 13 seen. Each restart on its own sent 40 for these four.
    INFO("requests beside the DELETEs: " << requests - deletes);
    CHECK(requests - deletes <= 3 + 4 * names.size() + 1);
}
