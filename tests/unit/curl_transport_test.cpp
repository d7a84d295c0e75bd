// The libcurl transport against a tiny HTTP/1.1 server on loopback (no outside network).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "kube_fakes.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/config.hpp"
#include "rossoctl/kube/transport.hpp"

using namespace rossoctl::kube;

namespace {

// Serves each request on a kept-alive connection with `handler(requestHead, fd)`, which
// writes the whole answer itself; counts accepted connections.
class LoopbackServer {
  public:
    using Handler = std::function<void(const std::string& head, int fd)>;
    explicit LoopbackServer(Handler handler) : handler_(std::move(handler)) {
        listener_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
        socklen_t length = sizeof address;
        getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
        port_ = ntohs(address.sin_port);
        listen(listener_, 8);
        thread_ = std::thread([this] { serve(); });
    }
    ~LoopbackServer() {
        shutdown(listener_, SHUT_RDWR);
        close(listener_);
        thread_.join();
    }
    std::string url(const std::string& path) const {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
    }
    int connections() const { return connections_.load(); }

  private:
    void serve() {
        while (true) {
            int fd = accept(listener_, nullptr, nullptr);
            if (fd < 0) return;
            ++connections_;
            std::string buffer;
            char chunk[4096];
            while (true) {
                size_t end = buffer.find("\r\n\r\n");
                if (end != std::string::npos) {
                    std::string head = buffer.substr(0, end + 4);
                    buffer.erase(0, end + 4);
                    size_t length = head.find("Content-Length: ");
                    size_t bodySize =
                        length == std::string::npos ? 0 : std::stoul(head.substr(length + 16));
                    while (buffer.size() < bodySize) {
                        ssize_t n = recv(fd, chunk, sizeof chunk, 0);
                        if (n <= 0) break;
                        buffer.append(chunk, static_cast<size_t>(n));
                    }
                    buffer.erase(0, std::min(bodySize, buffer.size()));
                    handler_(head, fd);
                    continue;
                }
                ssize_t n = recv(fd, chunk, sizeof chunk, 0);
                if (n <= 0) break;
                buffer.append(chunk, static_cast<size_t>(n));
            }
            close(fd);
        }
    }

    Handler handler_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<int> connections_{0};
    std::thread thread_;
};

void sendAll(int fd, const std::string& text) {
    size_t sent = 0;
    while (sent < text.size()) {
        ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return;
        sent += static_cast<size_t>(n);
    }
}

std::string okResponse(const std::string& body) {
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
}

HttpRequest get(const std::string& url) {
    HttpRequest request;
    request.url = url;
    return request;
}

TransportError::Kind failureKind(Transport& transport, const HttpRequest& request) {
    try {
        transport.send(request);
    } catch (const TransportError& error) {
        return error.kind();
    }
    FAIL("no TransportError");
    return TransportError::Kind::Other;
}

}  // namespace

TEST_CASE("requests reuse one kept-alive connection", "[curl]") {
    std::string lastHead;
    LoopbackServer server([&](const std::string& head, int fd) {
        lastHead = head;
        sendAll(fd, okResponse(R"({"kind":"Status"})"));
    });
    auto transport = makeCurlTransport(RestConfig{}, nullptr);
    HttpRequest request = get(server.url("/version"));
    request.headers = {{"Accept", "application/json"}};
    HttpResponse first = transport->send(request);
    CHECK(first.status == 200);
    CHECK(first.body == R"({"kind":"Status"})");
    CHECK(first.header("Content-Type") == "application/json");

    HttpRequest post = get(server.url("/api/v1/namespaces"));
    post.method = "POST";
    post.body = R"({"metadata":{"name":"x"}})";
    CHECK(transport->send(post).status == 200);
    CHECK(lastHead.rfind("POST /api/v1/namespaces HTTP/1.1\r\n", 0) == 0);
    CHECK(server.connections() == 1);
}

TEST_CASE("streamed bodies arrive in chunks and the reader can stop", "[curl]") {
    LoopbackServer server([](const std::string&, int fd) {
        sendAll(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (int i = 0; i < 3; ++i) sendAll(fd, "6\r\nline" + std::to_string(i) + "\n\r\n");
        sendAll(fd, "0\r\n\r\n");
    });
    auto transport = makeCurlTransport(RestConfig{}, nullptr);
    HttpRequest request = get(server.url("/watch"));
    std::string received;
    request.onBodyChunk = [&](std::string_view chunk) {
        received += chunk;
        return true;
    };
    HttpResponse response = transport->send(request);
    CHECK(response.status == 200);
    CHECK(response.body.empty());
    CHECK(received == "line0\nline1\nline2\n");

    int calls = 0;
    request.onBodyChunk = [&](std::string_view) { return ++calls < 1; };
    CHECK(transport->send(request).status == 200);
    CHECK(calls == 1);
}

TEST_CASE("an error response is buffered, not streamed", "[curl]") {
    LoopbackServer server([](const std::string&, int fd) {
        std::string body = R"({"kind":"Status","code":403})";
        sendAll(fd, "HTTP/1.1 403 Forbidden\r\nContent-Length: " + std::to_string(body.size()) +
                        "\r\n\r\n" + body);
    });
    auto transport = makeCurlTransport(RestConfig{}, nullptr);
    HttpRequest request = get(server.url("/watch"));
    bool streamed = false;
    request.onBodyChunk = [&](std::string_view) { return streamed = true; };
    HttpResponse response = transport->send(request);
    CHECK(response.status == 403);
    CHECK_FALSE(streamed);
    CHECK(response.body == R"({"kind":"Status","code":403})");
}

TEST_CASE("connection refused, timeout and cancel map to their kinds", "[curl]") {
    int port;
    {
        LoopbackServer closed([](const std::string&, int) {});
        port = std::stoi(closed.url("").substr(17));
    }
    auto transport = makeCurlTransport(RestConfig{}, nullptr);
    HttpRequest refused = get("http://127.0.0.1:" + std::to_string(port) + "/");
    try {
        transport->send(refused);
        FAIL("no error");
    } catch (const TransportError& error) {
        CHECK(error.kind() == TransportError::Kind::Connect);
        CHECK_THAT(error.what(), Catch::Contains("was refused"));
    }

    LoopbackServer silent([](const std::string&, int) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    });
    HttpRequest slow = get(silent.url("/"));
    slow.timeout = std::chrono::milliseconds(200);
    CHECK(failureKind(*transport, slow) == TransportError::Kind::Timeout);

    CancelFlag cancel;
    cancel.cancel();
    auto cancellable = makeCurlTransport(RestConfig{}, &cancel);
    CHECK(failureKind(*cancellable, get(silent.url("/"))) == TransportError::Kind::Cancelled);
}

TEST_CASE("upgrade hands over the socket after 101", "[curl]") {
    std::string upgradeHead;
    LoopbackServer server([&](const std::string& head, int fd) {
        upgradeHead = head;
        sendAll(fd,
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                "Connection: Upgrade\r\n\r\nhello");
        char buffer[16];
        ssize_t n = recv(fd, buffer, sizeof buffer, 0);
        if (n > 0) sendAll(fd, std::string(buffer, static_cast<size_t>(n)));
        shutdown(fd, SHUT_WR);
    });
    auto transport = makeCurlTransport(RestConfig{}, nullptr);
    HttpRequest request = get(server.url("/api/v1/namespaces/a/pods/p/exec?command=ls"));
    request.headers = {{"Upgrade", "websocket"}, {"Connection", "Upgrade"}};
    auto connection = transport->upgrade(request);
    CHECK(connection->handshake().status == 101);
    CHECK(connection->handshake().header("upgrade") == "websocket");
    CHECK(upgradeHead.rfind("GET /api/v1/namespaces/a/pods/p/exec?command=ls HTTP/1.1\r\n", 0) ==
          0);
    CHECK(upgradeHead.find("Upgrade: websocket\r\n") != std::string::npos);

    char buffer[64];
    size_t n = connection->read(buffer, sizeof buffer, std::chrono::seconds(2));
    CHECK(std::string(buffer, n) == "hello");
    CHECK(connection->write("echo", std::chrono::seconds(2)) == 4);
    std::string echoed;
    while (echoed.size() < 4) {
        n = connection->read(buffer, sizeof buffer, std::chrono::seconds(2));
        if (n == 0) break;
        echoed.append(buffer, n);
    }
    CHECK(echoed == "echo");
    CHECK(connection->read(buffer, sizeof buffer, std::chrono::seconds(2)) == 0);
}

TEST_CASE("a refused upgrade returns the answer with its body", "[curl]") {
    LoopbackServer server([](const std::string&, int fd) {
        std::string body = R"({"kind":"Status","code":403,"message":"forbidden"})";
        sendAll(fd, "HTTP/1.1 403 Forbidden\r\nContent-Length: " + std::to_string(body.size()) +
                        "\r\n\r\n" + body);
    });
    auto transport = makeCurlTransport(RestConfig{}, nullptr);
    auto connection = transport->upgrade(get(server.url("/exec")));
    CHECK(connection->handshake().status == 403);
    CHECK(connection->handshake().body == R"({"kind":"Status","code":403,"message":"forbidden"})");
}

TEST_CASE("an upgraded read times out", "[curl]") {
    LoopbackServer server([](const std::string&, int fd) {
        sendAll(fd, "HTTP/1.1 101 Switching Protocols\r\n\r\n");
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
    });
    auto transport = makeCurlTransport(RestConfig{}, nullptr);
    auto connection = transport->upgrade(get(server.url("/exec")));
    char buffer[8];
    try {
        connection->read(buffer, sizeof buffer, std::chrono::milliseconds(100));
        FAIL("no timeout");
    } catch (const TransportError& error) {
        CHECK(error.kind() == TransportError::Kind::Timeout);
    }
}

TEST_CASE("a refused upgrade with a non-numeric Content-Length is still reported", "[curl]") {
    LoopbackServer server([](const std::string&, int fd) {
        sendAll(fd,
                "HTTP/1.1 403 Forbidden\r\nContent-Length: lots\r\nConnection: close\r\n\r\n"
                "{\"message\":\"forbidden\"}");
        ::shutdown(fd, SHUT_WR);
    });
    auto transport = makeCurlTransport(RestConfig{}, nullptr);
    auto connection = transport->upgrade(get(server.url("/exec")));
    CHECK(connection->handshake().status == 403);
    CHECK(connection->handshake().body == "{\"message\":\"forbidden\"}");
}

TEST_CASE("Ctrl-C stops a read even while the server floods the connection", "[curl]") {
    std::atomic<bool> stop{false};
    LoopbackServer server([&](const std::string&, int fd) {
        sendAll(fd, "HTTP/1.1 101 Switching Protocols\r\n\r\n");
        const std::string flood(64 * 1024, 'y');
        while (!stop.load()) sendAll(fd, flood);
    });
    CancelFlag cancel;
    auto transport = makeCurlTransport(RestConfig{}, &cancel);
    auto connection = transport->upgrade(get(server.url("/exec")));
    char buffer[65536];
    size_t total = 0;
    bool cancelled = false;
    try {
        // Without the check before each read, this runs through all 4 GiB of the flood.
        for (int i = 0; i < (1 << 16); ++i) {
            total += connection->read(buffer, sizeof buffer, std::chrono::seconds(2));
            if (total > (1 << 20)) cancel.cancel();
        }
    } catch (const TransportError& error) {
        cancelled = error.kind() == TransportError::Kind::Cancelled;
    }
    stop.store(true);
    connection.reset();
    CHECK(cancelled);
    CHECK(total < (8u << 20));
}

TEST_CASE("a response body over its cap is refused; an error's body is cut to its Status",
          "[curl][hostile]") {
    LoopbackServer server([](const std::string& head, int fd) {
        const bool error = head.find("/error") != std::string::npos;
        // Past the cap of one object (32 MiB); the transfer stops long before it ends.
        const size_t size = error ? (3u << 20) : (kMaxObjectBodyBytes + (8u << 20));
        sendAll(fd, std::string(error ? "HTTP/1.1 500 Internal Server Error" : "HTTP/1.1 200 OK") +
                        "\r\nContent-Length: " + std::to_string(size) + "\r\n\r\n");
        const std::string block(1 << 20, '{');
        for (size_t sent = 0; sent < size; sent += block.size())
            if (::send(fd, block.data(), block.size(), MSG_NOSIGNAL) <= 0) return;
    });
    RestConfig config;
    config.server = server.url("");
    rossoctl::testing::FakeClock clock;
    std::ostringstream trace;
    Client client(config, makeCurlTransport(config, nullptr), clock, RequestTracer(trace, 0));
    CHECK_THROWS_WITH(client.get(resources::pods(), "a", "b"),
                      Catch::Contains("is over 32 MiB; refused"));
    auto errors = makeCurlTransport(RestConfig{}, nullptr);
    const HttpResponse failed = errors->send(get(server.url("/error")));
    CHECK(failed.status == 500);
    CHECK(failed.body.size() == kMaxErrorBodyBytes);
}
