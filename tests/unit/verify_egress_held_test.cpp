// Attack 53: the egress boundary's two false passes, judged from the trusted probe's readings.
// F2: a connection the pod opened before its policy was programmed and still holds; F1: the
// API server answering a default-deny pod through a node port the network plugin lets by.
#include <catch2/catch.hpp>

#include "rossoctl/verify/checks.hpp"

using namespace rossoctl;
using namespace rossoctl::verify;

namespace {

ProbeOutput ran(const std::string& out, const std::string& err = "", int exitCode = 0) {
    ProbeOutput output;
    output.started = true;
    output.stdoutText = out;
    output.stderrText = err;
    output.exitCode = exitCode;
    return output;
}

const std::string kHeader =
    "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
    "timeout inode";

// /proc/net/tcp as the probe prints it, with lines (already "sl local remote st ...").
std::string tables(const std::vector<std::string>& tcp, const std::vector<std::string>& udp = {},
                   const std::string& tcpHow = "read",
                   const std::string& icmp = "rossoctl-net=icmp absent\n") {
    std::string out = "rossoctl-net=tcp " + tcpHow + "\n";
    if (tcpHow == "read") {
        out += "rossoctl-tcp " + kHeader + "\n";
        for (const auto& line : tcp) out += "rossoctl-tcp " + line + "\n";
        out += "rossoctl-net=tcp done\n";
    }
    out += "rossoctl-net=tcp6 absent\nrossoctl-net=udp read\nrossoctl-udp " + kHeader + "\n";
    for (const auto& line : udp) out += "rossoctl-udp " + line + "\n";
    return out + "rossoctl-net=udp done\nrossoctl-net=udp6 absent\n" + icmp +
           "rossoctl-net=icmp6 absent\nrossoctl-net-end\n";
}

// 10.250.0.89:38596 -> 10.251.0.10:80, ESTABLISHED: early-1 of the attack.
const std::string kEarly =
    "0: 5900FA0A:96C4 0A00FB0A:0050 01 00000000:00000000 00:00000000 00000000 65532 0 4242";

EgressInputs project() {
    EgressInputs inputs;
    ClusterDns dns;
    dns.addresses = {"10.96.0.10", "10.250.0.5"};
    inputs.clusterDns = dns;
    inputs.projectPodAddresses = {"10.250.0.40"};
    return inputs;
}

}  // namespace

TEST_CASE("attack 53 F2: a connection to the outside the pod already holds fails egress",
          "[verify][egress][attack53]") {
    const Finding finding = heldConnectionsLive(ran(tables({kEarly})), project());
    CHECK(finding.verdict == Verdict::Fail);
    REQUIRE(finding.evidence.size() == 1);
    CHECK_THAT(finding.evidence[0], Catch::Contains("10.251.0.10:80") &&
                                        Catch::Contains("already held an open TCP connection"));
}

TEST_CASE("attack 53 F2: held connections the project allows, loopback and listening sockets",
          "[verify][egress][attack53]") {
    SECTION("loopback, the cluster DNS on 53, a pod of the project, the pod itself: pass") {
        const Finding finding = heldConnectionsLive(
            ran(tables({"0: 0100007F:1F90 0100007F:A000 01 0 0 0 0 0 1",
                        "1: 5900FA0A:9000 2800FA0A:1F90 01 0 0 0 0 0 2",     // 10.250.0.40:8080
                        "2: 5900FA0A:9001 5900FA0A:1F90 01 0 0 0 0 0 3",     // itself
                        "3: 5900FA0A:9002 0A00FB0A:0050 06 0 0 0 0 0 4"},    // TIME_WAIT: not held
                       {"0: 5900FA0A:C000 0A00600A:0035 01 0 0 0 0 0 5"})),  // 10.96.0.10:53
            project());
        CHECK(finding.verdict == Verdict::Pass);
        CHECK_THAT(finding.evidence.at(0), Catch::Contains("4 held connections, none"));
    }
    SECTION("a connected UDP socket to the outside fails too") {
        const Finding finding = heldConnectionsLive(
            ran(tables({}, {"0: 5900FA0A:C000 0A00FB0A:0035 01 0 0 0 0 0 5"})), project());
        CHECK(finding.verdict == Verdict::Fail);
        CHECK_THAT(finding.evidence.at(0), Catch::Contains("UDP connection to 10.251.0.10:53"));
    }
    SECTION("an IPv6 and an IPv4-mapped remote are decoded") {
        std::string out = tables({});
        out.replace(out.find("rossoctl-net=tcp6 absent\n"), 25,
                    "rossoctl-net=tcp6 read\nrossoctl-tcp6 " + kHeader +
                        "\nrossoctl-tcp6 0: 00000000000000000000000001000000:1F90 "
                        "B80D0120000000000000000001000000:01BB 01 0 0 0 0 0 6\n"
                        "rossoctl-tcp6 1: 00000000000000000000000001000000:1F91 "
                        "0000000000000000FFFF00000A00FB0A:0050 01 0 0 0 0 0 7\n"
                        "rossoctl-net=tcp6 done\n");
        const Finding finding = heldConnectionsLive(ran(out), project());
        CHECK(finding.verdict == Verdict::Fail);
        CHECK_THAT(finding.evidence.at(0), Catch::Contains("[2001:db8::1]:443"));
        CHECK_THAT(finding.evidence.at(1), Catch::Contains("10.251.0.10:80"));
    }
    SECTION("a connection on a listening port may have come in: unproven, never pass") {
        const Finding finding =
            heldConnectionsLive(ran(tables({"0: 00000000:1F90 00000000:0000 0A 0 0 0 0 0 1",
                                            "1: 5900FA0A:1F90 0A00FB0A:D000 01 0 0 0 0 0 2"})),
                                project());
        CHECK(finding.verdict == Verdict::Unproven);
        CHECK_THAT(finding.evidence.at(0), Catch::Contains("listening port 8080"));
    }
    SECTION("attack 56 N2: a listener off loopback lets the node connect in: unproven") {
        // listen-2's agent: nc -l on 0.0.0.0:8080, nothing connected yet.
        const Finding any = heldConnectionsLive(
            ran(tables({"0: 00000000:1F90 00000000:0000 0A 0 0 0 0 0 1"})), project());
        CHECK(any.verdict == Verdict::Unproven);
        REQUIRE(any.evidence.size() == 1);
        CHECK_THAT(any.evidence[0], Catch::Contains("listens on TCP port 8080 on every address") &&
                                        Catch::Contains("host-network pod"));
        // Bound to the pod's own address: the same way in.
        const Finding own = heldConnectionsLive(
            ran(tables({"0: 5900FA0A:1F90 00000000:0000 0A 0 0 0 0 0 1"})), project());
        CHECK(own.verdict == Verdict::Unproven);
        CHECK_THAT(own.evidence.at(0), Catch::Contains("port 8080 at 10.250.0.89"));
        // Loopback only: nothing outside the pod reaches it.
        CHECK(heldConnectionsLive(ran(tables({"0: 0100007F:1F90 00000000:0000 0A 0 0 0 0 0 1"})),
                                  project())
                  .verdict == Verdict::Pass);
    }
    SECTION("attack 54 E2: a UDP socket with no peer may carry a flow from before the policy") {
        // udpct-1's socket between datagrams, had it kept one: 0.0.0.0:40000, no remote.
        const Finding finding = heldConnectionsLive(
            ran(tables({}, {"0: 00000000:9C40 00000000:0000 07 0 0 0 0 0 5"})), project());
        CHECK(finding.verdict == Verdict::Unproven);
        CHECK_THAT(finding.evidence.at(0),
                   Catch::Contains("UDP socket on port 40000 with no peer") &&
                       Catch::Contains("connection tracking"));
        // One bound to loopback reaches nothing outside.
        CHECK(heldConnectionsLive(
                  ran(tables({}, {"0: 0100007F:9C40 00000000:0000 07 0 0 0 0 0 5"})), project())
                  .verdict == Verdict::Pass);
    }
    SECTION("attack 55 I1: a ping socket is a flow of its own") {
        const auto icmp = [](const std::string& socket) {
            return "rossoctl-net=icmp read\nrossoctl-icmp " + kHeader + "\nrossoctl-icmp " +
                   socket + "\nrossoctl-net=icmp done\n";
        };
        // Connected to 10.251.0.10 (an echo flow from the first milliseconds): fail.
        const Finding connected = heldConnectionsLive(
            ran(tables({}, {}, "read", icmp("0: 5900FA0A:0007 0A00FB0A:0000 01 0 0 0 0 0 9"))),
            project());
        CHECK(connected.verdict == Verdict::Fail);
        CHECK_THAT(connected.evidence.at(0), Catch::Contains("ICMP (ping) socket to 10.251.0.10"));
        // No peer: it may send anywhere: unproven.
        const Finding unconnected = heldConnectionsLive(
            ran(tables({}, {}, "read", icmp("0: 00000000:0007 00000000:0000 07 0 0 0 0 0 9"))),
            project());
        CHECK(unconnected.verdict == Verdict::Unproven);
        // The table not read to its end is unproven, as every other.
        CHECK(
            heldConnectionsLive(ran(tables({}, {}, "read", "rossoctl-net=icmp read\n")), project())
                .verdict == Verdict::Unproven);
    }
    SECTION("the project's allowance holds the remote: pass") {
        EgressInputs inputs = project();
        inputs.allowance.addresses.push_back(
            {model::AddressSet::parse("10.251.0.0/24"), model::PortSet::all()});
        CHECK(heldConnectionsLive(ran(tables({kEarly})), inputs).verdict == Verdict::Pass);
    }
}

TEST_CASE("attack 53 F2: sockets that could not be read leave egress unproven",
          "[verify][egress][attack53]") {
    CHECK(heldConnectionsLive(ran(tables({}, {}, "unread")), project()).verdict ==
          Verdict::Unproven);
    CHECK(heldConnectionsLive(ran(""), project()).verdict == Verdict::Unproven);
    ProbeOutput failed;
    failed.started = false;
    CHECK(heldConnectionsLive(failed, project()).verdict == Verdict::Unproven);
    // Only the shell: the probe's image may have nothing else.
    const auto command = heldConnectionsCommand();
    CHECK(command.at(0) == "/bin/sh");
    CHECK_THAT(command.at(2), Catch::Contains("/proc/net/$f") && !Catch::Contains("cat "));
}

TEST_CASE("a reading of the sockets cut short is unproven, never pass",
          "[verify][egress][attack53]") {
    // The agent starves the pod's CPU: the probe prints the table's first lines, not the one
    // holding its connection, before its time-out.
    ProbeOutput cut = ran("rossoctl-net=tcp read\nrossoctl-tcp " + kHeader +
                          "\nrossoctl-tcp 0: 0100007F:1F90 0100007F:A000 01 0 0 0 0 0 1\n");
    CHECK(heldConnectionsLive(cut, project()).verdict == Verdict::Unproven);
    cut.timedOut = true;
    const Finding timedOut = heldConnectionsLive(cut, project());
    CHECK(timedOut.verdict == Verdict::Unproven);
    CHECK_THAT(timedOut.evidence.at(0), Catch::Contains("time-out"));
    SECTION("a whole reading that timed out at its last line is still unproven") {
        ProbeOutput whole = ran(tables({}));
        whole.timedOut = true;
        CHECK(heldConnectionsLive(whole, project()).verdict == Verdict::Unproven);
    }
    SECTION("every table read to its end, and the script's last line, are required") {
        std::string out = tables({});
        out.erase(out.find("rossoctl-net=udp done\n"), 22);
        const Finding partial = heldConnectionsLive(ran(out), project());
        CHECK(partial.verdict == Verdict::Unproven);
        CHECK_THAT(partial.evidence.at(0), Catch::Contains("/proc/net/udp stopped before its end"));
        std::string noEnd = tables({});
        noEnd.erase(noEnd.find("rossoctl-net-end\n"));
        CHECK(heldConnectionsLive(ran(noEnd), project()).verdict == Verdict::Unproven);
    }
    SECTION("a table present but unread") {
        std::string out = tables({});
        out.replace(out.find("rossoctl-net=udp6 absent"), 24, "rossoctl-net=udp6 unread");
        CHECK(heldConnectionsLive(ran(out), project()).verdict == Verdict::Unproven);
    }
    CHECK_THAT(heldConnectionsCommand().at(2),
               Catch::Contains("done") && Catch::Contains("rossoctl-net-end"));
}

TEST_CASE("attack 53 F1: a connection to the API server fails egress, naming the address",
          "[verify][egress][attack53]") {
    const Finding reached = apiServerReachLive(
        ran("rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.001 ip:10.247.71.170\n"
            "rossoctl-exit=60\n"),
        "10.247.71.170", 31915, "an endpoint");
    CHECK(reached.verdict == Verdict::Fail);
    CHECK_THAT(reached.evidence.at(0),
               Catch::Contains("http://10.247.71.170:31915/") && Catch::Contains("API server"));
    const Finding refused = apiServerReachLive(
        ran("rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.000000 ip:\nrossoctl-exit=7\n",
            "curl: (7) Failed to connect to 10.96.0.1: Connection refused\n"),
        "10.96.0.1", 443, "the kubernetes Service");
    // Not reaching it proves nothing alone: the target probe proves denial. Never a fail.
    CHECK(refused.verdict == Verdict::Pass);
    CHECK_THAT(refused.evidence.at(0), Catch::Contains("no connection to the API server"));
    // Busybox wget's answer that is neither: unproven, never pass.
    const Finding unclear = apiServerReachLive(
        ran("rossoctl-tool=wget\nrossoctl-exit=1\n", "wget: error getting response\n"), "10.96.0.1",
        443, "the kubernetes Service");
    CHECK(unclear.verdict == Verdict::Unproven);
}

TEST_CASE("attack 54 E5: a host-network pod's port the pod reaches fails egress, naming the pod",
          "[verify][egress][attack54]") {
    const Finding reached = hostListenerReachLive(
        ran("rossoctl-tool=curl\nrossoctl-curl=http:404 connect:0.001 ip:10.247.71.170\n"
            "rossoctl-exit=0\n"),
        "10.247.71.170", 31054, "pod atk-54-relay/hostrelay");
    CHECK(reached.verdict == Verdict::Fail);
    CHECK_THAT(reached.evidence.at(0),
               Catch::Contains("a host-network listener (pod atk-54-relay/hostrelay) on the node "
                               "at http://10.247.71.170:31054/") &&
                   Catch::Contains("the policies do not allow it"));
    const Finding refused = hostListenerReachLive(
        ran("rossoctl-tool=curl\nrossoctl-curl=http:000 connect:0.000000 ip:\nrossoctl-exit=7\n",
            "curl: (7) Failed to connect to 10.247.71.170: Connection refused\n"),
        "10.247.71.170", 31054, "pod atk-54-relay/hostrelay");
    CHECK(refused.verdict == Verdict::Pass);
    CHECK_THAT(refused.evidence.at(0), Catch::Contains("no connection to a host-network listener"));
}

TEST_CASE("attack 54 E3: a held TCP connection half-closed by its peer still fails egress",
          "[verify][egress][attack54]") {
    // halfb-1: the peer shut its side at once; the pod's socket is CLOSE_WAIT and still sends.
    const std::string closeWait =
        "0: 2600FA0A:BA36 0A00FB0A:0050 08 00000000:00000000 00:00000000 00000000 65532 0 77";
    const Finding finding = heldConnectionsLive(ran(tables({closeWait})), project());
    CHECK(finding.verdict == Verdict::Fail);
    CHECK_THAT(finding.evidence.at(0),
               Catch::Contains("10.251.0.10:80") && Catch::Contains("CLOSE_WAIT"));
    for (const char* state : {"03", "04", "05", "09", "0B"}) {
        std::string line = closeWait;
        line.replace(line.find(" 08 "), 4, std::string(" ") + state + " ");
        CHECK(heldConnectionsLive(ran(tables({line})), project()).verdict == Verdict::Fail);
    }
    // A SYN still waiting, a TIME_WAIT and a closed socket carry nothing.
    for (const char* state : {"02", "06", "07"}) {
        std::string line = closeWait;
        line.replace(line.find(" 08 "), 4, std::string(" ") + state + " ");
        CHECK(heldConnectionsLive(ran(tables({line})), project()).verdict == Verdict::Pass);
    }
}
