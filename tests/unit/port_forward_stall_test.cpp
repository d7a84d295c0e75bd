// A server that stops reading a port-forward stream (issue 29 review): once the forward is
// stopped (the pod gone, Ctrl-C) a frame waiting for the server is given up within a slice.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <condition_variable>
#include <sstream>

#include "kube_fakes.hpp"
#include "rossoctl/kube/port_forward.hpp"
#include "rossoctl/kube/websocket.hpp"

using namespace rossoctl;

namespace {

// A stream whose server never reads: a write takes nothing. Asked to wait forever (timeout 0)
// it gives up after `forever` (so the old code fails the test instead of hanging it).
class UnreadConnection : public kube::UpgradedConnection {
  public:
    UnreadConnection(const kube::HttpRequest& request, std::chrono::milliseconds forever)
        : forever_(forever) {
        std::string key;
        for (const auto& [name, value] : request.headers)
            if (name == "Sec-WebSocket-Key") key = value;
        handshake_.status = 101;
        handshake_.headers = {{"sec-websocket-accept", kube::wsAcceptFor(key)},
                              {"sec-websocket-protocol", "v4.channel.k8s.io"}};
    }
    const kube::HttpResponse& handshake() const override { return handshake_; }
    size_t read(char*, size_t, std::chrono::milliseconds timeout) override {
        std::this_thread::sleep_for(timeout);
        throw kube::TransportError(kube::TransportError::Kind::Timeout, "quiet");
    }
    size_t write(std::string_view, std::chrono::milliseconds timeout) override {
        std::this_thread::sleep_for(timeout.count() > 0 ? timeout : forever_);
        if (timeout.count() == 0)
            throw kube::TransportError(kube::TransportError::Kind::Reset, "gave up");
        return 0;
    }

  private:
    kube::HttpResponse handshake_;
    std::chrono::milliseconds forever_;
};

class UnreadTransport : public kube::Transport {
  public:
    kube::HttpResponse send(const kube::HttpRequest& request) override {
        FAIL("unexpected request " << request.url);
        return {};
    }
    std::unique_ptr<kube::UpgradedConnection> upgrade(const kube::HttpRequest& request) override {
        return std::make_unique<UnreadConnection>(request, std::chrono::seconds(10));
    }
    void setClientCertificate(const kube::ClientCertificate&) override {}
};

}  // namespace

TEST_CASE("port-forward gives up a frame the server does not read once the forward stops",
          "[hostile][port-forward]") {
    testing::FakeClock clock;
    std::ostringstream trace;
    kube::Client client(testing::fakeRestConfig(), std::make_unique<UnreadTransport>(), clock,
                        kube::RequestTracer(trace, 0));
    int sockets[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sockets) == 0);
    // The local client has sent a request: the pump frames it and the server never reads it.
    REQUIRE(::write(sockets[1], "GET / HTTP/1.1\r\n\r\n", 18) == 18);
    kube::CancelFlag stop;  // the pod's end, as the forward's pod watch says it
    kube::PortForwardLimits limits;
    limits.slice = std::chrono::milliseconds(20);
    std::thread podGone([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        stop.cancel();
    });
    const auto started = std::chrono::steady_clock::now();
    kube::PortForwardResult result;
    try {
        result =
            kube::forwardConnection(client, {"team1", "orders", 80}, sockets[0], &stop, limits);
    } catch (const std::exception&) {
    }
    const auto took = std::chrono::steady_clock::now() - started;
    podGone.join();
    ::close(sockets[0]);
    ::close(sockets[1]);
    // Was 10 s: the frame's write had no deadline and looked at no flag.
    CHECK(took < std::chrono::seconds(3));
}
