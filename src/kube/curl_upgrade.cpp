// Transport::upgrade over libcurl: a CONNECT_ONLY handle gives a connected (TLS) socket with
// the same proxy and TLS settings as every other request; the HTTP/1.1 Upgrade request and
// the 101 answer are written and read here with curl_easy_send/curl_easy_recv.
#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <mutex>

#include "curl_common.hpp"

namespace rossoctl::kube::curl {

namespace {

using SteadyTime = std::chrono::steady_clock::time_point;
constexpr std::chrono::milliseconds kHandshakeTimeout{30000};
constexpr std::chrono::milliseconds kCancelCheckInterval{200};
constexpr size_t kMaxHandshakeBytes = 64 * 1024;

class CurlUpgradedConnection : public UpgradedConnection {
  public:
    CurlUpgradedConnection(EasyHandle easy, const CancelFlag* cancel, std::string url)
        : easy_(std::move(easy)), cancel_(cancel), url_(std::move(url)) {
        libcurl::curl_easy_getinfo(easy_.get(), CURLINFO_ACTIVESOCKET, &socket_);
    }

    const HttpResponse& handshake() const override { return handshake_; }

    size_t read(char* buffer, size_t size, std::chrono::milliseconds timeout) override {
        if (offset_ < buffered_.size()) {
            size_t n = std::min(size, buffered_.size() - offset_);
            std::copy_n(buffered_.data() + offset_, n, buffer);
            offset_ += n;
            return n;
        }
        return receive(buffer, size, deadlineAfter(timeout));
    }

    size_t write(std::string_view bytes, std::chrono::milliseconds timeout) override {
        return send(bytes, deadlineAfter(timeout));
    }

    // Writes the Upgrade request and reads the answer's head (and, unless 101, its body).
    void performHandshake(const std::string& head, std::chrono::milliseconds timeout) {
        const auto deadline = deadlineAfter(timeout.count() > 0 ? timeout : kHandshakeTimeout);
        if (send(head, deadline) < head.size())
            throw TransportError(
                TransportError::Kind::Timeout,
                fmt::format("timed out sending the upgrade request to {}", hostAndPort(url_)));
        std::string received;
        size_t headEnd;
        char chunk[4096];
        while ((headEnd = received.find("\r\n\r\n")) == std::string::npos) {
            if (received.size() > kMaxHandshakeBytes) {
                throw TransportError(TransportError::Kind::Other,
                                     "the server's answer to the upgrade request is too long");
            }
            size_t n = receive(chunk, sizeof chunk, deadline);
            if (n == 0) {
                throw TransportError(TransportError::Kind::Reset,
                                     fmt::format("the server at {} closed the connection during "
                                                 "the upgrade",
                                                 hostAndPort(url_)));
            }
            received.append(chunk, n);
        }
        parseHead(std::string_view(received).substr(0, headEnd));
        buffered_ = received.substr(headEnd + 4);
        if (handshake_.status != 101) readErrorBody(deadline);
    }

  private:
    std::optional<SteadyTime> deadlineAfter(std::chrono::milliseconds timeout) const {
        if (timeout.count() <= 0) return std::nullopt;
        return std::chrono::steady_clock::now() + timeout;
    }

    // Sends until all is out or the deadline passes; returns how much went out.
    size_t send(std::string_view bytes, std::optional<SteadyTime> deadline) {
        size_t total = 0;
        while (total < bytes.size()) {
            size_t sent = 0;
            CURLcode code;
            {
                std::lock_guard lock(ioMutex_);
                code = libcurl::curl_easy_send(easy_.get(), bytes.data() + total,
                                               bytes.size() - total, &sent);
            }
            if (code == CURLE_AGAIN) {
                try {
                    waitFor(POLLOUT, deadline);
                } catch (const TransportError& error) {
                    if (error.kind() != TransportError::Kind::Timeout) throw;
                    return total;
                }
                continue;
            }
            if (code != CURLE_OK) throw transportErrorFor(easy_.get(), code, nullptr, url_);
            total += sent;
        }
        return total;
    }

    size_t receive(char* buffer, size_t size, std::optional<SteadyTime> deadline) {
        while (true) {
            // Checked before every read, not only when the socket is quiet: a flood of output
            // keeps it readable and would otherwise never let Ctrl-C through.
            if (cancel_ && cancel_->cancelled())
                throw TransportError(TransportError::Kind::Cancelled, "interrupted");
            size_t received = 0;
            CURLcode code;
            {
                // Try first: TLS may hold decrypted bytes while the socket itself is quiet.
                std::lock_guard lock(ioMutex_);
                code = libcurl::curl_easy_recv(easy_.get(), buffer, size, &received);
            }
            if (code == CURLE_OK) return received;
            if (code != CURLE_AGAIN) throw transportErrorFor(easy_.get(), code, nullptr, url_);
            waitFor(POLLIN, deadline);
        }
    }

    void waitFor(short events, std::optional<SteadyTime> deadline) {
        while (true) {
            if (cancel_ && cancel_->cancelled()) {
                throw TransportError(TransportError::Kind::Cancelled, "interrupted");
            }
            auto slice = kCancelCheckInterval;
            if (deadline) {
                auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    *deadline - std::chrono::steady_clock::now());
                if (left.count() <= 0) {
                    throw TransportError(
                        TransportError::Kind::Timeout,
                        fmt::format("timed out waiting for the server at {}", hostAndPort(url_)));
                }
                slice = std::min(slice, left);
            }
            pollfd descriptor{static_cast<int>(socket_), events, 0};
            int ready = ::poll(&descriptor, 1, static_cast<int>(slice.count()));
            if (ready > 0) return;
            if (ready < 0 && errno != EINTR) {
                throw TransportError(TransportError::Kind::Reset, "poll on the connection failed");
            }
        }
    }

    void parseHead(std::string_view head) {
        size_t lineEnd = head.find("\r\n");
        std::string_view statusLine = head.substr(0, lineEnd);
        size_t space = statusLine.find(' ');
        if (!statusLine.starts_with("HTTP/") || space == std::string_view::npos) {
            throw TransportError(TransportError::Kind::Other,
                                 "the server's answer to the upgrade request is not HTTP");
        }
        handshake_.status = std::atol(std::string(statusLine.substr(space + 1, 3)).c_str());
        while (lineEnd != std::string_view::npos) {
            size_t start = lineEnd + 2;
            lineEnd = head.find("\r\n", start);
            std::string_view line =
                head.substr(start, lineEnd == std::string_view::npos ? std::string_view::npos
                                                                     : lineEnd - start);
            size_t colon = line.find(':');
            if (colon == std::string_view::npos) continue;
            std::string name(line.substr(0, colon));
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            std::string_view value = line.substr(colon + 1);
            while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
            handshake_.headers.emplace_back(std::move(name), std::string(value));
        }
    }

    // A refused upgrade (403, 400...) carries a Status body worth reporting.
    void readErrorBody(std::optional<SteadyTime> deadline) {
        handshake_.body = std::move(buffered_);
        buffered_.clear();
        std::string lengthHeader = handshake_.header("content-length");
        // Digits only: a server's "Content-Length: lots" is read as absent, never thrown.
        size_t wanted = kMaxHandshakeBytes;
        if (!lengthHeader.empty() && lengthHeader.size() <= 12 &&
            lengthHeader.find_first_not_of("0123456789") == std::string::npos)
            wanted = std::min<size_t>(std::stoull(lengthHeader), kMaxHandshakeBytes);
        char chunk[4096];
        try {
            while (handshake_.body.size() < wanted) {
                size_t n = receive(chunk, sizeof chunk, deadline);
                if (n == 0) break;
                handshake_.body.append(chunk, n);
            }
        } catch (const TransportError&) {
            // What arrived is enough to report; the connection is not used again.
        }
    }

    EasyHandle easy_;
    const CancelFlag* cancel_;
    std::string url_;
    curl_socket_t socket_ = CURL_SOCKET_BAD;
    HttpResponse handshake_;
    std::string buffered_;  // bytes read past the handshake, handed out first
    size_t offset_ = 0;
    std::mutex ioMutex_;  // a reader and a writer thread may share the connection
};

std::string requestTarget(const std::string& url) {
    size_t scheme = url.find("://");
    size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    return path == std::string::npos ? "/" : url.substr(path);
}

}  // namespace

std::unique_ptr<UpgradedConnection> openUpgradedConnection(const ConnectionSettings& settings,
                                                           const HttpRequest& request,
                                                           const CancelFlag* cancel) {
    EasyHandle easy = newEasyHandle();
    char errorBuffer[CURL_ERROR_SIZE] = {};
    libcurl::curl_easy_setopt(easy.get(), CURLOPT_ERRORBUFFER, errorBuffer);
    // No overall timeout: it would cut the stream; the handshake has its own deadline.
    PreparedConnection connection =
        applyConnectionOptions(easy.get(), settings, request.url, std::chrono::milliseconds{0});
    if (request.timeout.count() > 0) {
        libcurl::curl_easy_setopt(
            easy.get(), CURLOPT_CONNECTTIMEOUT_MS,
            static_cast<long>(std::min<long long>(request.timeout.count(), 30000)));
    }
    libcurl::curl_easy_setopt(easy.get(), CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    libcurl::curl_easy_setopt(easy.get(), CURLOPT_HTTPPROXYTUNNEL, 1L);
    libcurl::curl_easy_setopt(easy.get(), CURLOPT_CONNECT_ONLY, 1L);
    CURLcode code = libcurl::curl_easy_perform(easy.get());
    libcurl::curl_easy_setopt(easy.get(), CURLOPT_ERRORBUFFER, nullptr);
    if (code != CURLE_OK) throw transportErrorFor(easy.get(), code, errorBuffer, request.url);

    std::string head = fmt::format("{} {} HTTP/1.1\r\nHost: {}\r\n", request.method,
                                   requestTarget(connection.url), hostAndPort(connection.url));
    for (const auto& [name, value] : request.headers)
        head += fmt::format("{}: {}\r\n", name, value);
    head += "\r\n";
    auto upgraded = std::make_unique<CurlUpgradedConnection>(std::move(easy), cancel, request.url);
    upgraded->performHandshake(head, request.timeout);
    return upgraded;
}

}  // namespace rossoctl::kube::curl
