#pragma once
// `sandbox port-forward`: listeners on local addresses, one pods/portforward stream per
// accepted connection, and a watch on the pod that ends it all when the pod goes away.
#include <cstdint>
#include <string>
#include <vector>

#include "rossoctl/app/context.hpp"
#include "rossoctl/kube/port_forward.hpp"

namespace rossoctl::app {

// [LOCAL:]REMOTE as kubectl spells it; local 0 is any free port.
struct PortMapping {
    uint16_t local = 0;
    uint16_t remote = 0;
};

// "8080" (8080 -> 8080), "9000:80", ":80" and "0:80" (a free port -> 80). Throws UsageError.
PortMapping parsePortMapping(const std::string& spec);

// An address to listen on; an optional one is skipped when the machine lacks it (::1 for
// "localhost" on a host without IPv6).
struct ListenAddress {
    std::string ip;  // numeric, IPv4 or IPv6
    bool optional = false;
};

// --address values, each a comma-separated list of IP addresses or "localhost" (127.0.0.1
// and ::1). Throws UsageError for anything else: a name here would need DNS to pick.
std::vector<ListenAddress> parseListenAddresses(const std::vector<std::string>& values);

struct PortForwardPlan {
    std::string namespaceName;
    std::string pod;
    std::string podUid;  // a pod of the same name with another UID is a replacement: it ends
    std::vector<PortMapping> ports;
    std::vector<ListenAddress> addresses;
    bool logConnections = false;  // a line on stderr per connection (-v)
    // Connections at once: each holds at most a frame or so (the limits below), so this bounds
    // what local clients can make rossoctl hold.
    size_t maxConnections = 64;
    kube::PortForwardLimits limits;
};

// Listens (printing "Forwarding from 127.0.0.1:PORT -> REMOTE" per listener on stdout) and
// forwards until Ctrl-C, then returns. Throws Error (exit 1) when a port cannot be listened on
// and "lost connection to pod" when the pod is deleted, replaced or finishes.
void portForward(Context& context, const PortForwardPlan& plan);

}  // namespace rossoctl::app
