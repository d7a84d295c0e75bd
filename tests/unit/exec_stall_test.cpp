// An exec against a server on loopback that accepts the WebSocket upgrade and then stops reading
// what the client sends (stdin, pongs): the exec still ends at its time-out, the real libcurl
// connection and the real clock underneath.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/config.hpp"
#include "rossoctl/kube/exec.hpp"
#include "rossoctl/kube/transport.hpp"
#include "rossoctl/kube/websocket.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;

namespace {

// Accepts one exec upgrade, answers 101 for v5.channel.k8s.io and then reads nothing more until
// released (or 20 s pass, so a client that cannot stop fails the test instead of hanging it);
// `whileStalled` runs in slices meanwhile (it may send frames, never blocking).
class StalledExecServer {
  public:
    explicit StalledExecServer(std::function<void(int fd)> whileStalled = {})
        : whileStalled_(std::move(whileStalled)) {
        listener_ = socket(AF_INET, SOCK_STREAM, 0);
        // A small receive window fills at once: the client's writes block soon.
        const int small = 4096;
        setsockopt(listener_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
        socklen_t length = sizeof address;
        getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
        port_ = ntohs(address.sin_port);
        listen(listener_, 1);
        thread_ = std::thread([this] { serve(); });
    }
    ~StalledExecServer() {
        released_.store(true);
        shutdown(listener_, SHUT_RDWR);
        close(listener_);
        thread_.join();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    void release() { released_.store(true); }

  private:
    void serve() {
        const int fd = accept(listener_, nullptr, nullptr);
        if (fd < 0) return;
        std::string head;
        char chunk[4096];
        while (head.find("\r\n\r\n") == std::string::npos) {
            const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
            if (n <= 0) break;
            head.append(chunk, static_cast<size_t>(n));
        }
        const size_t keyAt = head.find("Sec-WebSocket-Key: ");
        const std::string key =
            keyAt == std::string::npos
                ? ""
                : head.substr(keyAt + 19, head.find("\r\n", keyAt) - keyAt - 19);
        const std::string answer =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: " +
            wsAcceptFor(key) + "\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n";
        ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
        const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!released_.load() && std::chrono::steady_clock::now() < giveUp) {
            if (whileStalled_) whileStalled_(fd);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        close(fd);
    }

    std::function<void(int fd)> whileStalled_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> released_{false};
    std::thread thread_;
};

struct Timed {
    CapturedExec captured;
    double seconds = 0;
};

Timed captureAgainst(const StalledExecServer& server, const std::string& stdinText) {
    RestConfig config;
    config.server = server.url();
    SystemClock clock;
    std::ostringstream trace;
    Client client(config, makeCurlTransport(config, nullptr), clock, RequestTracer(trace, 0));
    const ExecRequest request{"team1", "orders", "agent", {"tar", "xf", "-"}, false, {}};
    const auto started = std::chrono::steady_clock::now();
    Timed timed;
    timed.captured = execCapture(client, request, {4096, std::chrono::seconds(1)}, stdinText);
    timed.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return timed;
}

}  // namespace

TEST_CASE("an exec whose stdin the server stops taking ends at its time-out",
          "[exec][hostile][curl]") {
    StalledExecServer server;
    // Far more than every buffer between the two ends holds.
    const auto timed = captureAgainst(server, std::string(64u << 20, 'x'));
    server.release();
    CHECK(timed.captured.end == CaptureEnd::TimedOut);
    CHECK(timed.seconds < 5);
}

TEST_CASE("an exec whose pongs the server stops taking ends at its time-out",
          "[exec][hostile][curl]") {
    // Pings as fast as the client reads them; what the client answers is never read.
    std::string ping(2 + 125, 'p');  // FIN + ping, 125 bytes unmasked
    ping[0] = '\x89';
    ping[1] = '\x7d';
    std::string burst;
    for (int i = 0; i < 64; ++i) burst += ping;
    size_t at = 0;  // in the endless run of whole pings
    StalledExecServer server([&](int fd) {
        for (int i = 0; i < 16; ++i) {
            const ssize_t n =
                ::send(fd, burst.data() + at, burst.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n <= 0) return;
            at = (at + static_cast<size_t>(n)) % burst.size();
        }
    });
    const auto timed = captureAgainst(server, {});
    server.release();
    CHECK(timed.captured.end == CaptureEnd::TimedOut);
    CHECK(timed.seconds < 5);
}
