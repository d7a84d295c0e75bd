// Client: the request pipeline (auth, retries, tracing, errors); the verbs are in
// client_verbs.cpp.
#include "rossoctl/kube/client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

#include "rossoctl/kube/json_depth.hpp"

namespace rossoctl::kube {

namespace {

constexpr std::chrono::milliseconds kCancelCheckInterval{200};

// The apiserver's quota admission answers 409 about the ResourceQuota, not the object sent,
// when concurrent requests raced to update its usage; kubectl shows it, a client may retry.
bool isQuotaConflict(const std::string& body) {
    return apiErrorFromResponse(409, body).isQuotaConflict();
}

bool sameCertificate(const ClientCertificate& a, const ClientCertificate& b) {
    return a.certPem == b.certPem && a.keyPem == b.keyPem;
}

void eraseHeader(Headers& headers, std::string_view name) {
    std::erase_if(headers, [&](const auto& header) {
        return header.first.size() == name.size() &&
               std::equal(name.begin(), name.end(), header.first.begin(), [](char a, char b) {
                   return std::tolower(static_cast<unsigned char>(a)) ==
                          std::tolower(static_cast<unsigned char>(b));
               });
    });
}

}  // namespace

Client::Client(RestConfig config, std::unique_ptr<Transport> transport, const Clock& clock,
               RequestTracer tracer, const CancelFlag* cancel,
               std::unique_ptr<Authenticator> authenticator, RetryPolicy retry, Random* random)
    : config_(std::move(config)),
      transport_(std::move(transport)),
      clock_(clock),
      tracer_(tracer),
      cancel_(cancel),
      authenticator_(std::move(authenticator)),
      retry_(retry),
      random_(random) {
    // Built here, not by the caller, so it refers to this client's own copy of the config.
    if (!authenticator_) authenticator_ = std::make_unique<Authenticator>(config_, clock_);
}

HttpRequest Client::prepare(const std::string& method, const std::string& pathAndQuery,
                            const std::string& body, const std::string& contentType) {
    if (streaming_)
        throw std::logic_error(
            fmt::format("internal error: {} {} on a client whose watch or stream is still reading",
                        method, pathAndQuery));
    HttpRequest request;
    request.method = method;
    request.url = config_.server + pathAndQuery;
    request.headers = {{"Accept", "application/json"},
                       {"User-Agent", std::string("rossoctl/") + ROSSOCTL_VERSION}};
    if (!contentType.empty()) request.headers.emplace_back("Content-Type", contentType);
    request.body = body;
    request.timeout =
        config_.requestTimeout.count() > 0 ? config_.requestTimeout : kBufferedRequestTimeout;
    return request;
}

void Client::authorize(HttpRequest& request) {
    eraseHeader(request.headers, "Authorization");
    if (auto authorization = authenticator_->authorization()) {
        // A token from a file or a plugin with CR or LF in it would add header lines (or end the
        // request) on the wire: refused, as client-go refuses such a header value.
        for (unsigned char c : *authorization)
            if ((c < 0x20 && c != '\t') || c == 0x7f)
                throw ConfigError(
                    "the credential for this cluster holds a control character (CR, LF, ...), "
                    "which cannot go in an HTTP header; check the token, its file or the "
                    "credential plugin's output");
        request.headers.emplace_back("Authorization", *authorization);
    }
    auto certificate = authenticator_->pluginCertificate();
    if (certificate &&
        (!pushedCertificate_ || !sameCertificate(*pushedCertificate_, *certificate))) {
        transport_->setClientCertificate(*certificate);
        pushedCertificate_ = std::move(certificate);
    }
}

HttpResponse Client::sendOnce(HttpRequest& request) {
    authorize(request);
    tracer_.request(request);
    const auto started = clock_.monotonic();
    ++stats_.requests;
    HttpResponse response;
    try {
        response = transport_->send(request);
    } catch (const TransportError& error) {
        tracer_.failure(request, error.what());
        throw;
    }
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(clock_.monotonic() - started);
    tracer_.response(request, response.status, took, response.body);
    return response;
}

void Client::throwIfCancelled() const {
    if (cancel_ && cancel_->cancelled()) {
        throw TransportError(TransportError::Kind::Cancelled, "interrupted");
    }
}

bool Client::pauseFits(std::chrono::milliseconds delay) const {
    return !deadline_ || clock_.monotonic() + delay < deadline_->at;
}

void Client::pause(std::chrono::milliseconds delay) {
    // Slices, so Ctrl-C during a long Retry-After ends the wait promptly.
    while (delay.count() > 0) {
        throwIfCancelled();
        auto slice = std::min(delay, kCancelCheckInterval);
        clock_.sleepFor(slice);
        delay -= slice;
    }
    throwIfCancelled();
}

Client::DeadlineScope::DeadlineScope(Client& client, CommandDeadline deadline)
    : client_(client), previous_(client.deadline_) {
    if (!previous_ || deadline.at < previous_->at) client_.deadline_ = std::move(deadline);
}

Client::DeadlineScope::~DeadlineScope() {
    client_.deadline_ = previous_;
}

void Client::deadlinePassed(const HttpRequest& request) const {
    throw TransportError(TransportError::Kind::Timeout,
                         fmt::format("{} passed before the server answered {} {}", deadline_->what,
                                     request.method, request.url));
}

bool Client::boundByDeadline(HttpRequest& request) const {
    if (!deadline_) return false;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_->at - clock_.monotonic());
    if (left.count() <= 0) deadlinePassed(request);
    if (request.timeout.count() > 0 && request.timeout <= left) return false;
    request.timeout = left;
    return true;
}

HttpResponse Client::execute(HttpRequest& request, bool idempotent, const bool* streamed) {
    // A command's --timeout bounds its requests too: a stalled GET before its wait began held
    // `agents wait --timeout 3s` for the 5-minute default.
    const bool bound = boundByDeadline(request);
    bool reauthenticated = false;
    // Retries share the request's deadline: a server that resets the connection after a trickle
    // does not get the whole time again on each attempt.
    const std::chrono::milliseconds budget = request.timeout;
    const auto start = clock_.monotonic();
    for (int attempt = 1;; ++attempt) {
        throwIfCancelled();
        if (budget.count() > 0) {
            const auto left = budget - std::chrono::duration_cast<std::chrono::milliseconds>(
                                           clock_.monotonic() - start);
            if (left.count() <= 0) {
                if (bound) deadlinePassed(request);
                throw TransportError(
                    TransportError::Kind::Timeout,
                    fmt::format("{} {}: no answer within {} s, retries included", request.method,
                                request.url, budget.count() / 1000));
            }
            request.timeout = left;
        }
        AttemptOutcome outcome;
        outcome.attempt = attempt;
        outcome.idempotent = idempotent;
        HttpResponse response;
        try {
            response = sendOnce(request);
        } catch (const TransportError& error) {
            using Kind = TransportError::Kind;
            if (error.kind() == Kind::Timeout && bound) deadlinePassed(request);
            if (error.kind() != Kind::Connect && error.kind() != Kind::Reset) throw;
            if (streamed && *streamed) throw;
            outcome.transportFailed = true;
            outcome.connectFailed = error.kind() == Kind::Connect;
            auto delay = retryDelay(retry_, outcome);
            if (!delay || !pauseFits(*delay)) throw;
            ++stats_.retries;
            pause(*delay);
            continue;
        }
        if (response.status == 401 && !reauthenticated && authenticator_->invalidate()) {
            // Credentials may have rotated (exec plugin, token file): one fresh attempt.
            reauthenticated = true;
            --attempt;
            ++stats_.retries;
            continue;
        }
        if (response.status < 400) return response;
        outcome.httpStatus = response.status;
        outcome.retryAfter = response.header("Retry-After");
        outcome.quotaConflict = response.status == 409 && isQuotaConflict(response.body);
        auto delay = retryDelay(retry_, outcome);
        // A retry the deadline leaves no time for: the server's answer is the last word.
        if (!delay || !pauseFits(*delay))
            throw apiErrorFromResponse(response.status, response.body);
        ++stats_.retries;
        pause(*delay);
    }
}

HttpResponse Client::request(const std::string& method, const std::string& pathAndQuery,
                             const std::string& body, const std::string& contentType,
                             bool idempotent) {
    HttpRequest request = prepare(method, pathAndQuery, body, contentType);
    return execute(request, idempotent);
}

json Client::parseBody(const HttpRequest& request, const HttpResponse& response,
                       size_t maxMemory) const {
    if (response.body.empty()) return json::object();
    const JsonShape shape = measureJson(response.body);
    if (shape.tooDeep)
        throw Error(
            fmt::format("the server sent a response to {} {} nested over {} levels deep; "
                        "refused",
                        request.method, request.url, kMaxJsonDepth));
    if (shape.memoryBytes > maxMemory)
        throw Error(fmt::format(
            "the server sent a response to {} {} that would take over {} MiB of memory to read "
            "({} KiB of JSON); refused",
            request.method, request.url, maxMemory >> 20, response.body.size() >> 10));
    json parsed = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
        throw Error(fmt::format("the server sent a response to {} {} that is not JSON",
                                request.method, request.url));
    }
    return parsed;
}

json Client::getPath(const std::string& path, size_t maxBodyBytes) {
    HttpRequest request = prepare("GET", path, {}, {});
    request.maxBodyBytes = maxBodyBytes;
    HttpResponse response = execute(request, true);
    // A GET always has a body; none means the connection closed before it (curl reports 200).
    if (response.body.empty())
        throw Error(fmt::format("the server sent an empty response to GET {}", request.url));
    return parseBody(request, response);
}

std::unique_ptr<UpgradedConnection> Client::upgrade(const std::string& pathAndQuery,
                                                    const Headers& headers) {
    HttpRequest request = prepare("GET", pathAndQuery, {}, {});
    request.timeout = config_.requestTimeout;  // the handshake's: a session has no deadline
    // A kubelet answers a WebSocket upgrade that accepts only JSON with 406 (the apiserver
    // lets it through): accept anything, as a browser's handshake does.
    eraseHeader(request.headers, "Accept");
    request.headers.emplace_back("Accept", "*/*");
    for (const auto& header : headers) {
        eraseHeader(request.headers, header.first);
        request.headers.push_back(header);
    }
    bool reauthenticated = false;
    while (true) {
        throwIfCancelled();
        authorize(request);
        tracer_.request(request);
        const auto started = clock_.monotonic();
        ++stats_.requests;
        std::unique_ptr<UpgradedConnection> connection;
        try {
            connection = transport_->upgrade(request);
        } catch (const TransportError& error) {
            tracer_.failure(request, error.what());
            throw;
        }
        const HttpResponse& handshake = connection->handshake();
        auto took =
            std::chrono::duration_cast<std::chrono::milliseconds>(clock_.monotonic() - started);
        tracer_.response(request, handshake.status, took, handshake.body);
        if (handshake.status == 401 && !reauthenticated && authenticator_->invalidate()) {
            reauthenticated = true;
            ++stats_.retries;
            continue;
        }
        if (handshake.status >= 400) throw apiErrorFromResponse(handshake.status, handshake.body);
        return connection;
    }
}

}  // namespace rossoctl::kube
