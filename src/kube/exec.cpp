// pods/exec over WebSocket with the Kubernetes channel protocol: every binary message starts
// with a channel byte (0 stdin, 1 stdout, 2 stderr, 3 status, 255 close in v5).
#include "rossoctl/kube/exec.hpp"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/descriptor_read.hpp"
#include "rossoctl/kube/json_depth.hpp"
#include "rossoctl/kube/websocket.hpp"

namespace rossoctl::kube {
namespace {

constexpr const char* kProtocolV5 = "v5.channel.k8s.io";
constexpr const char* kProtocolV4 = "v4.channel.k8s.io";
constexpr size_t kStdinChunk = 32 * 1024;
constexpr std::chrono::milliseconds kReadSlice{250};
constexpr size_t kMaxStatusBytes = 64 * 1024;
constexpr size_t kMaxStatusMessage = 300;  // what of a Status message is shown

std::string execPath(const ExecRequest& request) {
    std::string query;
    for (const auto& word : request.command) query += "&command=" + urlEncode(word);
    if (!request.container.empty()) query += "&container=" + urlEncode(request.container);
    query += "&stdout=true&stderr=true";
    if (request.tty) query += "&tty=true";
    return objectPath(resources::pods(), request.namespaceName, request.pod, "exec") + "?" +
           query.substr(1);
}

// Frames go out whole: the stdin thread and the reader (pongs, close) both write. A server
// that stops reading holds a frame no longer than the exec's time-out, and no longer than
// abandon(): a frame left half-sent there ends the connection's use (TransportError Timeout).
class FrameWriter {
  public:
    FrameWriter(UpgradedConnection& connection, Random& random, const Clock& clock,
                std::chrono::milliseconds timeout)
        : connection_(connection),
          random_(random),
          clock_(clock),
          deadline_(clock.monotonic() + timeout),
          bounded_(timeout.count() > 0) {}
    void send(WsOpcode opcode, std::string_view payload) {
        std::lock_guard lock(mutex_);
        const std::string frame = encodeWsFrame(opcode, payload, random_.next());
        for (std::string_view left = frame;;) {
            if (abandoned_.load() || (bounded_ && clock_.monotonic() >= deadline_))
                throw TransportError(TransportError::Kind::Timeout,
                                     "exec: the server stopped reading what was sent to it");
            left.remove_prefix(connection_.write(left, kReadSlice));
            if (left.empty()) return;
        }
    }
    // The exec is over: a send still waiting for the server gives up within a slice.
    void abandon() { abandoned_.store(true); }

  private:
    UpgradedConnection& connection_;
    Random& random_;
    const Clock& clock_;
    const std::chrono::steady_clock::time_point deadline_;
    const bool bounded_;
    std::atomic<bool> abandoned_{false};
    std::mutex mutex_;
};

bool isTimeout(const std::exception_ptr& failure) {
    try {
        std::rethrow_exception(failure);
    } catch (const TransportError& error) {
        return error.kind() == TransportError::Kind::Timeout;
    } catch (...) {
        return false;
    }
}

// A string member of an object, or "" for anything else: the status channel is written by the
// other side, and a number or object where a string belongs must not throw.
std::string stringAt(const json& object, const char* key) {
    if (!object.is_object()) return {};
    auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : std::string{};
}

// The exit code a Status on channel 3 reports (metav1.Status, reason NonZeroExitCode).
void readStatus(const std::string& payload, ExecResult& result) {
    auto status = nestsDeeperThan(payload) ? json() : json::parse(payload, nullptr, false);
    if (status.is_discarded() || !status.is_object()) {
        result.exitCode = 1;
        result.message = "unreadable exec status from the server";
        return;
    }
    if (stringAt(status, "status") == "Success") {
        result.exitCode = 0;
        return;
    }
    // The pod's side writes it: bounded, and no node address or command line in it.
    result.message = boundedServerMessage(stringAt(status, "message"), kMaxStatusMessage);
    result.exitCode = 1;
    if (stringAt(status, "reason") != "NonZeroExitCode") return;
    auto details = status.find("details");
    if (details == status.end() || !details->is_object()) return;
    auto causes = details->find("causes");
    if (causes == details->end() || !causes->is_array()) return;
    for (const auto& cause : *causes) {
        if (stringAt(cause, "reason") != "ExitCode") continue;
        // An exit status is 1 to 255 in digits; anything else the other side wrote is no code.
        const std::string code = stringAt(cause, "message");
        if (code.empty() || code.size() > 3 ||
            code.find_first_not_of("0123456789") != std::string::npos || std::stoi(code) > 255)
            continue;
        result.exitCode = std::stoi(code);
        result.message.clear();
    }
}

// The upgraded stream and the protocol the server chose.
struct ExecStream {
    std::unique_ptr<UpgradedConnection> connection;
    std::string protocol;  // v5.channel.k8s.io or v4.channel.k8s.io
};

// The WebSocket upgrade, offering v5 then v4; refuses a handshake that does not answer ours.
ExecStream openExecStream(Client& client, const ExecRequest& request, bool withStdin) {
    std::string path = execPath(request);
    if (withStdin) path += "&stdin=true";
    std::string nonce(16, '\0');
    for (auto& byte : nonce) byte = static_cast<char>(client.random().next() & 0xFF);
    const std::string key = base64Encode(nonce);
    auto connection = client.upgrade(
        path, {{"Connection", "Upgrade"},
               {"Upgrade", "websocket"},
               {"Sec-WebSocket-Version", "13"},
               {"Sec-WebSocket-Key", key},
               {"Sec-WebSocket-Protocol", std::string(kProtocolV5) + ", " + kProtocolV4}});
    const HttpResponse& handshake = connection->handshake();
    if (handshake.status != 101)
        throw Error(fmt::format("exec: the server answered {} instead of switching protocols",
                                handshake.status));
    if (handshake.header("sec-websocket-accept") != wsAcceptFor(key))
        throw Error("exec: the server's WebSocket handshake does not match the request");
    std::string protocol = handshake.header("sec-websocket-protocol");
    if (protocol != kProtocolV5 && protocol != kProtocolV4)
        throw Error("exec: the server speaks no supported stream protocol (" + protocol + ")");
    if (withStdin && protocol != kProtocolV5)
        throw Error("exec: sending stdin needs v5.channel.k8s.io, which this server lacks");
    return {std::move(connection), std::move(protocol)};
}

// Sends stdin on channel 0 from its own thread, then half-closes it (unless told not to); stopped
// (and joined) once the command is done, also when reading fails. A failure is kept for the caller.
class StdinPump {
  public:
    StdinPump(ExecIo& io, FrameWriter& writer) : io_(io), writer_(writer) {
        thread_ = std::thread([this] { pump(); });
    }
    ~StdinPump() { stop(); }
    StdinPump(const StdinPump&) = delete;
    StdinPump& operator=(const StdinPump&) = delete;

    void stop() {
        done_.store(true);
        writer_.abandon();  // stdin the server never took must not keep the exec from ending
        if (thread_.joinable()) thread_.join();
    }
    std::exception_ptr failure() const { return failure_; }
    // Stdin itself failed (not the server being slow to take it): the exec cannot go on, since
    // the command would wait for the rest of its input.
    bool broken() const { return broken_.load(); }

  private:
    void pump() {
        try {
            std::string chunk(kStdinChunk + 1, '\0');
            for (;;) {
                if (done_.load()) return;
                chunk[0] = '\0';  // channel 0
                size_t n = io_.stdinDescriptor >= 0
                               // Not a blocking read: it would keep the exec from returning after
                               // the command exits.
                               ? readWhenReady(io_.stdinDescriptor, chunk.data() + 1, kStdinChunk,
                                               kReadSlice, [this] { return done_.load(); })
                               : io_.readStdin(chunk.data() + 1, kStdinChunk);
                if (done_.load()) return;
                if (n == 0) break;
                writer_.send(WsOpcode::Binary, std::string_view(chunk.data(), n + 1));
            }
            if (io_.halfCloseStdin)
                writer_.send(WsOpcode::Binary, std::string("\xff\x00", 2));  // half-close stdin
        } catch (...) {
            if (done_.load()) return;
            failure_ = std::current_exception();
            if (!isTimeout(failure_)) broken_.store(true);  // after failure_: read once it is set
        }
    }

    ExecIo& io_;
    FrameWriter& writer_;
    std::atomic<bool> done_{false};
    std::atomic<bool> broken_{false};
    std::exception_ptr failure_;
    std::thread thread_;
};

// Channel 3 as it arrives: the Status is whole once its last fragment is in.
struct StatusChannel {
    std::string payload;
    bool complete = false;
};

// Routes one frame: pings answered, data to its channel (a fragment continues the channel of
// the message it belongs to). False once the server closes the stream.
bool handleFrame(const WsFrame& frame, int& channel, FrameWriter& writer, ExecIo& io,
                 StatusChannel& status) {
    std::string_view payload = frame.payload;
    if (frame.opcode == WsOpcode::Ping) {
        writer.send(WsOpcode::Pong, payload);
        return true;
    }
    if (frame.opcode == WsOpcode::Pong) return true;
    if (frame.opcode == WsOpcode::Close) {
        try {
            writer.send(WsOpcode::Close, payload.substr(0, 2));
        } catch (const TransportError&) {
        }
        return false;
    }
    if (frame.opcode != WsOpcode::Continuation) {
        if (payload.empty()) return true;
        channel = static_cast<unsigned char>(payload[0]);
        payload.remove_prefix(1);
    }
    if (channel == 1 && io.onStdout && !payload.empty()) io.onStdout(payload);
    if (channel == 2 && io.onStderr && !payload.empty()) io.onStderr(payload);
    if (channel == 3) {
        // A Status is a few hundred bytes; the pod's side must not grow it freely.
        if (status.payload.size() + payload.size() > kMaxStatusBytes)
            throw Error(fmt::format("exec: the command's status message is over {} bytes; refused",
                                    kMaxStatusBytes));
        status.payload.append(payload);
        if (frame.fin) status.complete = true;
    }
    return true;
}

// Reads frames until the server closes the stream, request.timeout passes (timedOut set) or
// stdin breaks (the stdin pump's failure is then the exec's).
StatusChannel readUntilClosed(UpgradedConnection& connection, FrameWriter& writer,
                              const Clock& clock, const ExecRequest& request, ExecIo& io,
                              const StdinPump* stdinPump, bool& timedOut) {
    const auto deadline = clock.monotonic() + request.timeout;
    WsFrameParser parser;
    int channel = -1;  // of the data message being reassembled from fragments
    StatusChannel status;
    std::vector<char> buffer(64 * 1024);
    for (bool open = true; open;) {
        if (stdinPump && stdinPump->broken()) break;
        auto slice = kReadSlice;
        if (request.timeout.count() > 0) {
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.monotonic());
            if (left.count() <= 0) {
                timedOut = true;
                break;
            }
            slice = std::min(slice, left);
        }
        size_t n = 0;
        try {
            n = connection.read(buffer.data(), buffer.size(), slice);
        } catch (const TransportError& error) {
            if (error.kind() == TransportError::Kind::Timeout) continue;
            throw;
        }
        if (n == 0) break;  // the server closed the connection
        parser.feed(std::string_view(buffer.data(), n));
        try {
            while (auto frame = parser.next())
                if (!handleFrame(*frame, channel, writer, io, status)) {
                    open = false;
                    break;
                }
        } catch (const TransportError& error) {
            // A pong the server would not take before the deadline.
            if (error.kind() != TransportError::Kind::Timeout) throw;
            timedOut = true;
            break;
        }
    }
    return status;
}

}  // namespace

ExecResult execInPod(Client& client, const ExecRequest& request, ExecIo& io) {
    const bool withStdin = io.stdinDescriptor >= 0 || static_cast<bool>(io.readStdin);
    auto stream = openExecStream(client, request, withStdin);
    ExecResult result;
    result.protocol = stream.protocol;

    FrameWriter writer(*stream.connection, client.random(), client.clock(), request.timeout);
    std::optional<StdinPump> stdinPump;  // stopped before the writer and connection go
    if (withStdin) stdinPump.emplace(io, writer);
    const StatusChannel status =
        readUntilClosed(*stream.connection, writer, client.clock(), request, io,
                        stdinPump ? &*stdinPump : nullptr, result.timedOut);
    std::exception_ptr stdinFailure;
    if (stdinPump) {
        stdinPump->stop();
        stdinFailure = stdinPump->failure();
    }
    // Stdin the server stopped taking before the deadline is the exec's time-out.
    if (stdinFailure && !status.complete && isTimeout(stdinFailure) && request.timeout.count() > 0)
        result.timedOut = true;
    else if (stdinFailure && !status.complete)
        std::rethrow_exception(stdinFailure);
    if (result.timedOut) {
        result.exitCode = 124;
        return result;
    }
    if (!status.complete)
        throw TransportError(TransportError::Kind::Reset,
                             "exec: the stream ended before the command's exit status arrived");
    readStatus(status.payload, result);
    return result;
}

namespace {
// Thrown from the stream callbacks to stop an exec whose output went over its cap.
struct OverCap {};
}  // namespace

std::string CapturedExec::whyCut() const {
    switch (end) {
        case CaptureEnd::Truncated:
            return fmt::format("the command printed more than {} bytes (cut there)",
                               limits.maxBytes);
        case CaptureEnd::TimedOut:
            return limits.timeout.count() % 1000 == 0
                       ? fmt::format("the command did not finish within {}s",
                                     limits.timeout.count() / 1000)
                       : fmt::format("the command did not finish within {} ms",
                                     limits.timeout.count());
        case CaptureEnd::Complete:
            break;
    }
    return {};
}

CapturedExec execCapture(Client& client, const ExecRequest& request, const CaptureLimits& limits,
                         const std::string& stdinText, bool halfCloseStdin) {
    if (limits.timeout.count() <= 0) throw std::invalid_argument("execCapture needs a time-out");
    ExecRequest bounded = request;
    bounded.timeout = limits.timeout;
    CapturedExec captured;
    captured.limits = limits;
    const auto keep = [&](std::string& text, std::string_view bytes) {
        if (bytes.size() > limits.maxBytes - text.size()) {
            text.append(bytes.substr(0, limits.maxBytes - text.size()));
            throw OverCap{};
        }
        text.append(bytes);
    };
    ExecIo io;
    io.halfCloseStdin = halfCloseStdin;
    io.onStdout = [&](std::string_view bytes) { keep(captured.stdoutText, bytes); };
    io.onStderr = [&](std::string_view bytes) { keep(captured.stderrText, bytes); };
    size_t offset = 0;
    if (!stdinText.empty()) {
        io.readStdin = [&](char* out, size_t size) {
            size_t n = std::min(size, stdinText.size() - offset);
            std::copy_n(stdinText.data() + offset, n, out);
            offset += n;
            return n;
        };
    }
    try {
        captured.result = execInPod(client, bounded, io);
    } catch (const OverCap&) {
        // The connection is closed on the way out; the command's status never arrives.
        captured.end = CaptureEnd::Truncated;
        captured.result.exitCode = 1;
        return captured;
    }
    if (captured.result.timedOut) captured.end = CaptureEnd::TimedOut;
    return captured;
}

}  // namespace rossoctl::kube
