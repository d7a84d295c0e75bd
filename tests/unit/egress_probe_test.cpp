// The live half of "egress denied": the probe script run here with only the tools an image
// would have, the parser's reading of what each tool prints, and the positive control.
#include <poll.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "probe_fixtures.hpp"
#include "test_host.hpp"

using nlohmann::json;
using namespace rossoctl::verify;
using namespace rossoctl::testing;

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

TEST_CASE("egress probe: a wget without a time-out is judged by its socket at the deadline") {
    // Debian's busybox wget has no -T: it would wait out the kernel's SYN retries.
    Listener listener;  // accepts the handshake and never answers: connected, then stalled
    const auto target = *parseEgressTarget("http://127.0.0.1:" + std::to_string(listener.port));
    const std::string stalls = fmt::format(
        "#!/bin/sh\ncase \"$1\" in --help) echo 'Usage: wget [-cqS] [-O FILE] URL'; exit 0 ;; "
        "esac\necho \"Connecting to 127.0.0.1\" >&2\n"
        "exec /bin/bash -c 'exec 3<>/dev/tcp/127.0.0.1/{}; exec /bin/sleep 30'\n",
        listener.port);
    const auto started = std::chrono::steady_clock::now();
    auto output = runLocally(egressProbeCommand(target, "", std::chrono::milliseconds(1000)),
                             {"sh", "sleep", "readlink"}, {{"wget", stalls}});
    INFO(output.stdoutText << output.stderrText);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
    CHECK_THAT(output.stdoutText, Catch::Contains("rossoctl-socket=01"));
    auto finding = egressLive(output, target, reached());
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "ESTABLISHED"));

    SECTION("what the socket says, as the parser reads it") {
        ProbeOutput dropped;
        dropped.stdoutText = "rossoctl-tool=wget\nrossoctl-socket=02\nrossoctl-exit=143\n";
        dropped.stderrText = "Connecting to 127.0.0.1 (127.0.0.1:80)\n";
        auto denied = egressLive(dropped, target, reached());
        CHECK(denied.verdict == Verdict::Pass);
        CHECK(mentions(denied, "SYN_SENT"));
        dropped.stdoutText = "rossoctl-tool=wget\nrossoctl-socket=none\nrossoctl-exit=143\n";
        CHECK(egressLive(dropped, target, reached()).verdict == Verdict::Unproven);
        // A dead target proves nothing, whatever the socket says.
        dropped.stdoutText = "rossoctl-tool=wget\nrossoctl-socket=02\nrossoctl-exit=143\n";
        ControlResult dead;
        dead.detail = "no connection within 3000 ms";
        CHECK(egressLive(dropped, target, dead).verdict == Verdict::Unproven);
    }
}

TEST_CASE("egress probe: a proxy from the pod's environment or rc files is not what is probed") {
    // A proxy nobody can reach would make the tools report "could not connect" for the proxy.
    Listener listener;
    std::atomic<bool> done{false};
    std::thread answerer([&] {  // accept and close: a quick "connected" for every tool
        while (!done) {
            pollfd waiting{listener.fd, POLLIN, 0};
            if (::poll(&waiting, 1, 50) <= 0) continue;
            const int connection = ::accept(listener.fd, nullptr, nullptr);
            if (connection >= 0) ::close(connection);
        }
    });
    const auto target = *parseEgressTarget("http://127.0.0.1:" + std::to_string(listener.port));
    const std::string proxy = "http://127.0.0.1:" + std::to_string(closedTarget().port);
    rossoctl::testing::TempDir home;
    std::ofstream(home.file(".curlrc")) << "proxy = \"" << proxy << "\"\n";
    std::ofstream(home.file(".wgetrc")) << "use_proxy = on\nhttp_proxy = " << proxy << "\n";
    for (const std::string tool : {"curl", "wget"}) {
        auto output = runLocally(
            egressProbeCommand(target, "", std::chrono::milliseconds(1000)), {"sh", tool, "sleep"},
            {}, {"HOME=" + home.path(), "http_proxy=" + proxy, "all_proxy=" + proxy});
        INFO(tool << ": " << output.stdoutText << output.stderrText);
        CHECK(egressLive(output, target, reached()).verdict == Verdict::Fail);
    }
    done = true;
    answerer.join();
}

TEST_CASE("egress probe: PYTHONPATH and BASH_ENV from the pod do not replace the probe") {
    Listener listener;  // open: the probe must see the connection
    const auto target = *parseEgressTarget("http://127.0.0.1:" + std::to_string(listener.port));
    rossoctl::testing::TempDir planted;
    std::ofstream(planted.file("socket.py"))
        << "def create_connection(*a, **k):\n    raise ConnectionRefusedError(111, "
           "'Connection refused')\ntimeout = OSError\n";
    std::ofstream(planted.file("bash_env")) << "echo rossoctl-connect=failed refused; exit 0\n";
    for (const std::string tool : {"python3", "bash"}) {
        auto output = runLocally(
            egressProbeCommand(target, "", std::chrono::milliseconds(1000)), {"sh", tool, "sleep"},
            {}, {"PYTHONPATH=" + planted.path(), "BASH_ENV=" + planted.file("bash_env")});
        INFO(tool << ": " << output.stdoutText << output.stderrText);
        CHECK(egressLive(output, target, reached()).verdict == Verdict::Fail);
    }
}

TEST_CASE("egress parser: only the network's answer is a denial, never a local failure") {
    const auto target = *parseEgressTarget("http://example.com");
    auto verdict = [&](const std::string& tool, const std::string& out, const std::string& err) {
        ProbeOutput output;
        output.stdoutText = "rossoctl-tool=" + tool + "\n" + out;
        output.stderrText = err;
        return egressLive(output, target, reached("192.0.2.7")).verdict;
    };
    const std::string curlLine = "rossoctl-curl=http:000 connect:0.000000 ip:\nrossoctl-exit=7\n";
    // No route of the family the control used (an IPv6 control, an IPv4-only pod).
    CHECK(verdict("curl", curlLine,
                  "* connect to 192.0.2.7 port 80 failed: Network is unreachable\n") ==
          Verdict::Unproven);
    CHECK(verdict("wget", "rossoctl-exit=4\n",
                  "Connecting to 192.0.2.7:80... failed: Network is unreachable.\n") ==
          Verdict::Unproven);
    CHECK(verdict("python3", "rossoctl-connect=failed errno 101 Network is unreachable\n", "") ==
          Verdict::Unproven);
    // No free local port (the pod bound them all): curl exit 7, busybox's "can't connect".
    CHECK(verdict("curl", curlLine,
                  "* Immediate connect fail for 192.0.2.7: Cannot assign requested address\n") ==
          Verdict::Unproven);
    CHECK(verdict("wget", "rossoctl-exit=1\n",
                  "wget: can't connect to remote host (192.0.2.7): Cannot assign requested "
                  "address\n") == Verdict::Unproven);
    // The network's answers.
    CHECK(verdict("curl", curlLine,
                  "* connect to 192.0.2.7 port 80 failed: Connection refused\n") == Verdict::Pass);
    CHECK(verdict("wget", "rossoctl-exit=1\n",
                  "wget: can't connect to remote host (192.0.2.7): Connection refused\n") ==
          Verdict::Pass);
    // A tool that cannot be trusted, or a script that could not keep time: no denial.
    CHECK(verdict("curl", "rossoctl-preload=/etc/ld.so.preload\n" + curlLine,
                  "* connect to 192.0.2.7 port 80 failed: Connection refused\n") ==
          Verdict::Unproven);
    CHECK(verdict("curl",
                  "rossoctl-preload=/etc/ld.so.preload\nrossoctl-curl=http:200 "
                  "connect:0.000100 ip:192.0.2.7\nrossoctl-exit=0\n",
                  "") == Verdict::Fail);  // a connection is a fail whatever else is true
    CHECK(verdict("bash", "rossoctl-connect=timeout\nrossoctl-clock=none\nrossoctl-exit=143\n",
                  "") == Verdict::Unproven);
}

TEST_CASE("egress probe: a library preloaded by the pod's env does not answer for the tool") {
    Listener listener;  // open
    const auto target = *parseEgressTarget("http://127.0.0.1:" + std::to_string(listener.port));
    // Stands in for a proxychains-style preload whose proxy is down.
    const std::string refusing =
        "#!/bin/sh\nif [ -n \"$LD_PRELOAD$LD_LIBRARY_PATH$LD_AUDIT\" ]; then\n"
        "  echo 'rossoctl-connect=failed errno 111 Connection refused'; exit 0\nfi\n"
        "exec /usr/bin/python3 \"$@\"\n";
    auto output = runLocally(egressProbeCommand(target, "", std::chrono::milliseconds(1000)),
                             {"sh", "sleep"}, {{"python3", refusing}},
                             {"LD_PRELOAD=/nonexistent/librefuse.so", "LD_AUDIT=/nonexistent.so"});
    INFO(output.stdoutText << output.stderrText);
    CHECK(egressLive(output, target, reached()).verdict == Verdict::Fail);
}

TEST_CASE("the control connects over the address family the pod has") {
    CHECK(podAddressFamily(json::parse(R"({"status":{"podIP":"10.0.0.5"}})")) ==
          AddressFamily::IPv4);
    CHECK(podAddressFamily(json::parse(R"({"status":{"podIPs":[{"ip":"fd00::5"}]}})")) ==
          AddressFamily::IPv6);
    CHECK(podAddressFamily(
              json::parse(R"({"status":{"podIPs":[{"ip":"10.0.0.5"},{"ip":"fd00::5"}]}})")) ==
          AddressFamily::Any);
    CHECK(podAddressFamily(json::parse(R"({"status":{}})")) == AddressFamily::Any);
    Listener listener;  // IPv4 loopback only
    rossoctl::testing::FakeResolver resolver;
    resolver.addresses["dual.test"] = {"::1", "127.0.0.1"};  // IPv6 first, as RFC 6724 sorts
    auto target = *parseEgressTarget("http://dual.test:" + std::to_string(listener.port) + "/");
    target.family = AddressFamily::IPv4;
    auto v4 = connectFromHere(resolver, target, std::chrono::milliseconds(1000));
    CHECK(v4.reached);
    CHECK(v4.address == "127.0.0.1");
    target.family = AddressFamily::IPv6;  // never the IPv4 address, reached or not
    auto v6 = connectFromHere(resolver, target, std::chrono::milliseconds(1000));
    CHECK(v6.address.find('.') == std::string::npos);
    resolver.addresses["v4only.test"] = {"127.0.0.1"};
    target.host = "v4only.test";
    auto none = connectFromHere(resolver, target, std::chrono::milliseconds(1000));
    CHECK_FALSE(none.reached);
    CHECK_THAT(none.detail, Catch::Contains("has no IPv6 address"));
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
    // Attack 55 E5a: a listener answers with wget's own refusal as its status line; -S echoes
    // it indented and busybox then names it as the server's error: a connection, never a denial.
    wget.stdoutText = "rossoctl-tool=wget\nrossoctl-exit=1\n";
    wget.stderrText =
        "Connecting to 10.247.71.170:31054 (10.247.71.170:31054)\n"
        "  X wget: can't connect to remote host (10.251.0.10): Connection refused 503\n"
        "wget: server returned error: X wget: can't connect to remote host (10.251.0.10): "
        "Connection refused 503\n";
    CHECK(egressLive(wget, target, reached()).verdict == Verdict::Fail);
    CHECK(egressLive(wget, target, ControlResult{}).verdict == Verdict::Fail);

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
        CHECK(mentions(finding, "with --egress-target URL"));
        // curl that could not even resolve the name (exit 6), as on a cluster without outside DNS
        ProbeOutput unresolved;
        unresolved.stdoutText = "rossoctl-tool=curl\nrossoctl-exit=6\n";
        unresolved.stderrText = "curl: (6) Could not resolve host: example.com\n";
        auto noName = egressLive(unresolved, target, dead);
        CHECK(noName.verdict == Verdict::Unproven);
        CHECK(mentions(noName, "a dead target proves nothing"));
        CHECK(mentions(noName, "with --egress-target URL"));
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
    // A first SYN lost is resent after 1 s: its answer must still come in time.
    CHECK(probeConnectTimeout(slow) == std::chrono::milliseconds(1312));
    slow.roundTrip = std::chrono::milliseconds(80);
    CHECK(probeConnectTimeout(slow) == std::chrono::milliseconds(4500));
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
