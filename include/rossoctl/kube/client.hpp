#pragma once
// Typed REST verbs over the transport seam, with auth, retries, tracing and ApiError.
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/auth.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/config.hpp"
#include "rossoctl/kube/json_depth.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/kube/retry.hpp"
#include "rossoctl/kube/trace.hpp"
#include "rossoctl/kube/transport.hpp"
#include "rossoctl/random.hpp"

namespace rossoctl::kube {

using nlohmann::json;

struct ListOptions {
    std::string labelSelector;
    std::string fieldSelector;
    int limit = 0;  // page size; 0 = server default (all)
    std::string continueToken;
    std::string resourceVersion;
    std::string resourceVersionMatch;  // list only: "NotOlderThan" or "Exact"
    int timeoutSeconds = 0;            // watch only
    bool allowWatchBookmarks = false;  // watch only: the server's progress, as BOOKMARK events
};

struct DeleteOptions {
    std::optional<std::string> preconditionUid;
    std::optional<std::string> preconditionResourceVersion;
    std::string propagationPolicy;  // Foreground | Background | Orphan
    std::optional<int> gracePeriodSeconds;
    bool dryRun = false;
};

enum class PatchType { Json, Merge, Apply };

struct WriteOptions {
    bool dryRun = false;  // dryRun=All: the apiserver validates and admits, stores nothing
    std::string fieldManager = "rossoctl";
    bool force = false;  // server-side apply conflicts
};

struct WatchEvent {
    std::string type;  // ADDED MODIFIED DELETED BOOKMARK ERROR
    json object;
    size_t bytes = 0;  // what keeping the object costs in memory (measureJson of its line)
};

// Requests sent, for benchmarks and `-v`; counted per client.
struct RequestStats {
    int requests = 0;
    int retries = 0;
};

// A time a command promised to end by (its --timeout): every request sent meanwhile gets at most
// what is left of it, and one cut short by it says so, naming `what` ("--timeout 3s").
struct CommandDeadline {
    std::chrono::steady_clock::time_point at;
    std::string what;
};

class Client {
  public:
    Client(RestConfig config, std::unique_ptr<Transport> transport, const Clock& clock,
           RequestTracer tracer, const CancelFlag* cancel = nullptr,
           std::unique_ptr<Authenticator> authenticator = nullptr, RetryPolicy retry = {},
           Random* random = nullptr);

    const RestConfig& config() const { return config_; }
    const Clock& clock() const { return clock_; }
    // The injected source (keys, masks), or the system's when none was given.
    Random& random() { return random_ ? *random_ : systemRandom_; }
    const RequestStats& stats() const { return stats_; }

    json get(const ResourceRef& ref, const std::string& ns, const std::string& name);
    std::optional<json> getIfExists(const ResourceRef& ref, const std::string& ns,
                                    const std::string& name);
    // Every page, following `continue`; items merged into one List.
    json list(const ResourceRef& ref, const std::string& ns, const ListOptions& options = {});
    // One page at a time; return false from onPage to stop. A server whose `continue` never
    // ends is refused after kMaxListPages pages.
    void listPages(const ResourceRef& ref, const std::string& ns, ListOptions options,
                   const std::function<bool(const json& page)>& onPage);
    json create(const ResourceRef& ref, const std::string& ns, const json& object,
                const WriteOptions& options = {});
    // PUT: object carries metadata.resourceVersion, so a concurrent change gives 409.
    json update(const ResourceRef& ref, const std::string& ns, const json& object,
                const WriteOptions& options = {});
    json updateStatus(const ResourceRef& ref, const std::string& ns, const json& object);
    json patch(const ResourceRef& ref, const std::string& ns, const std::string& name,
               PatchType type, const std::string& body, const WriteOptions& options = {});
    // Server-side apply of a whole object (field manager "rossoctl").
    json apply(const ResourceRef& ref, const std::string& ns, const json& object,
               const WriteOptions& options = {});
    json remove(const ResourceRef& ref, const std::string& ns, const std::string& name,
                const DeleteOptions& options = {});
    // Streams events until onEvent returns false, the server ends the watch, or timeout.
    // Throws ApiError for an ERROR event carrying a Status (e.g. 410 Gone).
    void watch(const ResourceRef& ref, const std::string& ns, const ListOptions& options,
               const std::function<bool(const WatchEvent&)>& onEvent,
               std::chrono::milliseconds timeout = std::chrono::milliseconds{0});
    // A GET whose body is streamed (pod logs): each piece of a 2xx body goes to onChunk as it
    // arrives, nothing is kept; return false to stop. Ends when the server closes the stream or
    // cuts it after bytes arrived. Throws ApiError (>= 400) and TransportError. timeout bounds
    // the whole stream (TransportError Timeout past it); 0 keeps --request-timeout's.
    void streamGet(const std::string& pathAndQuery,
                   const std::function<bool(std::string_view chunk)>& onChunk,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds{0});
    // A raw GET of an absolute API path (/version, /apis/GROUP); throws ApiError.
    // maxBodyBytes: what the answer may hold (transport.hpp's caps per kind of request).
    json getPath(const std::string& path, size_t maxBodyBytes = kMaxListBodyBytes);
    // Any request; retries per policy when idempotent. Throws ApiError on >= 400.
    HttpResponse request(const std::string& method, const std::string& pathAndQuery,
                         const std::string& body = {}, const std::string& contentType = {},
                         bool idempotent = true);
    // An Upgrade request (WebSocket) with the same TLS and credentials.
    std::unique_ptr<UpgradedConnection> upgrade(const std::string& pathAndQuery,
                                                const Headers& headers);

    // While one lives, requests end by `deadline` (or an earlier one already set); the one
    // before is restored when it goes.
    class DeadlineScope {
      public:
        DeadlineScope(Client& client, CommandDeadline deadline);
        ~DeadlineScope();
        DeadlineScope(const DeadlineScope&) = delete;
        DeadlineScope& operator=(const DeadlineScope&) = delete;

      private:
        Client& client_;
        std::optional<CommandDeadline> previous_;
    };
    const std::optional<CommandDeadline>& deadline() const { return deadline_; }

  private:
    // Shortens request.timeout to what is left of the deadline; true when that bound it.
    // Throws TransportError(Timeout) naming the deadline when nothing is left.
    bool boundByDeadline(HttpRequest& request) const;
    [[noreturn]] void deadlinePassed(const HttpRequest& request) const;
    // listPages; `maxTotalBytes` bounds all pages' bodies together (list() keeps them all), and
    // kMaxJsonMemoryBytes their parsed objects. onPage may take the page's contents.
    void pagesOf(const ResourceRef& ref, const std::string& ns, ListOptions options,
                 const std::function<bool(json& page)>& onPage, size_t maxTotalBytes);
    HttpResponse sendOnce(HttpRequest& request);
    HttpRequest prepare(const std::string& method, const std::string& pathAndQuery,
                        const std::string& body, const std::string& contentType);
    // The retry loop; `streamed` (watch) turns retries off once bytes were handed out.
    HttpResponse execute(HttpRequest& request, bool idempotent, const bool* streamed = nullptr);
    // Sets Authorization and pushes an exec plugin's client certificate into the transport.
    void authorize(HttpRequest& request);
    void pause(std::chrono::milliseconds delay);
    // False when sleeping `delay` would reach the deadline: no time is left to send again.
    bool pauseFits(std::chrono::milliseconds delay) const;
    void throwIfCancelled() const;
    // Refuses a body nested too deep, or whose parse would take more than maxMemory (measureJson).
    json parseBody(const HttpRequest& request, const HttpResponse& response,
                   size_t maxMemory = kMaxJsonMemoryBytes) const;

    RestConfig config_;
    std::unique_ptr<Transport> transport_;
    const Clock& clock_;
    RequestTracer tracer_;
    const CancelFlag* cancel_;
    std::unique_ptr<Authenticator> authenticator_;
    RetryPolicy retry_;
    Random* random_;
    SystemRandom systemRandom_;
    RequestStats stats_;
    std::optional<ClientCertificate> pushedCertificate_;
    std::optional<CommandDeadline> deadline_;
    // True while a watch or stream is reading: its connection is in use, so a request made
    // from its callback must go through another Client (libcurl would reuse the busy handle).
    bool streaming_ = false;
};

}  // namespace rossoctl::kube
