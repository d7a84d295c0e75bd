#pragma once
// pods/portforward over WebSocket, one WebSocket per forwarded TCP connection: the apiserver
// passes a plain WebSocket upgrade through to the kubelet, whose streaming server speaks the
// channel protocol (v4.channel.k8s.io): per port a data channel (0) and an error channel (1),
// each opening with the port number (two bytes, little-endian), then the bytes themselves.
#include <chrono>
#include <cstdint>
#include <string>

#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::kube {

struct PortForwardRequest {
    std::string namespaceName;
    std::string pod;
    uint16_t port = 0;  // in the pod, 1-65535
};

// What one connection may make rossoctl hold: the pod's side writes all of it.
struct PortForwardLimits {
    // The kubelet sends data in frames of 32 KiB; a larger one is refused, not buffered.
    size_t maxFrameBytes = 1024 * 1024;
    // Of the error channel: kept up to this, the rest dropped.
    size_t maxErrorBytes = 4 * 1024;
    // Of the error text shown, after scrubbing.
    size_t maxErrorShown = 300;
    // Bytes read from the local socket per frame sent.
    size_t chunkBytes = 32 * 1024;
    // How often a blocked read or write looks at the stop flag.
    std::chrono::milliseconds slice{200};
};

struct PortForwardResult {
    uint64_t bytesToPod = 0;
    uint64_t bytesFromPod = 0;
    // What the error channel said (nothing listening on the port, say): scrubbed and bounded,
    // control characters made spaces; empty when it said nothing.
    std::string error;
    bool stopped = false;  // `stop` ended it, not either side
};

// Upgrades to pods/NAME/portforward?ports=PORT and relays bytes between the stream and the
// connected local `socket` until either side closes, or `stop` (Ctrl-C, the pod gone) is set.
// Each direction waits for the other end to take what it has before reading more, so a slow
// reader on either side holds at most a frame in memory. Throws ApiError when the upgrade is
// refused (the pod is gone: 404; forbidden: 403), Error when the handshake or a frame is not
// the protocol's, TransportError when the connection breaks; the socket is not closed here.
PortForwardResult forwardConnection(Client& client, const PortForwardRequest& request, int socket,
                                    const CancelFlag* stop, const PortForwardLimits& limits = {});

}  // namespace rossoctl::kube
