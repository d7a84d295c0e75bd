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
#include "test_host.hpp"

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

ControlResult reached(const std::string& address = "127.0.0.1") {
    ControlResult control;
    control.reached = true;
    control.address = address;
    control.roundTrip = std::chrono::microseconds(300);
    control.vantage = "this machine";
    return control;
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
        auto finding = egressLive(output, target, reached());
        INFO(output.stdoutText << output.stderrText);
        CHECK(finding.probe == expected);
        CHECK(finding.verdict == Verdict::Pass);
        CHECK(mentions(finding, "could not connect"));
    }
    SECTION("no tool at all: unproven") {
        auto finding =
            egressLive(runLocally(egressProbeCommand(target), {"sh"}), target, reached());
        CHECK(finding.verdict == Verdict::Unproven);
        CHECK(mentions(finding, "none of curl, wget, python3, bash"));
    }
}

TEST_CASE("egress probe: a connection that succeeds fails the check, with evidence") {
    Listener listener;
    const auto target = *parseEgressTarget("http://127.0.0.1:" + std::to_string(listener.port));
    for (const std::string tool : {"python3", "bash"}) {
        auto finding = egressLive(runLocally(egressProbeCommand(target), {"sh", tool, "sleep"}),
                                  target, reached());
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
    auto open = egressLive(curl, target, reached());
    CHECK(open.verdict == Verdict::Fail);
    CHECK(mentions(open, "HTTP 200"));
    curl.stdoutText =
        "rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.000000 ip:\n"
        "rossoctl-exit=28\n";
    curl.stderrText = "curl: (28) Connection timed out after 5001 milliseconds\n";
    auto closed = egressLive(curl, target, reached());
    CHECK(closed.verdict == Verdict::Pass);
    CHECK(mentions(closed, "Connection timed out after 5001"));
    // TLS failed after the TCP connection: egress is open.
    curl.stdoutText = "rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.004 ip:1.2.3.4\n";
    CHECK(egressLive(curl, target, reached()).verdict == Verdict::Fail);

    ProbeOutput wget;
    wget.stdoutText = "rossoctl-tool=wget\nrossoctl-exit=8\n";
    wget.stderrText = "  HTTP/1.1 404 Not Found\n";
    CHECK(egressLive(wget, target, reached()).verdict == Verdict::Fail);
    // GNU wget's last line is "Giving up."; the evidence names the line before it.
    wget.stdoutText = "rossoctl-tool=wget\nrossoctl-exit=4\n";
    wget.stderrText =
        "Connecting to outside.rossoctl.test (outside.rossoctl.test)|10.245.0.10|:80... failed: "
        "Connection timed out.\nGiving up.\n\n";
    auto timedOut = egressLive(wget, target, reached());
    CHECK(timedOut.verdict == Verdict::Pass);
    CHECK(mentions(timedOut, "failed: Connection timed out."));
    wget.stdoutText = "rossoctl-tool=wget\nrossoctl-exit=1\n";
    wget.stderrText = "wget: something odd\n";
    CHECK(egressLive(wget, target, reached()).verdict == Verdict::Unproven);

    ProbeOutput notStarted;
    notStarted.started = false;
    notStarted.failure = "executable file not found";
    CHECK(egressLive(notStarted, target, reached()).verdict == Verdict::Unproven);
}

TEST_CASE("egress: only a connect failure with a reached control is a denial") {
    const auto target = *parseEgressTarget("https://example.com");
    ProbeOutput refused;
    refused.stdoutText =
        "rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.000000 ip:\n"
        "rossoctl-exit=7\n";
    refused.stderrText =
        "curl: (7) Failed to connect to example.com port 443: Connection refused\n";
    CHECK(egressLive(refused, target, reached()).verdict == Verdict::Pass);
    SECTION("a dead target: the control did not reach it either") {
        ControlResult dead;
        dead.detail = "unreachable.invalid does not resolve here";
        auto finding = egressLive(refused, target, dead);
        CHECK(finding.verdict == Verdict::Unproven);
        CHECK(mentions(finding, "a dead target proves nothing"));
        rossoctl::testing::FakeResolver resolver;  // knows no name
        auto control = connectFromHere(resolver, *parseEgressTarget("http://unreachable.invalid/"),
                                       std::chrono::milliseconds(500));
        CHECK(resolver.asked == std::vector<std::string>{"unreachable.invalid"});
        CHECK_FALSE(control.reached);
        CHECK_THAT(control.detail, Catch::Contains("unreachable.invalid"));
    }
    SECTION("an exec that ran out of time") {
        ProbeOutput output = refused;
        output.timedOut = true;
        CHECK(egressLive(output, target, reached()).verdict == Verdict::Unproven);
    }
    SECTION("wget connected, then stalled: open") {
        ProbeOutput wget;
        wget.stdoutText = "rossoctl-tool=wget\nrossoctl-exit=4\n";
        wget.stderrText =
            "Connecting to 1.2.3.4:443... connected.\nRead error (Connection timed out) in "
            "headers.\nGiving up.\n";
        CHECK(egressLive(wget, target, reached()).verdict == Verdict::Fail);
        wget.stderrText = "wget: download timed out\n";  // busybox: connect or read? unknown
        CHECK(egressLive(wget, target, reached()).verdict == Verdict::Unproven);
    }
    SECTION("a tool that cannot run, a name that does not resolve, a message not known") {
        ProbeOutput output;
        output.stdoutText = "rossoctl-tool=curl\nrossoctl-exit=127\n";
        output.stderrText = "sh: curl: not found\n";
        CHECK(egressLive(output, target, reached()).verdict == Verdict::Unproven);
        output.stdoutText =
            "rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.000000 ip:\n"
            "rossoctl-exit=6\n";
        output.stderrText = "curl: (6) Could not resolve host: example.com\n";
        CHECK(egressLive(output, target, reached()).verdict == Verdict::Unproven);
        output.stdoutText =
            "rossoctl-tool=python3\nrossoctl-connect=failed errno -2 Name or "
            "service not known\nrossoctl-exit=0\n";
        CHECK(egressLive(output, target, reached()).verdict == Verdict::Unproven);
        output.stdoutText =
            "rossoctl-tool=python3\nrossoctl-connect=failed errno 111 "
            "Connection refused\nrossoctl-exit=0\n";
        CHECK(egressLive(output, target, reached()).verdict == Verdict::Pass);
    }
    SECTION("text from the pod reaches the evidence without control characters") {
        ProbeOutput output;
        output.stdoutText = "rossoctl-tool=wget\nrossoctl-exit=1\n";
        output.stderrText = "wget: \x1b]0;owned\x07odd\n";
        auto finding = egressLive(output, target, reached());
        CHECK(finding.verdict == Verdict::Unproven);
        for (const auto& line : finding.evidence) CHECK(line.find('\x1b') == std::string::npos);
    }
}

TEST_CASE("positive control: a TCP connection from here, its round trip sizes the time-out") {
    Listener listener;
    rossoctl::testing::FakeResolver resolver;
    auto control = connectFromHere(
        resolver, *parseEgressTarget("http://127.0.0.1:" + std::to_string(listener.port) + "/"),
        std::chrono::milliseconds(1000));
    CHECK(control.reached);
    CHECK(control.address == "127.0.0.1");
    CHECK(resolver.asked.empty());  // an address is not looked up
    CHECK_FALSE(connectFromHere(resolver, closedTarget(), std::chrono::milliseconds(1000)).reached);
    // A name goes through the injected resolver, never the system's.
    resolver.addresses["control.test"] = {"127.0.0.1"};
    auto named = connectFromHere(
        resolver, *parseEgressTarget("http://control.test:" + std::to_string(listener.port) + "/"),
        std::chrono::milliseconds(1000));
    CHECK(named.reached);
    CHECK(named.address == "127.0.0.1");
    ControlResult slow = reached();
    CHECK(probeConnectTimeout(slow) == std::chrono::milliseconds(1012));
    slow.roundTrip = std::chrono::milliseconds(80);
    CHECK(probeConnectTimeout(slow) == std::chrono::milliseconds(4200));
    slow.roundTrip = std::chrono::seconds(1);
    CHECK(probeConnectTimeout(slow) == std::chrono::milliseconds(5000));
    // The pod probes the address the control reached, with the time-out in the script's args.
    auto command = egressProbeCommand(*parseEgressTarget("https://example.com"), "192.0.2.7",
                                      std::chrono::milliseconds(1500));
    CHECK(command[5] == "192.0.2.7");
    CHECK(command[7] == "1.5");
    CHECK(command[10] == "example.com:443:192.0.2.7");
    CHECK(command[11] == "https://192.0.2.7:443/");
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
