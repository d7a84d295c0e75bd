// The live halves of sandbox verify: the probe scripts run here with /bin/sh and a PATH that
// holds only the tools an image would have, and the parsers read what they print.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rossoctl/verify/checks.hpp"
#include "temp_dir.hpp"

using nlohmann::json;
using namespace rossoctl::verify;

namespace {

std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

// Runs a probe command as the pod would: env -i with PATH holding only `tools`.
ProbeOutput runLocally(const std::vector<std::string>& command,
                       const std::vector<std::string>& tools) {
    rossoctl::testing::TempDir dir;
    const std::string bin = dir.file("bin");
    std::filesystem::create_directories(bin);
    for (const auto& tool : tools)
        for (const char* prefix : {"/usr/bin/", "/bin/"})
            if (std::filesystem::exists(std::string(prefix) + tool)) {
                std::filesystem::create_symlink(std::string(prefix) + tool, bin + "/" + tool);
                break;
            }
    std::string line = "env -i PATH=" + quoted(bin);
    for (const auto& word : command) line += " " + quoted(word);
    line += " >" + quoted(dir.file("out")) + " 2>" + quoted(dir.file("err"));
    const int status = std::system(line.c_str());
    ProbeOutput output;
    output.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    output.stdoutText = slurp(dir.file("out"));
    output.stderrText = slurp(dir.file("err"));
    return output;
}

// A listening socket on loopback: connections to it succeed.
struct Listener {
    Listener() {
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
        ::listen(fd, 8);
        socklen_t size = sizeof address;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
        port = ntohs(address.sin_port);
    }
    ~Listener() { ::close(fd); }
    int fd = -1;
    int port = 0;
};

// A loopback port nothing listens on.
EgressTarget closedTarget() {
    int port;
    {
        Listener probe;
        port = probe.port;
    }
    return *parseEgressTarget("http://127.0.0.1:" + std::to_string(port) + "/");
}

bool mentions(const Finding& finding, const std::string& text) {
    for (const auto& line : finding.evidence)
        if (line.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("parseEgressTarget: http(s) URLs with default ports") {
    auto https = parseEgressTarget("https://example.com");
    REQUIRE(https);
    CHECK(https->host == "example.com");
    CHECK(https->port == 443);
    auto http = parseEgressTarget("http://outside.rossoctl.test:8080/path?q=1");
    REQUIRE(http);
    CHECK(http->port == 8080);
    CHECK(parseEgressTarget("http://[fd00::1]/")->host == "fd00::1");
    CHECK_FALSE(parseEgressTarget("ftp://example.com"));
    CHECK_FALSE(parseEgressTarget("example.com"));
    CHECK_FALSE(parseEgressTarget("http://exa mple.com/"));
    CHECK_FALSE(parseEgressTarget("http://host:99999/"));
    CHECK_FALSE(parseEgressTarget("http://$(reboot)/"));
}

TEST_CASE("egress probe: the first tool the image has is used, in the documented order") {
    CHECK(egressProbeOrder() == std::vector<std::string>{"curl", "wget", "python3", "bash"});
    const EgressTarget target = closedTarget();
    struct Case {
        std::vector<std::string> tools;
        std::string expected;
    };
    for (const auto& [tools, expected] :
         std::vector<Case>{{{"sh", "curl", "wget", "python3", "bash", "sleep"}, "curl"},
                           {{"sh", "wget", "python3", "bash", "sleep"}, "wget"},
                           {{"sh", "python3", "bash", "sleep"}, "python3"},
                           {{"sh", "bash", "sleep"}, "bash"}}) {
        INFO("expected probe " << expected);
        auto output = runLocally(egressProbeCommand(target), tools);
        auto finding = egressLive(output, target);
        INFO(output.stdoutText << output.stderrText);
        CHECK(finding.probe == expected);
        CHECK(finding.verdict == Verdict::Pass);
        CHECK(mentions(finding, "could not connect"));
    }
    SECTION("no tool at all: unproven") {
        auto finding = egressLive(runLocally(egressProbeCommand(target), {"sh"}), target);
        CHECK(finding.verdict == Verdict::Unproven);
        CHECK(mentions(finding, "none of curl, wget, python3, bash"));
    }
}

TEST_CASE("egress probe: a connection that succeeds fails the check, with evidence") {
    Listener listener;
    const auto target = *parseEgressTarget("http://127.0.0.1:" + std::to_string(listener.port));
    for (const std::string tool : {"python3", "bash"}) {
        auto finding =
            egressLive(runLocally(egressProbeCommand(target), {"sh", tool, "sleep"}), target);
        CHECK(finding.probe == tool);
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "connected"));
    }
}

TEST_CASE("egress parser: curl and wget outputs") {
    const auto target = *parseEgressTarget("https://example.com");
    ProbeOutput curl;
    curl.stdoutText =
        "rossoctl-tool=curl\nrossoctl-curl=http:200 connect:0.012 ip:93.184.215.14\n"
        "rossoctl-exit=0\n";
    auto open = egressLive(curl, target);
    CHECK(open.verdict == Verdict::Fail);
    CHECK(mentions(open, "HTTP 200"));
    curl.stdoutText =
        "rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.000000 ip:\n"
        "rossoctl-exit=28\n";
    curl.stderrText = "curl: (28) Connection timed out after 5001 milliseconds\n";
    auto closed = egressLive(curl, target);
    CHECK(closed.verdict == Verdict::Pass);
    CHECK(mentions(closed, "Connection timed out after 5001"));
    // TLS failed after the TCP connection: egress is open.
    curl.stdoutText = "rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.004 ip:1.2.3.4\n";
    CHECK(egressLive(curl, target).verdict == Verdict::Fail);

    ProbeOutput wget;
    wget.stdoutText = "rossoctl-tool=wget\nrossoctl-exit=8\n";
    wget.stderrText = "  HTTP/1.1 404 Not Found\n";
    CHECK(egressLive(wget, target).verdict == Verdict::Fail);
    // GNU wget's last line is "Giving up."; the evidence names the line before it.
    wget.stdoutText = "rossoctl-tool=wget\nrossoctl-exit=4\n";
    wget.stderrText =
        "Connecting to outside.rossoctl.test (outside.rossoctl.test)|10.245.0.10|:80... failed: "
        "Connection timed out.\nGiving up.\n\n";
    auto timedOut = egressLive(wget, target);
    CHECK(timedOut.verdict == Verdict::Pass);
    CHECK(mentions(timedOut, "failed: Connection timed out."));
    wget.stdoutText = "rossoctl-tool=wget\nrossoctl-exit=1\n";
    wget.stderrText = "wget: something odd\n";
    CHECK(egressLive(wget, target).verdict == Verdict::Unproven);

    ProbeOutput notStarted;
    notStarted.started = false;
    notStarted.failure = "executable file not found";
    CHECK(egressLive(notStarted, target).verdict == Verdict::Unproven);
}

TEST_CASE("token probe: absent, readable, cannot run") {
    SECTION("run here: this machine has no token") {
        auto finding = tokenLive(runLocally(tokenProbeCommand(), {"sh", "cat"}));
        CHECK(finding.verdict == Verdict::Pass);
        CHECK(mentions(finding, "No such file or directory"));
    }
    SECTION("no cat in the image") {
        CHECK(tokenLive(runLocally(tokenProbeCommand(), {"sh"})).verdict == Verdict::Unproven);
    }
    ProbeOutput readable;
    readable.stdoutText = "rossoctl-token=readable\n";
    auto finding = tokenLive(readable);
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "a token is mounted"));
    ProbeOutput denied;
    denied.exitCode = 1;
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

TEST_CASE("canary: place, write, read back") {
    const json pod =
        json::parse(R"({"spec": {"volumes": [{"name": "workspace", "emptyDir": {}}]}})");
    json container = json::parse(R"({"workingDir": "/workspace/",
        "volumeMounts": [{"name": "workspace", "mountPath": "/workspace"}]})");
    auto place = canaryPlace(pod, container);
    CHECK(place.directory == "/workspace");
    CHECK(place.why == "the emptyDir volume workspace mounted at the working directory");
    container["volumeMounts"][0]["readOnly"] = true;
    CHECK(canaryPlace(pod, container).directory == "/tmp");
    CHECK(canaryPlace(pod, json::object()).directory == "/tmp");

    rossoctl::testing::TempDir dir;
    const std::string path = dir.file(".rossoctl-canary-x");
    const std::string content = "rossoctl canary 'quoted' $HOME";
    auto written = runLocally(canaryWriteCommand(path, content), {"sh", "cat"});
    CHECK(canaryWriteProblem(written, content).empty());
    auto present = canaryAfterRestart(runLocally(canaryReadCommand(path), {"sh", "cat"}), path,
                                      content, "pod uid a → b");
    CHECK(present.verdict == Verdict::Fail);
    CHECK(mentions(present, "survived the restart with its content"));
    std::filesystem::remove(path);
    auto gone = canaryAfterRestart(runLocally(canaryReadCommand(path), {"sh", "cat"}), path,
                                   content, "pod uid a → b");
    CHECK(gone.verdict == Verdict::Pass);
    CHECK_FALSE(
        canaryWriteProblem(
            runLocally(canaryWriteCommand("/nonexistent/dir/x", content), {"sh", "cat"}), content)
            .empty());
}
