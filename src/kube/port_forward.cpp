// pods/portforward over WebSocket (v4.channel.k8s.io), one stream per TCP connection. The
// kubelet's streaming server writes each channel's port first, then data on channel 0 and, when
// forwarding fails, a message on channel 1; it closes the WebSocket when the pod's side ends.
#include "rossoctl/kube/port_forward.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/websocket.hpp"

namespace rossoctl::kube {
namespace {

constexpr const char* kPortForwardProtocolV4 = "v4.channel.k8s.io";
constexpr int kDataChannel = 0;
constexpr int kErrorChannel = 1;
constexpr size_t kPortPrefixBytes = 2;

bool stopRequested(const CancelFlag* stop) {
    return stop && stop->cancelled();
}

// What the last frame (Close, once the forward is over) may wait for the server to take it.
constexpr int kLastFrameSlices = 5;

// Frames go out whole: the pump thread (data) and the reader (pongs, close) both write. A frame
// waits for the server to take it as long as the forward lives (back-pressure holds only this
// connection's pump), but in slices: once the forward is over or stopped (Ctrl-C, the pod gone)
// a server that stopped reading holds it no longer (TransportError Cancelled).
class ForwardFrameWriter {
  public:
    ForwardFrameWriter(UpgradedConnection& connection, Random& random, const CancelFlag* stop,
                       const std::atomic<bool>& done, std::chrono::milliseconds slice)
        : connection_(connection), random_(random), stop_(stop), done_(done), slice_(slice) {}
    void send(WsOpcode opcode, std::string_view payload) {
        sendWhile(opcode, payload, [&] { return !done_.load() && !stopRequested(stop_); });
    }
    // The Close that ends a forward: a few slices, then given up.
    void sendLast(WsOpcode opcode, std::string_view payload) {
        int slices = 0;
        sendWhile(opcode, payload, [&] { return slices++ < kLastFrameSlices; });
    }

  private:
    void sendWhile(WsOpcode opcode, std::string_view payload,
                   const std::function<bool()>& mayWait) {
        std::lock_guard lock(mutex_);
        const std::string frame = encodeWsFrame(opcode, payload, random_.next());
        for (std::string_view left = frame; !left.empty();) {
            if (!mayWait())
                throw TransportError(TransportError::Kind::Cancelled,
                                     "port-forward: the forward ended before the server read "
                                     "what was sent to it");
            left.remove_prefix(connection_.write(left, slice_));
        }
    }

    UpgradedConnection& connection_;
    Random& random_;
    const CancelFlag* stop_;
    const std::atomic<bool>& done_;
    const std::chrono::milliseconds slice_;
    std::mutex mutex_;
};

std::unique_ptr<UpgradedConnection> openStream(Client& client, const PortForwardRequest& request) {
    const std::string path =
        objectPath(resources::pods(), request.namespaceName, request.pod, "portforward") +
        "?ports=" + std::to_string(request.port);
    std::string nonce(16, '\0');
    for (auto& byte : nonce) byte = static_cast<char>(client.random().next() & 0xFF);
    const std::string key = base64Encode(nonce);
    auto connection = client.upgrade(path, {{"Connection", "Upgrade"},
                                            {"Upgrade", "websocket"},
                                            {"Sec-WebSocket-Version", "13"},
                                            {"Sec-WebSocket-Key", key},
                                            {"Sec-WebSocket-Protocol", kPortForwardProtocolV4}});
    const HttpResponse& handshake = connection->handshake();
    if (handshake.status != 101)
        throw Error(
            fmt::format("port-forward: the server answered {} instead of switching "
                        "protocols",
                        handshake.status));
    if (handshake.header("sec-websocket-accept") != wsAcceptFor(key))
        throw Error("port-forward: the server's WebSocket handshake does not match the request");
    // The kubelet's server also takes a request naming no protocol, with the same framing.
    const std::string protocol = handshake.header("sec-websocket-protocol");
    if (!protocol.empty() && protocol != kPortForwardProtocolV4)
        throw Error("port-forward: the server speaks no supported stream protocol (" +
                    boundedServerMessage(protocol, 60) + ")");
    return connection;
}

// Writes all of `bytes` to the local socket, waiting while its reader is slow. False when the
// local side is gone or `stop` was set first.
bool writeLocal(int socket, std::string_view bytes, const CancelFlag* stop,
                const std::atomic<bool>& done, std::chrono::milliseconds slice) {
    while (!bytes.empty()) {
        if (stopRequested(stop) || done.load()) return false;
        const ssize_t n = ::send(socket, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n > 0) {
            bytes.remove_prefix(static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd ready{socket, POLLOUT, 0};
            ::poll(&ready, 1, static_cast<int>(slice.count()));
            continue;
        }
        return false;  // EPIPE, ECONNRESET: the local client went away
    }
    return true;
}

// One direction, local socket to pod, on its own thread: a chunk read is sent (and the write
// waits for the connection to take it) before the next is read.
class LocalPump {
  public:
    LocalPump(int socket, ForwardFrameWriter& writer, const CancelFlag* stop,
              const PortForwardLimits& limits, std::atomic<bool>& done)
        : socket_(socket), writer_(writer), stop_(stop), limits_(limits), done_(done) {
        thread_ = std::thread([this] { pump(); });
    }
    ~LocalPump() { join(); }
    LocalPump(const LocalPump&) = delete;
    LocalPump& operator=(const LocalPump&) = delete;

    void join() {
        if (thread_.joinable()) thread_.join();
    }
    uint64_t bytes() const { return bytes_.load(); }
    // The local side reset or closed with an error: nothing more goes either way.
    bool localGone() const { return localGone_.load(); }
    std::exception_ptr failure() const { return failure_; }

  private:
    void pump() {
        try {
            std::string chunk(limits_.chunkBytes + 1, '\0');
            chunk[0] = static_cast<char>(kDataChannel);
            while (!done_.load() && !stopRequested(stop_)) {
                pollfd ready{socket_, POLLIN, 0};
                const int polled = ::poll(&ready, 1, static_cast<int>(limits_.slice.count()));
                if (polled <= 0) continue;
                const ssize_t n = ::recv(socket_, chunk.data() + 1, limits_.chunkBytes, 0);
                if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
                if (n < 0) {
                    localGone_.store(true);
                    done_.store(true);
                    return;
                }
                // The channel protocol has no half-close: after the client's EOF the pod's
                // answer still flows until the pod's side ends the stream.
                if (n == 0) return;
                writer_.send(WsOpcode::Binary,
                             std::string_view(chunk.data(), static_cast<size_t>(n) + 1));
                bytes_ += static_cast<uint64_t>(n);
            }
        } catch (...) {
            failure_ = std::current_exception();
            done_.store(true);
        }
    }

    int socket_;
    ForwardFrameWriter& writer_;
    const CancelFlag* stop_;
    const PortForwardLimits& limits_;
    std::atomic<bool>& done_;
    std::atomic<uint64_t> bytes_{0};
    std::atomic<bool> localGone_{false};
    std::exception_ptr failure_;
    std::thread thread_;
};

// The other direction and the protocol: channel prefixes checked, data written to the local
// socket, the error channel kept within its bound.
class StreamReader {
  public:
    StreamReader(const PortForwardRequest& request, int socket, ForwardFrameWriter& writer,
                 const CancelFlag* stop, const PortForwardLimits& limits, std::atomic<bool>& done)
        : request_(request),
          socket_(socket),
          writer_(writer),
          stop_(stop),
          limits_(limits),
          done_(done) {}

    // False once the stream is over (closed by the server, or the local side gone).
    bool handle(const WsFrame& frame) {
        std::string_view payload = frame.payload;
        if (frame.opcode == WsOpcode::Ping) {
            writer_.send(WsOpcode::Pong, payload);
            return true;
        }
        if (frame.opcode == WsOpcode::Pong) return true;
        if (frame.opcode == WsOpcode::Close) {
            try {
                writer_.sendLast(WsOpcode::Close, payload.substr(0, 2));
            } catch (const TransportError&) {
            }
            return false;
        }
        if (frame.opcode != WsOpcode::Continuation) {
            if (payload.empty()) return true;
            channel_ = static_cast<unsigned char>(payload[0]);
            payload.remove_prefix(1);
        }
        if (channel_ != kDataChannel && channel_ != kErrorChannel) return true;  // none of ours
        payload = takePortPrefix(channel_, payload);
        if (payload.empty()) return true;
        if (channel_ == kErrorChannel) {
            const size_t room =
                limits_.maxErrorBytes - std::min(limits_.maxErrorBytes, errorText_.size());
            errorText_.append(payload.substr(0, room));
            return true;
        }
        if (!writeLocal(socket_, payload, stop_, done_, limits_.slice)) {
            localGone_ = !stopRequested(stop_);
            return false;
        }
        bytesFromPod_ += payload.size();
        return true;
    }

    const std::string& errorText() const { return errorText_; }
    uint64_t bytesFromPod() const { return bytesFromPod_; }
    bool localGone() const { return localGone_; }

  private:
    // Each channel opens with the port it carries; one that names another port is not ours.
    std::string_view takePortPrefix(int channel, std::string_view payload) {
        auto& prefix = prefixes_[static_cast<size_t>(channel)];
        while (prefix.size() < kPortPrefixBytes && !payload.empty()) {
            prefix.push_back(payload.front());
            payload.remove_prefix(1);
            if (prefix.size() < kPortPrefixBytes) continue;
            const unsigned port =
                static_cast<unsigned char>(prefix[0]) |
                (static_cast<unsigned>(static_cast<unsigned char>(prefix[1])) << 8);
            if (port != request_.port)
                throw Error(
                    fmt::format("port-forward: the server opened a stream for port {}, "
                                "not {}",
                                port, request_.port));
        }
        if (prefix.size() < kPortPrefixBytes) return {};
        return payload;
    }

    const PortForwardRequest& request_;
    int socket_;
    ForwardFrameWriter& writer_;
    const CancelFlag* stop_;
    const PortForwardLimits& limits_;
    std::atomic<bool>& done_;
    int channel_ = -1;  // of the message being reassembled from fragments
    std::array<std::string, 2> prefixes_;
    std::string errorText_;
    uint64_t bytesFromPod_ = 0;
    bool localGone_ = false;
};

}  // namespace

PortForwardResult forwardConnection(Client& client, const PortForwardRequest& request, int socket,
                                    const CancelFlag* stop, const PortForwardLimits& limits) {
    auto connection = openStream(client, request);
    // Non-blocking, so a local client that stops reading cannot keep Ctrl-C from ending it.
    const int flags = ::fcntl(socket, F_GETFL, 0);
    if (flags >= 0) ::fcntl(socket, F_SETFL, flags | O_NONBLOCK);

    PortForwardResult result;
    std::atomic<bool> done{false};
    ForwardFrameWriter writer(*connection, client.random(), stop, done, limits.slice);
    StreamReader reader(request, socket, writer, stop, limits, done);
    WsFrameParser parser(limits.maxFrameBytes);
    std::exception_ptr failure;
    bool serverEnded = false;  // the server closed the stream: the usual end
    {
        LocalPump pump(socket, writer, stop, limits, done);
        std::vector<char> buffer(64 * 1024);
        try {
            for (bool open = true; open && !done.load();) {
                if (stopRequested(stop)) {
                    result.stopped = true;
                    break;
                }
                size_t n = 0;
                try {
                    n = connection->read(buffer.data(), buffer.size(), limits.slice);
                } catch (const TransportError& error) {
                    if (error.kind() == TransportError::Kind::Timeout) continue;
                    if (error.kind() != TransportError::Kind::Cancelled) throw;
                    result.stopped = true;
                    break;
                }
                if (n == 0) {  // the server closed the connection
                    serverEnded = true;
                    break;
                }
                parser.feed(std::string_view(buffer.data(), n));
                while (auto frame = parser.next())
                    if (!reader.handle(*frame)) {
                        serverEnded = !reader.localGone();
                        open = false;
                        break;
                    }
            }
        } catch (...) {
            failure = std::current_exception();
        }
        done.store(true);
        pump.join();
        result.bytesToPod = pump.bytes();
        // A send that failed because the stream had ended (or Ctrl-C) is no failure of its own.
        if (!failure && !serverEnded && !result.stopped && !stopRequested(stop) &&
            !pump.localGone())
            failure = pump.failure();
        // Ended from this side: say so to the server, which then stops dialing the pod's port.
        if (result.stopped || pump.localGone() || reader.localGone()) {
            try {
                writer.sendLast(WsOpcode::Close, std::string("\x03\xe8", 2));  // 1000: normal
            } catch (const std::exception&) {
            }
        }
    }
    if (failure) std::rethrow_exception(failure);
    result.bytesFromPod = reader.bytesFromPod();
    if (!reader.errorText().empty())
        result.error = boundedServerMessage(reader.errorText(), limits.maxErrorShown);
    return result;
}

}  // namespace rossoctl::kube
