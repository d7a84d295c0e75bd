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
    SECTION("run here: this machine has no token, and the shell alone can tell") {
        // No cat: the shell's own redirection opens the path (issue 35 point 5: no tool from
        // a path the pod may have written).
        auto finding = tokenLive(runLocally(tokenProbeCommand(), {}));
        CHECK(finding.verdict == Verdict::Pass);
        CHECK(mentions(finding, "No such file"));
    }
    SECTION("a cat the pod put on its PATH is never run") {
        auto finding = tokenLive(
            runLocally(tokenProbeCommand(), {}, {{"cat", "#!/bin/sh\necho secret-token\n"}}));
        CHECK(finding.verdict == Verdict::Pass);
        CHECK(tokenProbeCommand().front() == "/bin/sh");
    }
    SECTION("busybox's ash says it in lower case") {
        ProbeOutput busybox;
        busybox.stdoutText =
            "rossoctl-token-exit=1\nrossoctl-token-error=rossoctl-probe: line 1: can't open "
            "/var/run/secrets/kubernetes.io/serviceaccount/token: no such file\n";
        CHECK(tokenLive(busybox).verdict == Verdict::Pass);
    }
    SECTION("a message not about the token path is unproven") {
        ProbeOutput output;
        output.stdoutText = "rossoctl-token-exit=1\nrossoctl-token-error=sh: No such file\n";
        CHECK(tokenLive(output).verdict == Verdict::Unproven);
        output.stdoutText = "";
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
    denied.stdoutText =
        "rossoctl-token-exit=1\nrossoctl-token-error=sh: can't open "
        "'/var/run/secrets/kubernetes.io/serviceaccount/token': Permission denied\n";
    CHECK(tokenLive(denied).verdict == Verdict::Fail);
    ProbeOutput noShell;
    noShell.started = false;
    noShell.failure = "exec: \"/bin/sh\": stat /bin/sh: no such file or directory";
    auto unproven = tokenLive(noShell);
    CHECK(unproven.verdict == Verdict::Unproven);
    CHECK(mentions(unproven, "could not run sh"));
}

TEST_CASE("attack 65 L1: on cgroup v1 the socket buffers' own bound is read",
          "[verify][false-pass]") {
    // A container limited to 64Mi pinned 2.2 GiB in TCP buffers: v1 charges them to
    // memory.kmem.tcp, which the kubelet leaves unbounded, and limits passed.
    const long long limit = 64LL * 1024 * 1024;
    ProbeOutput v1;
    const std::string memory =
        "rossoctl-file=/sys/fs/cgroup/memory/memory.limit_in_bytes\nrossoctl-value=67108864\n";
    v1.stdoutText = memory + "rossoctl-tcp=9223372036854771712\n";
    const Finding unbounded = limitsLive(v1, limit);
    CHECK(unbounded.verdict == Verdict::Unproven);
    CHECK(mentions(unbounded,
                   "memory.kmem.tcp.limit_in_bytes = unlimited: on cgroup v1 socket "
                   "buffers are charged there, not to the memory limit"));
    v1.stdoutText = memory + "rossoctl-tcp=134217728\n";
    CHECK(limitsLive(v1, limit).verdict == Verdict::Unproven);
    v1.stdoutText = memory + "rossoctl-tcp=none\n";
    CHECK(limitsLive(v1, limit).verdict == Verdict::Unproven);
    v1.stdoutText = memory;
    CHECK(limitsLive(v1, limit).verdict == Verdict::Unproven);
    // Review 66 H3: only the kernel's digits are a reading ("0 garbage" read as 0 passed).
    v1.stdoutText = memory + "rossoctl-tcp=0 garbage\n";
    CHECK(limitsLive(v1, limit).verdict == Verdict::Unproven);
    v1.stdoutText = memory + "rossoctl-tcp=67108864\n";
    const Finding bounded = limitsLive(v1, limit);
    CHECK(bounded.verdict == Verdict::Pass);
    CHECK(mentions(bounded,
                   "(64Mi): cgroup v1 socket buffers are bounded too, apart from the "
                   "memory limit: the container may hold up to its limit in them besides"));
    // cgroup v2 charges them to memory.max: nothing more to read.
    ProbeOutput v2;
    v2.stdoutText = "rossoctl-file=/sys/fs/cgroup/memory.max\nrossoctl-value=67108864\n";
    CHECK(limitsLive(v2, limit).verdict == Verdict::Pass);
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
        "rossoctl-value=499998720\nrossoctl-tcp=499998720\n";
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
    // configMap is read-only; /tmp is a volume here, so the root filesystem is /var/tmp and /;
    // /dev/shm is the node's under hostIPC (review 35 M1).
    CHECK(directories ==
          std::vector<std::string>{"/workspace", "/data", "/tmp", "/var/tmp", "/", "/dev/shm"});
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

TEST_CASE("cpu probe: a quota that matches the limit passes; none, or a different one, fails") {
    // Issue 35 point 2: cpu "0" leaves cpu.cfs_quota_us at -1, no limit at all.
    auto output = [](const std::string& line) {
        ProbeOutput probe;
        probe.stdoutText = "rossoctl-file=none\nrossoctl-cpu=" + line + "\n";
        return probe;
    };
    CHECK(cpuLimitLive(output("/sys/fs/cgroup/cpu.max 50000 100000"), 500).verdict ==
          Verdict::Pass);
    auto unlimited = cpuLimitLive(output("/sys/fs/cgroup/cpu.max max 100000"), 500);
    CHECK(unlimited.verdict == Verdict::Fail);
    CHECK(mentions(unlimited, "the cgroup has no cpu limit"));
    CHECK(cpuLimitLive(output("/sys/fs/cgroup/cpu/cpu.cfs_quota_us -1 100000"), std::nullopt)
              .verdict == Verdict::Fail);
    auto other = cpuLimitLive(output("/sys/fs/cgroup/cpu.max 200000 100000"), 500);
    CHECK(other.verdict == Verdict::Fail);
    CHECK(mentions(other, "(2000m) but the container's cpu limit is 500m"));
    // The kubelet's floor: 1 ms per period for anything below 10m.
    CHECK(cpuLimitLive(output("/sys/fs/cgroup/cpu.max 1000 100000"), 5).verdict == Verdict::Pass);
    CHECK(cpuLimitLive(output("none"), 500).verdict == Verdict::Unproven);
    CHECK(cpuLimitMillis(json::parse(R"({"resources": {"limits": {"cpu": "0"}}})")) ==
          std::nullopt);
    CHECK(memoryLimitBytes(json::parse(R"({"resources": {"limits": {"memory": "0"}}})")) ==
          std::nullopt);
    CHECK(cpuLimitMillis(json::parse(R"({"resources": {"limits": {"cpu": "1500m"}}})")) == 1500);
}
