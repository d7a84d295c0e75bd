#pragma once
// The HTTP seam: everything above it is testable with a fake; CurlTransport is the real one.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rossoctl/errors.hpp"

namespace rossoctl::kube {

using Headers = std::vector<std::pair<std::string, std::string>>;

// What a server can make the client hold, per kind of request.
inline constexpr size_t kMaxListBodyBytes = 256 * 1024 * 1024;   // a list page
inline constexpr size_t kMaxObjectBodyBytes = 32 * 1024 * 1024;  // one object, discovery
inline constexpr size_t kMaxErrorBodyBytes = 1024 * 1024;
// A list is read in at most this many pages (5 million objects at kubectl's 500 a page), and a
// list kept whole (Client::list) holds at most kMaxListBodyBytes over all of them.
inline constexpr size_t kMaxListPages = 10'000;
// A buffered request (not a watch or stream) without --request-timeout still ends: an apiserver
// answers within its own 60 s request timeout, so one past this is stalling (a byte every 10 s).
inline constexpr std::chrono::milliseconds kBufferedRequestTimeout{5 * 60 * 1000};

struct HttpRequest {
    std::string method = "GET";
    std::string url;  // absolute
    Headers headers;
    std::string body;
    std::chrono::milliseconds timeout{0};  // 0 = none
    // Set for streaming responses (watch): called per received chunk instead of buffering;
    // return false to stop reading.
    std::function<bool(std::string_view)> onBodyChunk;
    // A buffered successful response longer than this is refused (TransportError); an error
    // response's body is kept only up to kMaxErrorBodyBytes (enough for its Status).
    size_t maxBodyBytes = kMaxListBodyBytes;
};

struct HttpResponse {
    long status = 0;
    Headers headers;  // names lower-cased
    std::string body;
    std::string header(std::string_view name) const;
};

// "OK", "Not Found", "Bad Gateway": the reason phrase for a status code, "" when unknown.
std::string_view httpReasonPhrase(long status);

// The connection could not carry the request (refused, reset, TLS, timeout).
class TransportError : public Error {
  public:
    enum class Kind { Connect, Timeout, Reset, Tls, Cancelled, Other };
    TransportError(Kind kind, const std::string& message) : Error(message), kind_(kind) {}
    Kind kind() const { return kind_; }

  private:
    Kind kind_;
};

// A raw byte stream after an HTTP Upgrade (WebSocket for exec).
class UpgradedConnection {
  public:
    virtual ~UpgradedConnection() = default;
    virtual const HttpResponse& handshake() const = 0;  // status 101 and its headers
    // Reads up to buffer.size() bytes; returns 0 at end of stream. Waits at most timeout
    // (0 = forever) and throws TransportError(Timeout) after it.
    virtual size_t read(char* buffer, size_t size, std::chrono::milliseconds timeout) = 0;
    // Writes what the peer takes within timeout (0 = until all is written) and returns how
    // many bytes that was: fewer than bytes.size() only once the time is up. A peer that stops
    // reading must not hold a writer past its deadline.
    virtual size_t write(std::string_view bytes, std::chrono::milliseconds timeout) = 0;
};

struct ClientCertificate {
    std::string certPem;
    std::string keyPem;
};

class Transport {
  public:
    virtual ~Transport() = default;
    virtual HttpResponse send(const HttpRequest& request) = 0;
    // Sends request (with its Upgrade headers) and hands over the socket after 101.
    // A non-101 answer comes back as the handshake() response with its body.
    virtual std::unique_ptr<UpgradedConnection> upgrade(const HttpRequest& request) = 0;
    // Credentials from an exec plugin can change the TLS identity at run time.
    virtual void setClientCertificate(const ClientCertificate& certificate) = 0;
};

struct RestConfig;
class CancelFlag;
// libcurl-backed transport: one connection reused, HTTP/2 where offered.
std::unique_ptr<Transport> makeCurlTransport(const RestConfig& config, const CancelFlag* cancel);

}  // namespace rossoctl::kube
