#pragma once
// A kubelet's pods/portforward stream, scripted: the handshake, each channel's port prefix,
// then an echo of what the client sends, a flood, or an error, as a test asks. What the client
// sent and how much the server handed out are kept for the test to check.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "rossoctl/kube/transport.hpp"
#include "rossoctl/kube/websocket.hpp"

namespace rossoctl::testing {

struct PortForwardScript {
    long handshakeStatus = 101;
    std::string refusalBody;
    std::string protocol = "v4.channel.k8s.io";
    uint16_t announcedPort = 0;  // the port each channel opens with; 0: the one asked for
    bool echo = true;            // data from the client comes back on channel 0
    size_t floodBytes = 0;       // data the server has ready for the client, in 32 KiB frames
    std::string errorText;       // sent on channel 1 in 64 KiB frames, then the stream closes
    size_t oversizedFrame = 0;   // a single data frame of this many bytes
};

// What a stream saw; shared with the test, read under its mutex.
struct PortForwardRecord {
    std::mutex mutex;
    std::vector<std::string> paths;  // path and query of each upgrade
    std::string received;            // channel-0 bytes from the client
    size_t handedOut = 0;            // data bytes the client has read from the server
    int closedByClient = 0;
};

// An unmasked frame, as a server sends it.
inline std::string serverFrame(kube::WsOpcode opcode, std::string_view payload) {
    std::string frame(1, static_cast<char>(0x80 | static_cast<uint8_t>(opcode)));
    const uint64_t size = payload.size();
    if (size < 126) {
        frame.push_back(static_cast<char>(size));
    } else if (size <= 0xFFFF) {
        frame.push_back(static_cast<char>(126));
        frame.push_back(static_cast<char>(size >> 8));
        frame.push_back(static_cast<char>(size & 0xFF));
    } else {
        frame.push_back(static_cast<char>(127));
        for (int shift = 56; shift >= 0; shift -= 8)
            frame.push_back(static_cast<char>((size >> shift) & 0xFF));
    }
    frame.append(payload);
    return frame;
}

inline std::string channelFrame(int channel, std::string_view data) {
    return serverFrame(kube::WsOpcode::Binary,
                       std::string(1, static_cast<char>(channel)) + std::string(data));
}

class FakePortForward : public kube::UpgradedConnection {
  public:
    FakePortForward(const kube::HttpRequest& request, PortForwardScript script,
                    std::shared_ptr<PortForwardRecord> record)
        : script_(std::move(script)), record_(std::move(record)) {
        const std::string url = request.url;
        const std::string path = url.substr(url.find('/', url.find("://") + 3));
        uint16_t port = 0;
        const size_t ports = path.find("ports=");
        if (ports != std::string::npos)
            port = static_cast<uint16_t>(std::stoi(path.substr(ports + 6)));
        {
            std::lock_guard lock(record_->mutex);
            record_->paths.push_back(path);
        }
        handshake_.status = script_.handshakeStatus;
        if (handshake_.status != 101) {
            handshake_.body = script_.refusalBody;
            closed_ = true;
            return;
        }
        std::string key;
        for (const auto& [name, value] : request.headers)
            if (name == "Sec-WebSocket-Key") key = value;
        handshake_.headers = {{"sec-websocket-accept", kube::wsAcceptFor(key)},
                              {"sec-websocket-protocol", script_.protocol}};
        const uint16_t announced = script_.announcedPort ? script_.announcedPort : port;
        const std::string prefix{static_cast<char>(announced & 0xFF),
                                 static_cast<char>(announced >> 8)};
        pending_ = channelFrame(0, prefix) + channelFrame(1, prefix);
        if (script_.oversizedFrame)
            pending_ += channelFrame(0, std::string(script_.oversizedFrame, 'o'));
        if (!script_.errorText.empty()) {
            for (size_t at = 0; at < script_.errorText.size(); at += 64 * 1024)
                pending_ += channelFrame(1, script_.errorText.substr(at, 64 * 1024));
            pending_ += serverFrame(kube::WsOpcode::Close, std::string("\x03\xe8", 2));
            closing_ = true;
        }
    }

    const kube::HttpResponse& handshake() const override { return handshake_; }

    size_t read(char* buffer, size_t size, std::chrono::milliseconds timeout) override {
        std::unique_lock lock(mutex_);
        if (pending_.empty() && script_.floodBytes > flooded_) {
            const size_t chunk = std::min<size_t>(32 * 1024, script_.floodBytes - flooded_);
            pending_ = channelFrame(0, std::string(chunk, 'f'));
            flooded_ += chunk;
            if (flooded_ == script_.floodBytes)
                pending_ += serverFrame(kube::WsOpcode::Close, std::string("\x03\xe8", 2));
            std::lock_guard recordLock(record_->mutex);
            record_->handedOut += chunk;
        }
        changed_.wait_for(lock, timeout, [&] { return !pending_.empty() || closed_; });
        if (pending_.empty()) {
            if (closed_) return 0;
            throw kube::TransportError(kube::TransportError::Kind::Timeout, "quiet");
        }
        const size_t n = std::min(size, pending_.size());
        std::copy_n(pending_.data(), n, buffer);
        pending_.erase(0, n);
        if (pending_.empty() && closing_) closed_ = true;
        return n;
    }

    size_t write(std::string_view bytes, std::chrono::milliseconds) override {
        std::lock_guard lock(mutex_);
        if (closed_) throw kube::TransportError(kube::TransportError::Kind::Reset, "closed");
        parser_.feed(bytes);
        while (auto frame = parser_.next()) {
            if (frame->opcode == kube::WsOpcode::Close) {
                std::lock_guard recordLock(record_->mutex);
                ++record_->closedByClient;
                closed_ = true;
                continue;
            }
            if (frame->payload.empty() || frame->payload[0] != 0) continue;
            const std::string data = frame->payload.substr(1);
            {
                std::lock_guard recordLock(record_->mutex);
                record_->received += data;
            }
            if (script_.echo) pending_ += channelFrame(0, data);
        }
        changed_.notify_all();
        return bytes.size();
    }

  private:
    PortForwardScript script_;
    std::shared_ptr<PortForwardRecord> record_;
    kube::HttpResponse handshake_;
    kube::WsFrameParser parser_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::string pending_;  // server bytes not yet read
    size_t flooded_ = 0;
    bool closing_ = false;  // closed once pending_ is read
    bool closed_ = false;
};

// A loopback port free a moment ago (bound, read, released).
inline uint16_t freeLoopbackPort() {
    const int socket = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(socket, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    ::getsockname(socket, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(socket);
    return ntohs(address.sin_port);
}

// Connects to 127.0.0.1:port, trying for a few seconds while the listener comes up; -1 if it
// never does. receiveBuffer > 0 sets SO_RCVBUF first (a small window, for back-pressure).
inline int connectLoopback(uint16_t port, int receiveBuffer = 0) {
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < giveUp) {
        const int socket = ::socket(AF_INET, SOCK_STREAM, 0);
        if (receiveBuffer > 0)
            ::setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, sizeof receiveBuffer);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(socket, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0)
            return socket;
        ::close(socket);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
}

// Reads until `wanted` bytes or the end of the stream (or 10 s pass).
inline std::string readFrom(int socket, size_t wanted) {
    std::string text;
    char buffer[65536];
    timeval limit{10, 0};
    ::setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    while (text.size() < wanted) {
        const ssize_t n = ::recv(socket, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        text.append(buffer, static_cast<size_t>(n));
    }
    return text;
}

}  // namespace rossoctl::testing
