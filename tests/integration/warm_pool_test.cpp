// The released agent-sandbox controller's side of the local cluster: the CRDs' conversion
// webhook, and `sandbox run --pool` through a SandboxWarmPool and a SandboxClaim. Each case is
// tagged [agent-sandbox]: on a cluster that runs the project's own controller (no extensions,
// conversion None) scripts/integration leaves them out and lists them as skipped; run there
// anyway, each fails saying what it needs, never passing without proving anything.
#include "rossoctl/app/run/warm_pool.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "harness.hpp"
#include "rossoctl/kube/resource.hpp"

using nlohmann::json;
namespace fs = std::filesystem;
namespace resources = rossoctl::kube::resources;
namespace run = rossoctl::app::run;

namespace {

harness::RunResult kubectl(std::vector<std::string> args, const std::string& input = {}) {
    args.insert(args.begin(), {harness::kubectlPath(), "--kubeconfig", harness::kubeconfigPath()});
    return harness::run(args, input);
}

std::string conversionStrategy(const std::string& crd) {
    auto object = harness::admin().getIfExists(resources::customResourceDefinitions(), "", crd);
    if (!object) return "";
    return (*object)["spec"].value("conversion", json::object()).value("strategy", "None");
}

// What every case here needs; a cluster without it fails the case (Catch2 v2 has no skip).
void requireReleasedController() {
    INFO(
        "the agent-sandbox extensions are not served here: this case needs the released "
        "controller (AGENT_SANDBOX_SOURCE); scripts/integration skips it on the fallback");
    REQUIRE_FALSE(conversionStrategy("sandboxwarmpools.extensions.agents.x-k8s.io").empty());
}

std::vector<std::string> names(const rossoctl::kube::ResourceRef& ref, const std::string& ns) {
    std::vector<std::string> out;
    const auto list = harness::admin().list(ref, ns);  // kept: a temporary's member dangles
    for (const auto& item : list["items"]) out.push_back(item["metadata"]["name"]);
    return out;
}

// The pool's sandboxes: those a SandboxWarmPool owns.
std::set<std::string> poolSandboxes(const std::string& ns) {
    std::set<std::string> out;
    const auto list = harness::admin().list(resources::sandboxes("v1beta1"), ns);  // kept alive
    for (const auto& item : list["items"])
        for (const auto& owner : item["metadata"].value("ownerReferences", json::array()))
            if (owner.value("kind", "") == "SandboxWarmPool") out.insert(item["metadata"]["name"]);
    return out;
}

}  // namespace

TEST_CASE("a v1alpha1 Sandbox reads back as v1beta1 through the conversion webhook",
          "[agent-sandbox][conversion]") {
    INFO(
        "this case needs the released controller's conversion webhook (AGENT_SANDBOX_SOURCE); "
        "scripts/integration skips it on the fallback");
    REQUIRE(conversionStrategy("sandboxes.agents.x-k8s.io") == "Webhook");
    harness::TestNamespace ns("convert");
    auto applied =
        kubectl({"apply", "-n", ns.name(), "-f", "-"}, R"(apiVersion: agents.x-k8s.io/v1alpha1
kind: Sandbox
metadata: {name: old}
spec:
  replicas: 1
  podTemplate:
    spec:
      automountServiceAccountToken: false
      containers: [{name: main, image: busybox, command: [sleep, '3600']}]
)");
    INFO(applied.err);
    REQUIRE(applied.exitCode == 0);
    // Stored as v1beta1 (the storage version): the webhook converted the write ...
    auto beta = harness::admin().get(resources::sandboxes("v1beta1"), ns.name(), "old");
    CHECK(beta["apiVersion"] == "agents.x-k8s.io/v1beta1");
    CHECK(beta["spec"].value("operatingMode", "") == "Running");
    CHECK_FALSE(beta["spec"].contains("replicas"));
    // ... and converts it back for a v1alpha1 reader.
    auto alpha = harness::admin().get(resources::sandboxes("v1alpha1"), ns.name(), "old");
    CHECK(alpha["apiVersion"] == "agents.x-k8s.io/v1alpha1");
    CHECK(alpha["spec"].value("replicas", -1) == 1);
    auto ready =
        kubectl({"wait", "-n", ns.name(), "--for=condition=Ready", "sandbox/old", "--timeout=90s"});
    INFO(ready.out << ready.err);
    CHECK(ready.exitCode == 0);
}

TEST_CASE("rossoctl version names the agent-sandbox API versions the cluster serves",
          "[agent-sandbox][version]") {
    // v0.5 serves v1beta1 and v1alpha1 in both groups; 1.0 (AGENT_SANDBOX_ONLY_VERSION=v1beta1
    // on the local cluster) v1beta1 only. What the server's discovery says, read with kubectl:
    std::string line = "Agent Sandbox APIs:";
    json expected = json::array();
    for (const std::string group : {"agents.x-k8s.io", "extensions.agents.x-k8s.io"}) {
        auto raw = kubectl({"get", "--raw", "/apis/" + group});
        INFO(raw.err);
        REQUIRE(raw.exitCode == 0);
        const json served = json::parse(raw.out);
        std::vector<std::string> versions;
        line += std::string(expected.empty() ? " " : "; ") + group;
        const std::string preferred = served["preferredVersion"]["version"];
        for (const auto& entry : served["versions"]) {
            versions.push_back(entry["version"]);
            line += " " + versions.back();
            if (versions.back() == preferred && served["versions"].size() > 1)
                line += " (preferred)";
        }
        expected.push_back(
            {{"group", group}, {"versions", versions}, {"preferredVersion", preferred}});
    }
    auto printed = harness::rossoctl({"version"});
    INFO(printed.out << printed.err);
    REQUIRE(printed.exitCode == 0);
    CHECK_THAT(printed.out, Catch::Contains("\n" + line + "\n"));
    auto asJson = harness::rossoctl({"version", "-o", "json"});
    REQUIRE(asJson.exitCode == 0);
    CHECK(json::parse(asJson.out)["agentSandbox"] == expected);
}

TEST_CASE("sandbox run --pool takes a warm Sandbox with a SandboxClaim and leaves nothing behind",
          "[agent-sandbox][run]") {
    requireReleasedController();
    harness::TestNamespace project("claim", /*create=*/false);
    const std::string ns = project.name();
    auto created = harness::rossoctl({"project", "create", ns});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);

    auto pool = harness::rossoctl({"sandbox", "pool", "-n", ns, "--size", "1", "--wait"});
    INFO(pool.out << pool.err);
    REQUIRE(pool.exitCode == 0);
    CHECK(pool.out.find("SandboxWarmPool rossoctl-run-") != std::string::npos);
    CHECK(names(resources::pods(), ns).size() == 1);  // no bare pool pods beside it
    const auto warm = poolSandboxes(ns);
    REQUIRE(warm.size() == 1);

    // Per-run settings travel over exec after the claim: a claim with env would cold-start.
    const std::string dir = fs::temp_directory_path() / ("rossoctl-claim-" + ns);
    fs::create_directories(dir);
    std::ofstream(dir + "/in.txt") << "from a file\n";
    auto result = harness::rossoctl({"sandbox", "run", "-n", ns, "--pool", "--env", "GREETING=hi",
                                     "--file", dir + "/in.txt", "-o", "json", "--", "sh", "-c",
                                     "echo $GREETING; cat in.txt"});
    fs::remove_all(dir);
    INFO(result.out << result.err);
    REQUIRE(result.exitCode == 0);
    const json out = json::parse(result.out);
    CHECK(out["stdout"] == "hi\nfrom a file\n");
    CHECK(out["warm"] == true);
    REQUIRE(out.contains("claim"));
    CHECK(warm.count(out["pod"].get<std::string>()) == 1);  // the warm one, not a cold start

    const std::string claimed = out["pod"];
    CHECK(harness::eventually(
        [&] {
            return names(run::sandboxClaims(), ns).empty() &&
                   !harness::admin()
                        .getIfExists(resources::sandboxes("v1beta1"), ns, claimed)
                        .has_value() &&
                   !harness::admin().getIfExists(resources::pods(), ns, claimed).has_value();
        },
        60));
    // The pool refills itself with a new sandbox.
    CHECK(harness::eventually(
        [&] {
            auto now = poolSandboxes(ns);
            return now.size() == 1 && now.count(claimed) == 0;
        },
        60));

    // A pool's spare is not the project's own: listed only with --include-pool.
    auto list = harness::rossoctl({"sandbox", "list", "-n", ns, "-o", "wide"});
    INFO(list.out << list.err);
    CHECK(list.exitCode == 0);
    CHECK(list.out.find("SandboxWarmPool/rossoctl-run-") == std::string::npos);
    auto withPool =
        harness::rossoctl({"sandbox", "list", "-n", ns, "-o", "wide", "--include-pool"});
    INFO(withPool.out << withPool.err);
    CHECK(withPool.out.find("SandboxWarmPool/rossoctl-run-") != std::string::npos);

    auto empty = harness::rossoctl({"sandbox", "pool", "-n", ns, "--size", "0"});
    CHECK(empty.exitCode == 0);
    CHECK(harness::eventually(
        [&] {
            return names(resources::pods(), ns).empty() &&
                   names(resources::sandboxes("v1beta1"), ns).empty() &&
                   names(run::sandboxWarmPools(), ns).empty() &&
                   names(run::sandboxTemplates(), ns).empty();
        },
        60));
}

TEST_CASE("sandbox run --pool: 50 runs through SandboxClaims, with their phases",
          "[agent-sandbox][run-bench]") {
    requireReleasedController();
    harness::TestNamespace project("claim-many", /*create=*/false);
    const std::string ns = project.name();
    REQUIRE(harness::rossoctl({"project", "create", ns}).exitCode == 0);
    auto pool = harness::rossoctl({"sandbox", "pool", "-n", ns, "--size", "2", "--wait"});
    INFO(pool.out << pool.err);
    REQUIRE(pool.exitCode == 0);
    std::map<std::string, std::vector<long>> phases;
    const char* kPhases[] = {"schedule", "upload", "run", "collect", "cleanup"};
    int warm = 0, cold = 0;
    std::vector<std::string> coldReasons;
    for (int i = 0; i < 50; ++i) {
        const auto start = std::chrono::steady_clock::now();
        auto result =
            harness::rossoctl({"sandbox", "run", "-n", ns, "--pool", "-o", "json", "--", "true"});
        const long wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
        INFO("run " << i << ": " << result.out << result.err);
        REQUIRE(result.exitCode == 0);
        const json out = json::parse(result.out);
        phases["wall"].push_back(wall);
        for (const char* phase : kPhases) phases[phase].push_back(out["durations"][phase]);
        CHECK(out.contains("claim"));
        if (out["start"] == "warm" && out["warm"] == true) ++warm;
        if (out["start"] == "cold" && out["warm"] == false) {
            ++cold;
            CHECK(out.contains("coldStartReason"));
            coldReasons.push_back(out.value("coldStartReason", ""));
        }
    }
    // A claim is cold when the claim controller made it a new Sandbox (named after the claim,
    // so its pod had to start): upstream does so when neither spare of the pool has a pod IP
    // within the claim's 2 s grace, which a loaded node gives now and then as the pool refills
    // behind back-to-back runs (issue 33's CI run, load 13-19 on 2 cores: 49 of 50 warm). A
    // cold run's own pod start gives the spares time to come up, so colds stay rare; 40 still
    // fails a pool that is bypassed or stops refilling.
    CHECK(warm + cold == 50);
    CHECK(warm >= 40);
    std::cout << "SandboxClaim path: " << warm << " warm, " << cold << " cold\n";
    for (const auto& reason : coldReasons) std::cout << "  cold: " << reason << "\n";
    CHECK(harness::eventually([&] { return names(run::sandboxClaims(), ns).empty(); }, 60));
    std::cout << "SandboxClaim path (50 runs of `-- true`)\n";
    for (auto& [phase, values] : phases) {
        std::sort(values.begin(), values.end());
        std::cout << "  " << phase << ": median " << values[values.size() / 2] << " ms, p95 "
                  << values[std::min(values.size() - 1, values.size() * 95 / 100)] << " ms\n";
    }
    REQUIRE(harness::rossoctl({"sandbox", "pool", "-n", ns, "--size", "0"}).exitCode == 0);
}

TEST_CASE("a full quota stops sandbox pool --wait and run --pool at once, naming the quota",
          "[agent-sandbox][run][conventions]") {
    requireReleasedController();
    harness::TestNamespace project("claim-quota", /*create=*/false);
    const std::string ns = project.name();
    auto created = harness::rossoctl({"project", "create", ns});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    const json quota = {{"apiVersion", "v1"},
                        {"kind", "ResourceQuota"},
                        {"metadata", {{"name", "no-pods"}}},
                        {"spec", {{"hard", {{"pods", "0"}}}}}};
    harness::createCountedQuota(ns, quota);

    auto started = std::chrono::steady_clock::now();
    auto pool = harness::rossoctl(
        {"sandbox", "pool", "-n", ns, "--size", "1", "--wait", "--timeout", "5m"});
    auto took = std::chrono::steady_clock::now() - started;
    INFO(pool.out << pool.err);
    CHECK(pool.exitCode == 1);
    CHECK(pool.err.find("cannot fill") != std::string::npos);
    CHECK(pool.err.find("exceeded quota: no-pods") != std::string::npos);
    CHECK(took < std::chrono::seconds(60));  // not its 5m

    started = std::chrono::steady_clock::now();
    auto claimed = harness::rossoctl(
        {"sandbox", "run", "-n", ns, "--pool", "--start-timeout", "5m", "--", "true"});
    took = std::chrono::steady_clock::now() - started;
    INFO(claimed.out << claimed.err);
    CHECK(claimed.exitCode != 0);
    CHECK(claimed.err.find("exceeded quota: no-pods") != std::string::npos);
    CHECK(took < std::chrono::seconds(60));
    CHECK(harness::eventually([&] { return names(run::sandboxClaims(), ns).empty(); }, 60));
}

namespace {

// SandboxWarmPool `ready` of ns has at least one ready sandbox.
bool poolReady(const std::string& ns, const std::string& pool) {
    const auto object = harness::admin().getIfExists(run::sandboxWarmPools(), ns, pool);
    return object && run::warmPoolStatus(*object).ready >= 1;
}

// A SandboxTemplate and SandboxWarmPool written as upstream's docs write them (their own
// container name, a work volume at /data, no label of rossoctl's), hardened enough for the
// project's restricted Pod Security level.
const char* kUpstreamManifests = R"(apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxTemplate
metadata: {name: python-runtime-template}
spec:
  podTemplate:
    spec:
      automountServiceAccountToken: false
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        fsGroup: 1000
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: python-runtime
        image: docker.io/library/python:3.12-slim
        command: [sleep, '3600']
        workingDir: /data
        resources:
          limits: {cpu: 250m, memory: 256Mi}
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
        volumeMounts: [{name: data, mountPath: /data}]
      volumes: [{name: data, emptyDir: {}}]
---
apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxWarmPool
metadata: {name: upstream}
spec:
  replicas: 1
  sandboxTemplateRef: {name: python-runtime-template}
)";

}  // namespace

TEST_CASE("sandbox pool NAME: made under its name, listed, and a run takes from it by name",
          "[agent-sandbox][run][pool]") {
    requireReleasedController();
    harness::TestNamespace project("named-pool", /*create=*/false);
    const std::string ns = project.name();
    auto created = harness::rossoctl({"project", "create", ns});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);

    auto pool = harness::rossoctl(
        {"sandbox", "pool", "py", "-n", ns, "--size", "1", "--memory", "256Mi", "--wait"});
    INFO(pool.out << pool.err);
    REQUIRE(pool.exitCode == 0);
    CHECK(pool.out.find("SandboxWarmPool py in " + ns) != std::string::npos);
    CHECK(names(run::sandboxWarmPools(), ns) == std::vector<std::string>{"py"});
    CHECK(names(run::sandboxTemplates(), ns) == std::vector<std::string>{"py"});
    const auto warm = poolSandboxes(ns);
    REQUIRE(warm.size() == 1);

    auto listed = harness::rossoctl({"sandbox", "pool", "list", "-n", ns});
    INFO(listed.out << listed.err);
    CHECK(listed.exitCode == 0);
    CHECK(listed.out.find("py ") != std::string::npos);
    CHECK(listed.out.find("1/1") != std::string::npos);
    CHECK(listed.out.find("256Mi") != std::string::npos);
    auto named = harness::rossoctl({"sandbox", "pool", "list", "-n", ns, "-o", "name"});
    CHECK(named.out == "sandboxwarmpool.extensions.agents.x-k8s.io/py\n");

    // No --memory: the pool's 256Mi is taken, not the run's default 512Mi.
    auto result = harness::rossoctl(
        {"sandbox", "run", "-n", ns, "--pool", "py", "-o", "json", "--", "sh", "-c", "echo hi"});
    INFO(result.out << result.err);
    REQUIRE(result.exitCode == 0);
    const json out = json::parse(result.out);
    CHECK(out["stdout"] == "hi\n");
    CHECK(out["warm"] == true);
    CHECK(warm.count(out["pod"].get<std::string>()) == 1);

    // A flag the pool's pods do not have: said, nothing claimed.
    auto other = harness::rossoctl(
        {"sandbox", "run", "-n", ns, "--pool=py", "--memory", "1Gi", "--", "true"});
    INFO(other.out << other.err);
    CHECK(other.exitCode == 125);
    CHECK(other.err.find("--memory 1Gi (the pool's: 256Mi)") != std::string::npos);
    auto missing = harness::rossoctl({"sandbox", "run", "-n", ns, "--pool=nope", "--", "true"});
    CHECK(missing.exitCode == 125);
    CHECK(missing.err.find("SandboxWarmPool nope not found in " + ns + "; pools in " + ns +
                           ": py") != std::string::npos);

    auto empty = harness::rossoctl({"sandbox", "pool", "py", "-n", ns, "--size", "0"});
    CHECK(empty.exitCode == 0);
    CHECK(harness::eventually(
        [&] {
            return names(run::sandboxClaims(), ns).empty() &&
                   names(run::sandboxWarmPools(), ns).empty() &&
                   names(run::sandboxTemplates(), ns).empty() &&
                   names(resources::sandboxes("v1beta1"), ns).empty();
        },
        60));
}

TEST_CASE("sandbox run --pool=NAME takes from a SandboxWarmPool made from upstream's manifests",
          "[agent-sandbox][run][pool]") {
    requireReleasedController();
    harness::TestNamespace project("upstream-pool", /*create=*/false);
    const std::string ns = project.name();
    auto created = harness::rossoctl({"project", "create", ns});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    // Applied with the client, as a user of upstream's docs would: rossoctl writes none of it.
    auto applied = kubectl({"apply", "-n", ns, "-f", "-"}, kUpstreamManifests);
    INFO(applied.out << applied.err);
    REQUIRE(applied.exitCode == 0);
    REQUIRE(harness::eventually([&] { return poolReady(ns, "upstream"); }, 120));
    const auto warm = poolSandboxes(ns);
    REQUIRE(warm.size() == 1);

    auto listed = harness::rossoctl({"sandbox", "pool", "list", "-n", ns, "-o", "wide"});
    INFO(listed.out << listed.err);
    CHECK(listed.exitCode == 0);
    CHECK(listed.out.find("upstream") != std::string::npos);
    CHECK(listed.out.find("python-runtime-template") != std::string::npos);
    CHECK(listed.out.find("250m") != std::string::npos);

    // Its container and work dir, the files and env over exec as on rossoctl's own pools.
    auto result =
        harness::rossoctl({"sandbox", "run", "-n", ns, "--pool", "upstream", "--env", "GREETING=hi",
                           "-o", "json", "--", "sh", "-c", "pwd; echo $GREETING"});
    INFO(result.out << result.err);
    REQUIRE(result.exitCode == 0);
    const json out = json::parse(result.out);
    CHECK(out["stdout"] == "/data\nhi\n");
    CHECK(out["warm"] == true);
    CHECK(warm.count(out["pod"].get<std::string>()) == 1);  // the warm one, not a cold start
    CHECK(harness::eventually([&] { return names(run::sandboxClaims(), ns).empty(); }, 60));

    // Not rossoctl's: `sandbox pool NAME` neither resizes nor deletes it.
    auto resize = harness::rossoctl({"sandbox", "pool", "upstream", "-n", ns, "--size", "0"});
    CHECK(resize.exitCode == 1);
    CHECK(resize.err.find("was not made by rossoctl sandbox pool") != std::string::npos);
    CHECK(names(run::sandboxWarmPools(), ns) == std::vector<std::string>{"upstream"});
    CHECK(names(run::sandboxTemplates(), ns) ==
          std::vector<std::string>{"python-runtime-template"});
}
