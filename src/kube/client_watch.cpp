// Client::watch: newline-delimited JSON events read from a streaming response; and
// Client::streamGet, the same stream handed on as bytes.
#include <fmt/format.h>

#include <exception>
#include <string>

#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/json_depth.hpp"

namespace rossoctl::kube {

namespace {

// One watch event: an object is at most a few MiB in etcd; a server sending more is refused.
constexpr size_t kMaxWatchLine = 16 * 1024 * 1024;

bool isBlank(std::string_view line) {
    return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// One event line; throws ApiError for an ERROR event that carries a Status.
WatchEvent parseWatchEvent(std::string_view line) {
    const JsonShape shape = measureJson(line);
    if (shape.tooDeep)
        throw Error(fmt::format("the server sent a watch event nested over {} levels deep; refused",
                                kMaxJsonDepth));
    if (shape.memoryBytes > kMaxJsonMemoryBytes)
        throw Error(fmt::format(
            "the server sent a watch event that would take over {} MiB of memory to read; refused",
            kMaxJsonMemoryBytes >> 20));
    json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
    // Checked by type, so a malformed event is this one clean error, never a json exception.
    const bool wellFormed = parsed.is_object() && parsed.contains("type") &&
                            parsed["type"].is_string() &&
                            (!parsed.contains("object") || parsed["object"].is_object());
    if (!wellFormed) {
        throw Error(fmt::format("the server sent a watch event that is not JSON: {}",
                                maskSecrets(line.substr(0, 80))));
    }
    WatchEvent event{parsed["type"].get<std::string>(), parsed.value("object", json::object()),
                     shape.memoryBytes};
    if (event.type == "ERROR") {
        const auto& codeField = event.object.contains("code") ? event.object["code"] : json();
        long code = codeField.is_number_integer() ? codeField.get<long>() : 500L;
        throw apiErrorFromResponse(code, event.object.dump());
    }
    return event;
}

// A stream that ends inside an event was cut (a server or proxy went away mid-write), not sent
// a malformed event: as client-go does at an unexpected EOF, the watch just ends there.
bool endsInsideAnEvent(std::string_view fragment) {
    const JsonShape shape = measureJson(fragment);
    if (shape.tooDeep || shape.memoryBytes > kMaxJsonMemoryBytes) return false;
    try {
        const json whole = json::parse(fragment);
        return whole.is_discarded();
    } catch (const json::parse_error& error) {
        return error.byte > fragment.size();  // the parser ran out of bytes, not into a bad one
    } catch (const json::exception&) {
        return false;
    }
}

// Marks the client busy while its stream is read (see Client::streaming_).
class StreamingScope {
  public:
    explicit StreamingScope(bool& flag) : flag_(flag) { flag_ = true; }
    ~StreamingScope() { flag_ = false; }
    StreamingScope(const StreamingScope&) = delete;
    StreamingScope& operator=(const StreamingScope&) = delete;

  private:
    bool& flag_;
};

}  // namespace

void Client::watch(const ResourceRef& ref, const std::string& ns, const ListOptions& options,
                   const std::function<bool(const WatchEvent&)>& onEvent,
                   std::chrono::milliseconds timeout) {
    std::string query = "?watch=true";
    auto add = [&](const char* key, const std::string& value) {
        if (!value.empty()) query += fmt::format("&{}={}", key, urlEncode(value));
    };
    add("labelSelector", options.labelSelector);
    add("fieldSelector", options.fieldSelector);
    add("resourceVersion", options.resourceVersion);
    if (options.timeoutSeconds > 0) add("timeoutSeconds", std::to_string(options.timeoutSeconds));
    if (options.allowWatchBookmarks) add("allowWatchBookmarks", "true");

    HttpRequest request = prepare("GET", collectionPath(ref, ns) + query, {}, {});
    // A stream has no deadline of its own: only the caller's, or --request-timeout's.
    request.timeout = timeout.count() > 0 ? timeout : config_.requestTimeout;

    std::string pending;
    size_t scanned = 0;  // bytes of `pending` known to hold no newline
    bool streamed = false;
    bool stopped = false;
    std::exception_ptr failure;
    // Never throws: exceptions must not cross the transport (libcurl is C), so they are kept.
    auto deliver = [&](std::string_view line) {
        try {
            if (!onEvent(parseWatchEvent(line))) stopped = true;
        } catch (...) {
            failure = std::current_exception();
            stopped = true;
        }
        return !stopped;
    };
    // Each chunk is searched once: a long line arriving in many chunks is not rescanned from
    // its start each time (that was quadratic in the line's length).
    request.onBodyChunk = [&](std::string_view chunk) {
        streamed = true;
        pending.append(chunk);
        size_t start = 0;
        for (size_t end; (end = pending.find('\n', std::max(start, scanned))) != std::string::npos;
             start = end + 1) {
            std::string_view line(pending.data() + start, end - start);
            if (!isBlank(line) && !deliver(line)) return false;
        }
        pending.erase(0, start);
        scanned = pending.size();
        if (pending.size() > kMaxWatchLine) {
            failure = std::make_exception_ptr(Error(fmt::format(
                "the server sent a watch event over {} MiB; refused", kMaxWatchLine >> 20)));
            stopped = true;
            return false;
        }
        return true;
    };

    bool cut = false;
    try {
        StreamingScope busy(streaming_);
        execute(request, /*idempotent=*/true, &streamed);
    } catch (const TransportError& error) {
        // The caller's own deadline, or a stream cut after events: both end the watch.
        // The command's own deadline ends more than this watch: its caller must hear of it.
        const bool commandOver = deadline_ && clock_.monotonic() >= deadline_->at;
        const bool deadline =
            error.kind() == TransportError::Kind::Timeout && timeout.count() > 0 && !commandOver;
        const bool cutAfterEvents = error.kind() == TransportError::Kind::Reset && streamed;
        if (!deadline && !cutAfterEvents) throw;
        cut = true;
    }
    if (failure) std::rethrow_exception(failure);
    // What came after the last newline of a cut stream is part of an event, never a whole one.
    if (!stopped && !cut && !isBlank(pending) && !endsInsideAnEvent(pending)) {
        deliver(pending);
        if (failure) std::rethrow_exception(failure);
    }
}

void Client::streamGet(const std::string& pathAndQuery,
                       const std::function<bool(std::string_view chunk)>& onChunk,
                       std::chrono::milliseconds timeout) {
    HttpRequest request = prepare("GET", pathAndQuery, {}, {});
    // A stream has no deadline of its own: only the caller's, or --request-timeout's.
    request.timeout = timeout.count() > 0 ? timeout : config_.requestTimeout;
    bool streamed = false;
    std::exception_ptr failure;
    // Never throws: exceptions must not cross the transport (libcurl is C), so they are kept.
    request.onBodyChunk = [&](std::string_view chunk) {
        streamed = true;
        try {
            return onChunk(chunk);
        } catch (...) {
            failure = std::current_exception();
            return false;
        }
    };
    try {
        StreamingScope busy(streaming_);
        execute(request, /*idempotent=*/true, &streamed);
    } catch (const TransportError& error) {
        if (failure) std::rethrow_exception(failure);
        if (error.kind() != TransportError::Kind::Reset || !streamed) throw;
    }
    if (failure) std::rethrow_exception(failure);
}

}  // namespace rossoctl::kube
