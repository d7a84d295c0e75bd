// The connections the pod's network namespace already holds when verify looks (F2 of attack 53):
// a connection opened in the pod's first milliseconds, before the network plugin programmed its
// policy, stays allowed as long as it is open (conntrack: ESTABLISHED is accepted first).
//
// What this proves, and what not. The trusted probe shares the pod's network namespace, so
// /proc/net/tcp lists every socket of the namespace whoever holds it; it is read before the
// probe's own connections exist. A hostile agent can read the same file and close its socket
// while verify looks: for TCP that is no escape, since a closed connection cannot be reopened
// past a policy that now denies new ones. It does not prove the absence of a UDP flow the agent
// pauses (conntrack keeps a UDP entry for seconds after the socket closes, and a new socket on
// the same ports revives it), nor of a connection the agent opens after this read through a
// hole that is not a held connection (that is the other probes' business).
#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <sstream>

#include "probe_text.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

using namespace probe_text;

std::vector<std::string> heldConnectionsCommand() {
    // Only the shell's builtins: the trusted probe's image may have no cat.
    const std::string script =
        "for f in tcp tcp6 udp udp6 icmp icmp6; do\n"
        "  if [ ! -e /proc/net/$f ]; then echo rossoctl-net=$f absent; continue; fi\n"
        "  if ! exec 3</proc/net/$f; then echo rossoctl-net=$f unread; continue; fi\n"
        "  echo rossoctl-net=$f read\n"
        "  while IFS= read -r line <&3; do echo \"rossoctl-$f $line\"; done\n"
        "  exec 3<&-\n"
        "  echo rossoctl-net=$f done\n"
        "done\n"
        "echo rossoctl-net-end\n";
    return {"/bin/sh", "-c", script, kScriptName};
}

namespace {

struct Socket {
    std::string table;  // tcp, tcp6, udp, udp6, icmp, icmp6 (ping sockets)
    std::string local, remote;
    int localPort = 0, remotePort = 0;
    std::string state;
};

// "0100007F:0035" (IPv4) or 32 hex digits (IPv6), each 32-bit word in the kernel's byte order
// (little-endian here), and the port in big-endian hex.
bool parseEndpoint(const std::string& text, std::string& address, int& port) {
    const auto colon = text.find(':');
    if (colon == std::string::npos) return false;
    const std::string hex = text.substr(0, colon);
    if (hex.size() != 8 && hex.size() != 32) return false;
    unsigned char bytes[16];
    try {
        for (std::size_t word = 0; word < hex.size() / 8; ++word) {
            const auto value =
                static_cast<uint32_t>(std::stoul(hex.substr(word * 8, 8), nullptr, 16));
            for (int i = 0; i < 4; ++i)
                bytes[word * 4 + i] = static_cast<unsigned char>((value >> (8 * i)) & 0xff);
        }
        port = std::stoi(text.substr(colon + 1), nullptr, 16);
    } catch (const std::exception&) {
        return false;
    }
    char buffer[INET6_ADDRSTRLEN] = {};
    const int family = hex.size() == 8 ? AF_INET : AF_INET6;
    if (!inet_ntop(family, bytes, buffer, sizeof buffer)) return false;
    address = buffer;
    // An IPv4 peer of a dual-stack socket: judged as the IPv4 address it is.
    if (address.rfind("::ffff:", 0) == 0 && address.find('.') != std::string::npos)
        address = address.substr(7);
    return true;
}

// A socket that carries data with its peer: for TCP every state but LISTEN, SYN_SENT (an
// attempt the network may still refuse), TIME_WAIT and CLOSE; CLOSE_WAIT still sends and
// FIN_WAIT still receives (attack 54 E3). A connected UDP socket shows ESTABLISHED.
bool holdsConnection(const Socket& socket, bool udp) {
    if (socket.remotePort == 0) return false;
    if (udp) return socket.state == "01";
    static const std::set<std::string> kNotHeld = {"02", "06", "07", "0A"};
    return !kNotHeld.count(socket.state);
}

// A held TCP state other than ESTABLISHED, for evidence.
std::string stateNote(const std::string& state, bool udp) {
    static const std::map<std::string, std::string> kStates = {
        {"03", "SYN_RECV"},   {"04", "FIN_WAIT1"}, {"05", "FIN_WAIT2"},
        {"08", "CLOSE_WAIT"}, {"09", "LAST_ACK"},  {"0B", "CLOSING"}};
    const auto found = kStates.find(state);
    if (udp || found == kStates.end()) return "";
    return ", " + found->second + ": half-closed, still a channel";
}

bool isLoopbackAddress(const std::string& address) {
    return address == "::1" || address.rfind("127.", 0) == 0;
}

bool inAllowance(const std::string& address, int port, bool udp, const EgressInputs& inputs) {
    model::AddressSet one;
    try {
        one = model::AddressSet::parse(address);
    } catch (const std::exception&) {
        return false;
    }
    const auto protocol = udp ? model::Protocol::UDP : model::Protocol::TCP;
    for (const auto& [addresses, ports] : inputs.allowance.addresses)
        if (addresses.contains(one) && ports.contains(protocol, port)) return true;
    return false;
}

bool listed(const std::vector<std::string>& list, const std::string& address) {
    return std::find(list.begin(), list.end(), address) != list.end();
}

}  // namespace

Finding heldConnectionsLive(const ProbeOutput& output, const EgressInputs& inputs) {
    if (!output.started) return notStarted(output, "sh");
    // A probe cut short (its time-out, an agent starving the pod's CPU) printed part of a table:
    // the connection it did not get to may be the one that matters.
    if (output.timedOut)
        return unproven(
            "the trusted probe's reading of the pod's sockets was cut by its time-out: whether "
            "the pod already holds a connection to the outside is not known, live part unproven");
    std::map<std::string, std::string> tables;  // table -> read, absent, unread
    std::set<std::string> finished;             // tables read to their end
    bool ended = false;
    std::vector<Socket> sockets;
    std::istringstream lines(output.stdoutText);
    for (std::string line; std::getline(lines, line);) {
        if (line == "rossoctl-net-end") {
            ended = true;
            continue;
        }
        if (line.rfind("rossoctl-net=", 0) == 0) {
            std::istringstream words(line.substr(13));
            std::string table, how;
            words >> table >> how;
            if (how == "done")
                finished.insert(table);
            else
                tables[table] = how;
            continue;
        }
        if (line.rfind("rossoctl-", 0) != 0) continue;
        std::istringstream words(line.substr(9));
        Socket socket;
        std::string slot, local, remote;
        if (!(words >> socket.table >> slot >> local >> remote >> socket.state)) continue;
        if (slot == "sl") continue;  // the header
        if (!parseEndpoint(local, socket.local, socket.localPort) ||
            !parseEndpoint(remote, socket.remote, socket.remotePort))
            continue;
        sockets.push_back(socket);
    }
    if (tables["tcp"] != "read")
        return unproven(fmt::format(
            "the trusted probe could not read /proc/net/tcp ({}): whether the pod already holds "
            "a connection to the outside is not known, live part unproven",
            tables["tcp"].empty() ? "no answer" : tables["tcp"]));
    // Every table the probe opened must have been read to its end, and the script to its last
    // line: a partial reading is no proof that the missing lines held nothing.
    std::vector<std::string> read;
    for (const char* table : {"tcp", "tcp6", "udp", "udp6", "icmp", "icmp6"}) {
        const std::string how = tables[table];
        if (how == "absent") continue;
        if (how != "read" || !finished.count(table) || !ended)
            return unproven(fmt::format(
                "the trusted probe's reading of /proc/net/{} {}: whether the pod already holds "
                "a connection to the outside is not known, live part unproven",
                table,
                how == "read" ? "stopped before its end"
                : how.empty() ? "is missing"
                              : "failed (" + how + ")"));
        read.push_back(std::string("/proc/net/") + table);
    }
    // Ports something listens on: a connection on one may have come in (ingress, not egress).
    std::set<int> listening;
    for (const auto& socket : sockets) {
        const bool udp = socket.table.rfind("udp", 0) == 0;
        if ((!udp && socket.state == "0A") ||
            (udp && socket.state == "07" && socket.remotePort == 0))
            listening.insert(socket.localPort);
    }
    Finding finding;
    finding.verdict = Verdict::Pass;
    finding.probe = "sh";
    int held = 0;
    for (const auto& socket : sockets) {
        // A ping socket keeps an ICMP echo flow the node's connection tracking lets by; no
        // NetworkPolicy allows ICMP, so a connected one off loopback is a way out (attack 55 I1).
        if (socket.table.rfind("icmp", 0) == 0) {
            const bool connected =
                socket.state == "01" && socket.remote != "0.0.0.0" && socket.remote != "::";
            if (isLoopbackAddress(connected ? socket.remote : socket.local)) continue;
            if (connected) {
                finding.verdict = Verdict::Fail;
                finding.evidence.push_back(fmt::format(
                    "the pod's network namespace already held an open ICMP (ping) socket to {} "
                    "before verify's probes: an echo flow the policies do not allow",
                    socket.remote));
            } else {
                finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
                finding.evidence.push_back(
                    "the pod's network namespace holds an ICMP (ping) socket with no peer: it may "
                    "send echo requests anywhere, and a flow it opened before the policies held "
                    "is kept by the node's connection tracking; not proven");
            }
            continue;
        }
        const bool udp = socket.table.rfind("udp", 0) == 0;
        if (!holdsConnection(socket, udp)) continue;
        ++held;
        if (isLoopbackAddress(socket.remote) || socket.remote == socket.local) continue;
        const bool dns = socket.remotePort == 53 && inputs.clusterDns &&
                         listed(inputs.clusterDns->addresses, socket.remote);
        if (dns || listed(inputs.projectPodAddresses, socket.remote) ||
            inAllowance(socket.remote, socket.remotePort, udp, inputs))
            continue;
        const bool v6 = socket.remote.find(':') != std::string::npos;
        const std::string where = (v6 ? "[" + socket.remote + "]" : socket.remote) + ":" +
                                  std::to_string(socket.remotePort);
        if (listening.count(socket.localPort)) {
            finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
            finding.evidence.push_back(fmt::format(
                "the pod's network namespace holds a {} connection with {} on its listening "
                "port {}: it may have come in, or the pod opened it from that port; not proven",
                udp ? "UDP" : "TCP", where, socket.localPort));
            continue;
        }
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(fmt::format(
            "the pod's network namespace already held an open {} connection to {} (from port "
            "{}{}) before verify's probes: a connection the policies do not allow, opened before "
            "they were enforced or around them",
            udp ? "UDP" : "TCP", where, socket.localPort, stateNote(socket.state, udp)));
    }
    // A listener off loopback is a way in past the policies: the node, and so every host-network
    // pod, may connect into any pod (node traffic is let in for the kubelet's probes), and a
    // connection in carries data out as well as in (attack 56 N2).
    std::set<std::pair<std::string, int>> listeners;
    for (const auto& socket : sockets) {
        if (socket.table.rfind("tcp", 0) != 0 || socket.state != "0A") continue;
        if (isLoopbackAddress(socket.local)) continue;
        if (!listeners.insert({socket.local, socket.localPort}).second) continue;
        const bool any = socket.local == "0.0.0.0" || socket.local == "::";
        finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
        finding.evidence.push_back(fmt::format(
            "the pod listens on TCP port {}{}: the node and every host-network pod connect into a "
            "pod past its NetworkPolicies, and a connection in carries the pod's data out; not "
            "proven (listen on 127.0.0.1 only, or not at all)",
            socket.localPort, any ? " on every address" : " at " + socket.local));
    }
    // An unconnected UDP socket sends anywhere with sendto: a flow it opened before the policy
    // held lives on in the node's connection tracking, and its peer is in no table here.
    for (const auto& socket : sockets) {
        const bool udp = socket.table.rfind("udp", 0) == 0;
        if (!udp || socket.remotePort != 0 || isLoopbackAddress(socket.local)) continue;
        finding.verdict = worstOf(finding.verdict, Verdict::Unproven);
        finding.evidence.push_back(fmt::format(
            "the pod's network namespace holds a UDP socket on port {} with no peer: it may send "
            "to any address, and a flow it opened before the policies held is kept by the "
            "node's connection tracking, which the pod's tables do not show; not proven",
            socket.localPort));
    }
    if (finding.verdict == Verdict::Pass)
        finding.evidence.push_back(fmt::format(
            "the trusted probe read the namespace's sockets ({}): {} held connection{}, none to a "
            "destination the project does not allow",
            fmt::join(read, ", "), held, held == 1 ? "" : "s"));
    return finding;
}

namespace {

// One connect attempt from the trusted probe to something that listens (what: "the API server
// (...)", "a host-network listener (...)"): a connection is a fail, a refusal or time-out says
// nothing more than the target probe does, anything else is unproven.
Finding listenerReachLive(const ProbeOutput& output, const std::string& address, int port,
                          const std::string& what) {
    EgressTarget target;
    const bool v6 = address.find(':') != std::string::npos;
    // Plain HTTP to its TLS port: the API server answers 400, which every tool (busybox wget
    // too, whose TLS failure says nothing of the connection) reads as connected.
    target.scheme = "http";
    target.host = address;
    target.port = port;
    target.url = fmt::format("http://{}:{}/", v6 ? "[" + address + "]" : address, port);
    const Finding reading = egressLive(output, target, ControlResult{});
    Finding finding;
    finding.probe = reading.probe;
    if (reading.verdict == Verdict::Fail) {
        finding.verdict = Verdict::Fail;
        for (const auto& line : reading.evidence)
            finding.evidence.push_back(
                fmt::format("{} at {}: {}; the policies do not allow it", what, target.url, line));
        return finding;
    }
    // A reading that is neither a connection nor a refusal or time-out proves nothing.
    if (reading.evidence.empty() ||
        reading.evidence.back().find("could not connect") == std::string::npos) {
        finding.verdict = Verdict::Unproven;
        finding.evidence.push_back(
            fmt::format("whether {} at {} accepted a connection is not known: {}", what, target.url,
                        reading.evidence.empty() ? "no reading" : reading.evidence.back()));
        return finding;
    }
    // No connection: nothing to prove here (the target probe proves denial); said, not judged.
    finding.verdict = Verdict::Pass;
    finding.evidence.push_back(fmt::format("no connection to {} at {}", what, target.url));
    return finding;
}

}  // namespace

Finding apiServerReachLive(const ProbeOutput& output, const std::string& address, int port,
                           const std::string& what) {
    return listenerReachLive(output, address, port, fmt::format("the API server ({})", what));
}

Finding hostListenerReachLive(const ProbeOutput& output, const std::string& address, int port,
                              const std::string& owner) {
    return listenerReachLive(output, address, port,
                             fmt::format("a host-network listener ({}) on the node", owner));
}

}  // namespace rossoctl::verify
