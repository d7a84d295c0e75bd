// sandbox run and sandbox pool against the local cluster, in a project as `project create`
// writes it (restricted pod security, default-deny, quota).
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <thread>

#include "harness.hpp"
#include "rossoctl/app/run/artifacts.hpp"
#include "rossoctl/kube/resource.hpp"

using nlohmann::json;
namespace fs = std::filesystem;
namespace resources = rossoctl::kube::resources;

namespace {

void createProject(const std::string& name) {
    auto result = harness::rossoctl({"project", "create", name});
    INFO(result.out << result.err);
    REQUIRE(result.exitCode == 0);
}

std::vector<std::string> podsLeft(const std::string& ns, const std::string& selector) {
    rossoctl::kube::ListOptions options;
    options.labelSelector = selector;
    std::vector<std::string> names;
    const json list = harness::admin().list(resources::pods(), ns, options);
    for (const auto& pod : list["items"]) names.push_back(pod["metadata"]["name"]);
    return names;
}

size_t runPodsLeft(const std::string& ns) {
    return podsLeft(ns, "rossoctl.dev/run=true").size();
}

harness::RunResult run(const std::string& ns, std::vector<std::string> args,
                       const std::string& input = {}) {
    args.insert(args.begin(), {"sandbox", "run", "-n", ns});
    return harness::rossoctl(args, input);
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string tempDir() {
    std::string pattern = (fs::temp_directory_path() / "rossoctl-run-it-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    return pattern;
}

const char* kScript = R"(import sys
print("hello from stdout")
print("hello from stderr", file=sys.stderr)
open("out/result.txt", "w").write("42\n")
open("out/blob.bin", "wb").write(bytes(range(256)) * 300)
sys.exit(3)
)";

struct Summary {
    std::vector<long> total, schedule, upload, run, collect, cleanup;
};

long percentile(std::vector<long> values, double p) {
    std::sort(values.begin(), values.end());
    return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

void report(const std::string& label, const Summary& s) {
    auto line = [&](const char* phase, const std::vector<long>& v) {
        std::cout << "  " << phase << ": median " << percentile(v, 0.5) << " ms, p95 "
                  << percentile(v, 0.95) << " ms\n";
    };
    std::cout << label << " (" << s.total.size() << " runs of `-- true`)\n";
    line("wall", s.total);
    line("schedule", s.schedule);
    line("upload", s.upload);
    line("run", s.run);
    line("collect", s.collect);
    line("cleanup", s.cleanup);
}

void trivialRuns(const std::string& ns, int count, bool pool, Summary& summary, int& warm) {
    for (int i = 0; i < count; ++i) {
        std::vector<std::string> args = {"-o", "json"};
        if (pool) args.push_back("--pool");
        args.insert(args.end(), {"--", "true"});
        const auto start = std::chrono::steady_clock::now();
        auto result = run(ns, args);
        const long wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
        INFO("run " << i << ": " << result.out << result.err);
        REQUIRE(result.exitCode == 0);
        const json out = json::parse(result.out);
        summary.total.push_back(wall);
        summary.schedule.push_back(out["durations"]["schedule"]);
        summary.upload.push_back(out["durations"]["upload"]);
        summary.run.push_back(out["durations"]["run"]);
        summary.collect.push_back(out["durations"]["collect"]);
        summary.cleanup.push_back(out["durations"]["cleanup"]);
        if (out["warm"] == true) ++warm;
    }
}

}  // namespace

TEST_CASE("sandbox run returns streams, exit status and artifacts", "[run]") {
    harness::TestNamespace project("run", /*create=*/false);
    const std::string ns = project.name();
    createProject(ns);
    const std::string dir = tempDir();
    std::ofstream(dir + "/main.py") << kScript;
    const std::string artifacts = dir + "/artifacts";

    SECTION("-o json: both streams, exit 3, two artifacts with matching sha256") {
        auto result = run(ns, {"--file", dir + "/main.py", "--artifacts", artifacts, "-o", "json",
                               "--", "python3", "main.py"});
        INFO(result.out << result.err);
        REQUIRE(result.exitCode == 3);
        const json out = json::parse(result.out);
        CHECK(out["exitCode"] == 3);
        CHECK(out["timedOut"] == false);
        CHECK(out["stdout"] == "hello from stdout\n");
        CHECK(out["stderr"] == "hello from stderr\n");
        std::string blob;
        for (int i = 0; i < 300; ++i)
            for (int b = 0; b < 256; ++b) blob += static_cast<char>(b);
        std::map<std::string, json> byPath;
        for (const auto& artifact : out["artifacts"]) byPath[artifact["path"]] = artifact;
        REQUIRE(byPath.size() == 2);
        CHECK(byPath["result.txt"]["sha256"] == rossoctl::app::run::sha256Hex("42\n"));
        CHECK(byPath["blob.bin"]["bytes"] == blob.size());
        CHECK(byPath["blob.bin"]["sha256"] == rossoctl::app::run::sha256Hex(blob));
        CHECK(slurp(artifacts + "/blob.bin") == blob);
        CHECK(slurp(artifacts + "/result.txt") == "42\n");
        CHECK(runPodsLeft(ns) == 0);
    }
    SECTION("streams go straight through without -o json; code on stdin") {
        auto result = run(ns, {"--stdin", "--env", "GREETING=hi there", "--", "python3", "-"},
                          "import os, sys\nprint(os.environ['GREETING'])\n"
                          "print('warn', file=sys.stderr)\nsys.exit(1)\n");
        CHECK(result.exitCode == 1);
        CHECK(result.out == "hi there\n");
        CHECK(result.err == "warn\n");
        CHECK(runPodsLeft(ns) == 0);
    }
    SECTION("no service-account token, and the outside world is unreachable") {
        const std::string probe =
            "import os, sys, urllib.request\n"
            "token = os.path.exists('/var/run/secrets/kubernetes.io/serviceaccount/token')\n"
            "try:\n"
            "    urllib.request.urlopen('" +
            harness::outsideUrl(true) +
            "', timeout=5)\n"
            "    reached = True\n"
            "except Exception as e:\n"
            "    reached = False\n"
            "print('token', token, 'reached', reached)\n";
        auto result = run(ns, {"--stdin", "--", "python3", "-"}, probe);
        INFO(result.err);
        CHECK(result.exitCode == 0);
        CHECK(result.out == "token False reached False\n");
    }
    SECTION("20 MB of output arrives intact") {
        auto result = run(ns, {"--", "python3", "-c",
                               "import sys; sys.stdout.buffer.write(bytes(range(256)) * 81920)"});
        REQUIRE(result.exitCode == 0);
        std::string expected;
        for (int i = 0; i < 81920; ++i)
            for (int b = 0; b < 256; ++b) expected += static_cast<char>(b);
        CHECK(result.out.size() == 20 * 1024 * 1024);
        CHECK(rossoctl::app::run::sha256Hex(result.out) == rossoctl::app::run::sha256Hex(expected));
    }
    SECTION("a run over its timeout is cut with what it printed, exits 124, leaves no pod") {
        auto result = run(
            ns, {"--timeout", "3s", "--", "sh", "-c", "while true; do echo tick; sleep 0.2; done"});
        CHECK(result.exitCode == 124);
        CHECK_THAT(result.out, Catch::StartsWith("tick\ntick\n"));
        CHECK_THAT(result.err, Catch::Contains("--timeout 3s"));
        CHECK(runPodsLeft(ns) == 0);
    }
    SECTION("its own failures exit 125 and create nothing") {
        // project create's check pods were just deleted: the quota's status follows later.
        const auto before = harness::settledSnapshot(ns);
        CHECK(run(ns, {"--timeout", "soon", "--", "true"}).exitCode == 125);
        CHECK(run(ns, {"--no-such-flag", "--", "true"}).exitCode == 125);
        CHECK(run(ns, {"--file", dir + "/missing.py", "--", "true"}).exitCode == 125);
        CHECK(run(ns, {"--env", "A-B=1", "--", "true"}).exitCode == 125);
        CHECK(run(ns, {}).exitCode == 125);
        CHECK(harness::snapshot(ns) == before);
        CHECK(runPodsLeft(ns) == 0);
    }
    fs::remove_all(dir);
}

TEST_CASE("sandbox run: Ctrl-C deletes the pod", "[run]") {
    harness::TestNamespace project("run-int", /*create=*/false);
    const std::string ns = project.name();
    createProject(ns);
    const pid_t pid = harness::spawnRossoctl({"sandbox", "run", "-n", ns, "--", "sleep", "60"});
    // Interrupt once the command is running in the pod.
    bool running = harness::eventually(
        [&] {
            const json list = harness::admin().list(resources::pods(), ns);
            for (const auto& pod : list["items"])
                if (pod["status"].value("phase", "") == "Running") return true;
            return false;
        },
        60);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    ::kill(pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(running);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    CHECK(runPodsLeft(ns) == 0);
}

TEST_CASE("sandbox run: 50 runs cold and 50 from a warm pool leave nothing behind",
          "[run][run-bench]") {
    harness::TestNamespace project("run-many", /*create=*/false);
    const std::string ns = project.name();
    createProject(ns);
    Summary cold, pooled;
    int warm = 0;
    trivialRuns(ns, 50, false, cold, warm);
    CHECK(runPodsLeft(ns) == 0);

    // The fallback pool of bare pods (the SandboxWarmPool path: warm_pool_test.cpp).
    auto pool =
        harness::rossoctl({"sandbox", "pool", "-n", ns, "--size", "2", "--wait", "--bare-pods"});
    INFO(pool.out << pool.err);
    REQUIRE(pool.exitCode == 0);
    CHECK(podsLeft(ns, "rossoctl.dev/pool=warm").size() == 2);
    // The first run finds the full pool; later ones may come while a replacement still starts
    // (how many do is the node's speed: reported here, measured in bench/).
    trivialRuns(ns, 1, true, pooled, warm);
    CHECK(warm == 1);
    trivialRuns(ns, 49, true, pooled, warm);
    WARN(warm << " of 50 pooled runs were warm");
    CHECK(runPodsLeft(ns) == 0);
    CHECK(podsLeft(ns, "rossoctl.dev/pool=warm").size() == 2);

    auto empty = harness::rossoctl({"sandbox", "pool", "-n", ns, "--size", "0", "--bare-pods"});
    CHECK(empty.exitCode == 0);
    CHECK(harness::eventually([&] { return podsLeft(ns, "").empty(); }, 30));
    report("cold", cold);
    report("warm pool (bare pods)", pooled);
}

// A project that requires gvisor (project create --runtime-class) refuses a run pod without it;
// with --runtime-class the run's code sees gVisor's kernel, not the node's.
TEST_CASE("sandbox run says why it ended and reports what ran", "[run][report]") {
    harness::TestNamespace project("run-report", /*create=*/false);
    const std::string ns = project.name();
    createProject(ns);
    const std::string dir = tempDir();
    std::ofstream(dir + "/main.py") << kScript;

    SECTION("a pod that allocates past --memory is OOMKilled: exit 137, with the limit") {
        auto result = run(ns, {"--memory", "64Mi", "-o", "json", "--", "python3", "-c",
                               "b = bytearray(512 << 20)"});
        INFO(result.out << result.err);
        REQUIRE(result.exitCode == 137);
        const json out = json::parse(result.out);
        CHECK(out["ended"]["reason"] == "OOMKilled");
        CHECK(out["ended"]["memoryLimit"] == "64Mi");
        CHECK_THAT(result.err, Catch::Contains("error: the run ended: OOMKilled (exit 137)"));
        CHECK(runPodsLeft(ns) == 0);
    }
    SECTION("--report: the digest that ran, its node, a cold start, phases, artifact hashes") {
        const std::string artifacts = dir + "/artifacts";
        const std::string reportPath = dir + "/run.json";
        auto result = run(ns, {"--file", dir + "/main.py", "--artifacts", artifacts, "--report",
                               reportPath, "--", "python3", "main.py"});
        INFO(result.out << result.err);
        REQUIRE(result.exitCode == 3);
        CHECK(result.out == "hello from stdout\n");  // the output still streams
        const json report = json::parse(slurp(reportPath));
        INFO(report.dump(2));
        CHECK(report["exitCode"] == 3);
        CHECK(report["ended"]["reason"] == "Exited");
        CHECK_THAT(report["imageDigest"].get<std::string>(), Catch::Matches("sha256:[0-9a-f]{64}"));
        CHECK_THAT(report["imageID"].get<std::string>(),
                   Catch::Contains(report["imageDigest"].get<std::string>()));
        CHECK(report["image"] == "docker.io/library/python:3.12-slim");
        CHECK_FALSE(report["node"].get<std::string>().empty());
        CHECK(report["start"] == "cold");
        CHECK(report["durations"]["run"].get<long>() > 0);
        CHECK(report["durations"]["total"].get<long>() >= report["durations"]["run"].get<long>());
        REQUIRE(report["artifacts"].size() == 2);
        for (const auto& artifact : report["artifacts"]) {
            const std::string content =
                slurp(artifacts + "/" + artifact["path"].get<std::string>());
            CHECK(artifact["bytes"] == content.size());
            CHECK(artifact["sha256"] == rossoctl::app::run::sha256Hex(content));
        }
        CHECK((fs::status(reportPath).permissions() & fs::perms::all) ==
              (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
               fs::perms::others_read));
        CHECK(runPodsLeft(ns) == 0);
    }
    fs::remove_all(dir);
}

TEST_CASE("sandbox run --runtime-class gvisor runs the code on a kernel of its own",
          "[run][gvisor]") {
    harness::TestNamespace project("run-gvisor", /*create=*/false);
    const std::string ns = project.name();
    {
        auto created = harness::rossoctl({"project", "create", ns, "--runtime-class", "gvisor"});
        INFO(created.out << created.err);
        REQUIRE(created.exitCode == 0);
    }
    const std::vector<std::string> uname = {"--image", "busybox:1.36", "--", "uname", "-r"};
    std::vector<std::string> withClass = {"--runtime-class", "gvisor"};
    withClass.insert(withClass.end(), uname.begin(), uname.end());
    auto sandboxed = run(ns, withClass);
    INFO(sandboxed.out << sandboxed.err);
    CHECK(sandboxed.exitCode == 0);
    CHECK(sandboxed.out == "4.4.0\n");
    auto refused = run(ns, uname);
    INFO(refused.out << refused.err);
    CHECK(refused.exitCode == 125);
    CHECK_THAT(refused.err, Catch::Contains("sandbox run --runtime-class gvisor"));
    CHECK(podsLeft(ns, "rossoctl.dev/run=true").empty());
}
