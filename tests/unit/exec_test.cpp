// WebSocket framing and the exec channel protocol, against recorded server frames.
#include "rossoctl/kube/exec.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "kube_fakes.hpp"
#include "rossoctl/kube/websocket.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;

namespace {

// An unmasked server frame, as the apiserver sends them.
std::string serverFrame(uint8_t firstByte, const std::string& payload) {
    std::string frame(1, static_cast<char>(firstByte));
    if (payload.size() < 126) {
        frame.push_back(static_cast<char>(payload.size()));
    } else if (payload.size() <= 0xFFFF) {
        frame.push_back(126);
        frame.push_back(static_cast<char>(payload.size() >> 8));
        frame.push_back(static_cast<char>(payload.size() & 0xFF));
    } else {
        frame.push_back(127);
        for (int shift = 56; shift >= 0; shift -= 8)
            frame.push_back(static_cast<char>((uint64_t{payload.size()} >> shift) & 0xFF));
    }
    return frame + payload;
}

std::string channel(char id, const std::string& text) {
    return std::string(1, id) + text;
}

class ScriptedConnection : public UpgradedConnection {
  public:
    ScriptedConnection(HttpResponse handshake, std::string incoming, size_t readSize)
        : handshake_(std::move(handshake)), incoming_(std::move(incoming)), readSize_(readSize) {}
    const HttpResponse& handshake() const override { return handshake_; }
    size_t read(char* buffer, size_t size, std::chrono::milliseconds) override {
        // A real server answers only after the command has read its stdin to the end.
        if (holdUntilStdinClosed && !stdinClosed_.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            throw TransportError(TransportError::Kind::Timeout, "no frame yet");
        }
        size_t n = std::min({size, readSize_, incoming_.size() - offset_});
        std::copy_n(incoming_.data() + offset_, n, buffer);
        offset_ += n;
        return n;
    }
    size_t write(std::string_view bytes, std::chrono::milliseconds) override {
        written->append(bytes);
        sentFrames_.feed(bytes);
        while (auto frame = sentFrames_.next())
            if (frame->payload == std::string("\xff\x00", 2)) stdinClosed_.store(true);
        return bytes.size();
    }
    std::shared_ptr<std::string> written = std::make_shared<std::string>();
    bool holdUntilStdinClosed = false;

  private:
    HttpResponse handshake_;
    std::string incoming_;
    size_t offset_ = 0;
    size_t readSize_;
    WsFrameParser sentFrames_;
    std::atomic<bool> stdinClosed_{false};
};

struct ExecServer {
    std::string frames;
    std::string protocol = "v5.channel.k8s.io";
    size_t readSize = 7;  // odd splits exercise the incremental parser
    std::string requestUrl;
    std::shared_ptr<std::string> written;
    bool holdUntilStdinClosed = false;
};

class ExecTransport : public Transport {
  public:
    explicit ExecTransport(ExecServer& server) : server_(server) {}
    HttpResponse send(const HttpRequest&) override { return {}; }
    void setClientCertificate(const ClientCertificate&) override {}
    std::unique_ptr<UpgradedConnection> upgrade(const HttpRequest& request) override {
        server_.requestUrl = request.url;
        std::string key;
        for (const auto& [name, value] : request.headers)
            if (name == "Sec-WebSocket-Key") key = value;
        HttpResponse handshake{101,
                               {{"sec-websocket-accept", wsAcceptFor(key)},
                                {"sec-websocket-protocol", server_.protocol}},
                               {}};
        auto connection =
            std::make_unique<ScriptedConnection>(handshake, server_.frames, server_.readSize);
        server_.written = connection->written;
        connection->holdUntilStdinClosed = server_.holdUntilStdinClosed;
        return connection;
    }

  private:
    ExecServer& server_;
};

CapturedExec runExec(ExecServer& server, const std::string& input = {}) {
    testing::FakeClock clock;
    std::ostringstream trace;
    Client client(testing::fakeRestConfig(), std::make_unique<ExecTransport>(server), clock,
                  RequestTracer(trace, 0));
    ExecRequest request{"team1", "orders", "agent", {"sh", "-c", "echo hi; exit 7"}, false, {}};
    return execCapture(client, request, {64 * 1024, std::chrono::seconds(30)}, input);
}

// execInPod of `command` with stdin read from `descriptor`.
ExecResult execWithStdinFrom(ExecServer& server, int descriptor,
                             const std::vector<std::string>& command) {
    testing::FakeClock clock;
    std::ostringstream trace;
    Client client(testing::fakeRestConfig(), std::make_unique<ExecTransport>(server), clock,
                  RequestTracer(trace, 0));
    ExecRequest request{"team1", "orders", "agent", command, false, {}};
    ExecIo io;
    io.stdinDescriptor = descriptor;
    return execInPod(client, request, io);
}

}  // namespace

TEST_CASE("client frames are masked and decode back", "[websocket]") {
    std::string frame = encodeWsFrame(WsOpcode::Binary, "hello", 0x01020304);
    REQUIRE(frame.size() == 2 + 4 + 5);
    CHECK(static_cast<uint8_t>(frame[0]) == 0x82);
    CHECK(static_cast<uint8_t>(frame[1]) == (0x80 | 5));
    WsFrameParser parser;
    parser.feed(frame);
    auto decoded = parser.next();
    REQUIRE(decoded);
    CHECK(decoded->payload == "hello");
    for (size_t size : {125u, 126u, 65535u, 65536u}) {
        WsFrameParser p;
        p.feed(encodeWsFrame(WsOpcode::Binary, std::string(size, 'x'), 0xdeadbeef));
        auto f = p.next();
        REQUIRE(f);
        CHECK(f->payload.size() == size);
    }
}

TEST_CASE("the parser waits for whole frames and rejects bad ones", "[websocket]") {
    std::string frame = serverFrame(0x82, std::string(300, 'a'));
    WsFrameParser parser;
    parser.feed(frame.substr(0, 3));
    CHECK_FALSE(parser.next());
    parser.feed(frame.substr(3));
    REQUIRE(parser.next()->payload.size() == 300);

    WsFrameParser reserved;
    reserved.feed(std::string("\xF2\x00", 2));
    CHECK_THROWS_AS(reserved.next(), Error);
    WsFrameParser hugeControl;
    hugeControl.feed(serverFrame(0x89, std::string(200, 'p')));
    CHECK_THROWS_AS(hugeControl.next(), Error);
    WsFrameParser tooBig(1024);
    tooBig.feed(serverFrame(0x82, std::string(2048, 'b')));
    CHECK_THROWS_AS(tooBig.next(), Error);
}

TEST_CASE("the accept key follows RFC 6455", "[websocket]") {
    CHECK(wsAcceptFor("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST_CASE("exec demultiplexes channels and reads the exit code", "[exec]") {
    ExecServer server;
    server.frames =
        serverFrame(0x82, channel(1, "hello ")) +
        serverFrame(0x02, channel(2, "warn")) +  // fragment start (stderr)
        serverFrame(0x89, "ping!") +             // control frame in between
        serverFrame(0x80, "ing\n") +             // continuation, still stderr
        serverFrame(0x82, channel(1, "world\n")) +
        serverFrame(
            0x82,
            channel(
                3,
                R"({"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"7"}]}})")) +
        serverFrame(0x88, "\x03\xe8");
    auto captured = runExec(server);
    CHECK(captured.stdoutText == "hello world\n");
    CHECK(captured.stderrText == "warning\n");
    CHECK(captured.result.exitCode == 7);
    CHECK(captured.result.protocol == "v5.channel.k8s.io");
    CHECK(server.requestUrl.find("/api/v1/namespaces/team1/pods/orders/exec?command=sh&command=-c&"
                                 "command=echo%20hi%3B%20exit%207&container=agent") !=
          std::string::npos);
    // A pong answered the ping, and a close answered the close.
    WsFrameParser sent;
    sent.feed(*server.written);
    std::vector<WsOpcode> opcodes;
    while (auto frame = sent.next()) opcodes.push_back(frame->opcode);
    CHECK(opcodes == std::vector<WsOpcode>{WsOpcode::Pong, WsOpcode::Close});
}

TEST_CASE("exec sends stdin on channel 0 and half-closes it", "[exec]") {
    ExecServer server;
    server.readSize = 1 << 20;
    server.holdUntilStdinClosed = true;
    server.frames = serverFrame(0x82, channel(3, R"({"status":"Success"})"));
    auto captured = runExec(server, std::string(100 * 1024, 'z'));
    CHECK(captured.result.exitCode == 0);
    WsFrameParser sent;
    sent.feed(*server.written);
    size_t stdinBytes = 0;
    bool halfClosed = false;
    while (auto frame = sent.next()) {
        if (frame->payload[0] == 0) stdinBytes += frame->payload.size() - 1;
        if (frame->payload == std::string("\xff\x00", 2)) halfClosed = true;
    }
    CHECK(stdinBytes == 100 * 1024);
    CHECK(halfClosed);
}

TEST_CASE("a stream cut before the status is an error, not success", "[exec]") {
    ExecServer server;
    server.frames = serverFrame(0x82, channel(1, "partial output"));
    CHECK_THROWS_AS(runExec(server), TransportError);
}

TEST_CASE("stdin from a descriptor that stays open does not hold up the exit", "[exec]") {
    ExecServer server;
    server.frames = serverFrame(0x82, channel(3, R"({"status":"Success"})"));
    int pipeEnds[2];
    REQUIRE(::pipe(pipeEnds) == 0);
    REQUIRE(::write(pipeEnds[1], "typed\n", 6) == 6);
    // Closes the pipe only if exec is still blocked after 5 s, so a regression fails, not hangs.
    std::thread watchdog([&] {
        std::this_thread::sleep_for(std::chrono::seconds(5));
        ::close(pipeEnds[1]);
    });
    const auto started = std::chrono::steady_clock::now();
    auto result = execWithStdinFrom(server, pipeEnds[0], {"true"});
    const auto took = std::chrono::steady_clock::now() - started;
    watchdog.join();
    ::close(pipeEnds[0]);
    CHECK(result.exitCode == 0);
    CHECK(took < std::chrono::seconds(2));
    CHECK(server.requestUrl.find("&stdin=true") != std::string::npos);
}

TEST_CASE("stdin that cannot be read fails the exec, never ends its stdin early", "[exec]") {
    // `exec -i S -- cat < /` (a directory opens, then reads EISDIR): the old stdin pump took
    // the error for the end of input, and the command ran on an empty stdin with exit 0.
    ExecServer server;
    server.frames = serverFrame(0x82, channel(3, R"({"status":"Success"})"));
    server.holdUntilStdinClosed = true;  // cat answers once its stdin ends
    const int directory = ::open("/", O_RDONLY);
    REQUIRE(directory >= 0);
    CHECK_THROWS_WITH(execWithStdinFrom(server, directory, {"cat"}),
                      Catch::Contains("cannot read stdin"));
    ::close(directory);
}

TEST_CASE("a status channel larger than any Status is refused, not buffered", "[exec]") {
    ExecServer server;
    server.readSize = 1 << 20;
    // 1 MiB of status in 16 fragments: a Status is a few hundred bytes.
    std::string frames = serverFrame(0x02, channel(3, std::string(64 * 1024, '{')));
    for (int i = 0; i < 15; ++i) frames += serverFrame(0x00, std::string(64 * 1024, '{'));
    server.frames = frames + serverFrame(0x80, "}");
    CHECK_THROWS_WITH(runExec(server), Catch::Contains("status message is over"));
}

TEST_CASE("a capture stops at its byte cap and says it was cut", "[exec][hostile]") {
    ExecServer server;
    server.readSize = 1 << 20;
    server.frames = serverFrame(0x82, channel(1, std::string(200 * 1024, 'y'))) +
                    serverFrame(0x82, channel(3, R"({"status":"Success"})"));
    auto captured = runExec(server);
    CHECK(captured.end == CaptureEnd::Truncated);
    CHECK_FALSE(captured.complete());
    CHECK(captured.stdoutText.size() == 64 * 1024);
    CHECK(captured.whyCut() == "the command printed more than 65536 bytes (cut there)");
}

TEST_CASE("a capture without a time-out is refused before anything is sent", "[exec][hostile]") {
    ExecServer server;
    testing::FakeClock clock;
    std::ostringstream trace;
    Client client(testing::fakeRestConfig(), std::make_unique<ExecTransport>(server), clock,
                  RequestTracer(trace, 0));
    ExecRequest request{"team1", "orders", "agent", {"true"}, false, {}};
    CHECK_THROWS_AS(execCapture(client, request, {4096, std::chrono::milliseconds(0)}),
                    std::invalid_argument);
    CHECK(server.requestUrl.empty());
}
