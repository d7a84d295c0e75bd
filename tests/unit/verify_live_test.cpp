// The live halves of sandbox verify beside egress (tests/unit/egress_probe_test.cpp): the token,
// cgroup and canary probes run here with /bin/sh and a PATH that holds only the tools an image
// would have, and the parsers read what they print.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "probe_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::verify;
using namespace rossoctl::testing;

TEST_CASE("token probe: absent, readable, cannot run") {
    SECTION("run here: this machine has no token") {
        auto finding = tokenLive(runLocally(tokenProbeCommand(), {"sh", "cat"}));
        CHECK(finding.verdict == Verdict::Pass);
        CHECK(mentions(finding, "No such file or directory"));
    }
    SECTION("no cat in the image") {
        CHECK(tokenLive(runLocally(tokenProbeCommand(), {"sh"})).verdict == Verdict::Unproven);
    }
    SECTION("cat a dangling link: its \"No such file\" is not about the token") {
        ProbeOutput output;
        output.exitCode = 0;
        output.stdoutText = "rossoctl-token-exit=127\n";
        output.stderrText = "rossoctl-probe: 2: cat: No such file or directory\n";
        CHECK(tokenLive(output).verdict == Verdict::Unproven);
        output.stdoutText = "rossoctl-token-exit=1\n";
        output.stderrText = "sh: cat: No such file or directory\n";
        CHECK(tokenLive(output).verdict == Verdict::Unproven);
    }
    SECTION("an exec that ran out of time is unproven") {
        ProbeOutput output;
        output.timedOut = true;
        output.stdoutText = "rossoctl-token-exit=1\n";
        CHECK(tokenLive(output).verdict == Verdict::Unproven);
    }
    ProbeOutput readable;
    readable.stdoutText = "rossoctl-token-exit=0\n";
    auto finding = tokenLive(readable);
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "a token is mounted"));
    ProbeOutput denied;
    denied.stdoutText = "rossoctl-token-exit=1\n";
    denied.stderrText =
        "cat: /var/run/secrets/kubernetes.io/serviceaccount/token: Permission denied\n";
    CHECK(tokenLive(denied).verdict == Verdict::Fail);
    ProbeOutput noShell;
    noShell.started = false;
    noShell.failure = "exec: \"sh\": executable file not found in $PATH";
    auto unproven = tokenLive(noShell);
    CHECK(unproven.verdict == Verdict::Unproven);
    CHECK(mentions(unproven, "could not run sh"));
}

TEST_CASE("cgroup probe: v1 and v2 files, unlimited, mismatch, unreadable") {
    const long long limit = 512LL * 1024 * 1024;
    ProbeOutput v2;
    v2.stdoutText = "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=536870912\n";
    auto pass = limitsLive(v2, limit);
    CHECK(pass.verdict == Verdict::Pass);
    CHECK(mentions(pass, "/sys/fs/cgroup/memory.max = 536870912 (512Mi)"));
    v2.stdoutText = "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=max\n";
    CHECK(limitsLive(v2, limit).verdict == Verdict::Fail);
    ProbeOutput v1;
    v1.stdoutText =
        "rossoctl-file=/sys/fs/cgroup/memory/memory.limit_in_bytes\n"
        "rossoctl-value=9223372036854771712\n";
    CHECK(mentions(limitsLive(v1, limit), "no memory limit"));
    v1.stdoutText =
        "rossoctl-file=/sys/fs/cgroup/memory/memory.limit_in_bytes\n"
        "rossoctl-value=1073741824\n";
    auto mismatch = limitsLive(v1, limit);
    CHECK(mismatch.verdict == Verdict::Fail);
    CHECK(mentions(mismatch, "1Gi but the container's memory limit is 512Mi"));
    // 500M is not page-aligned: the kernel rounds down.
    v1.stdoutText =
        "rossoctl-file=/sys/fs/cgroup/memory/memory.limit_in_bytes\n"
        "rossoctl-value=499998720\n";
    CHECK(limitsLive(v1, 500000000).verdict == Verdict::Pass);
    ProbeOutput none;
    none.stdoutText = "rossoctl-file=none\n";
    auto unreadable = limitsLive(none, limit);
    CHECK(unreadable.verdict == Verdict::Unproven);
    CHECK(mentions(unreadable, "is readable in the container"));
    CHECK(memoryLimitBytes(json::parse(R"({"resources": {"limits": {"memory": "512Mi"}}})")) ==
          limit);
    CHECK_FALSE(memoryLimitBytes(json::parse(R"({"resources": {}})")));
}

TEST_CASE("canaries: every writable mount and the root filesystem, read back") {
    const json pod = json::parse(R"({"spec": {"volumes": [{"name": "workspace", "emptyDir": {}},
        {"name": "config", "configMap": {"name": "c"}}, {"name": "data", "nfs": {"path": "/x"}}]}})");
    json container = json::parse(R"({"workingDir": "/workspace/",
        "volumeMounts": [{"name": "workspace", "mountPath": "/workspace/"},
                         {"name": "config", "mountPath": "/etc/config"},
                         {"name": "data", "mountPath": "/data"},
                         {"name": "workspace", "mountPath": "/tmp"}]})");
    std::vector<std::string> directories;
    for (const auto& place : canaryPlaces(pod, container)) directories.push_back(place.directory);
    // configMap is read-only; /tmp is a volume here, so the root filesystem is /var/tmp and /.
    CHECK(directories == std::vector<std::string>{"/workspace", "/data", "/tmp", "/var/tmp", "/"});
    container["volumeMounts"][0]["readOnly"] = true;
    CHECK(canaryPlaces(pod, container).front().directory == "/data");

    rossoctl::testing::TempDir dir;
    const std::vector<std::string> paths = {dir.file("a"), dir.file("b"), "/nonexistent/dir/x"};
    const std::string content = "rossoctl canary 'quoted' $HOME";
    auto written = canariesWritten(runLocally(canaryWriteCommand(paths, content), {"sh", "cat"}));
    CHECK(written == std::vector<std::string>{dir.file("a"), dir.file("b")});
    auto present =
        canariesAfterRestart(runLocally(canaryReadCommand(written), {"sh"}), written, "uid a → b");
    CHECK(present.verdict == Verdict::Fail);
    CHECK(mentions(present, dir.file("a") + " survived the restart"));
    std::filesystem::remove(dir.file("a"));
    CHECK(canariesAfterRestart(runLocally(canaryReadCommand(written), {"sh"}), written, "x")
              .verdict == Verdict::Fail);  // b is still there
    std::filesystem::remove(dir.file("b"));
    auto gone =
        canariesAfterRestart(runLocally(canaryReadCommand(written), {"sh"}), written, "uid a → b");
    CHECK(gone.verdict == Verdict::Pass);
    CHECK(mentions(gone, "all 2 canaries are gone"));
    SECTION("an answer that stops short, or a time-out, is unproven") {
        ProbeOutput partial;
        partial.stdoutText = "rossoctl-absent=" + dir.file("a") + "\n";
        CHECK(canariesAfterRestart(partial, written, "x").verdict == Verdict::Unproven);
        partial.stdoutText += "rossoctl-done=1\n";
        CHECK(canariesAfterRestart(partial, written, "x").verdict == Verdict::Unproven);
        ProbeOutput timedOut;
        timedOut.timedOut = true;
        CHECK(canaryWriteCommand({}, "x").size() == 5);
        CHECK(canariesWritten(timedOut).empty());
    }
}
