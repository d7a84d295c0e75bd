#pragma once
// Test doubles at the transport seam and for time: a scripted server and a clock that
// moves only when told (sleepFor advances it instead of sleeping).
#include <catch2/catch.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/transport.hpp"

namespace rossoctl::testing {

// Thread-safe: verify's checks read and move it from several threads.
class FakeClock : public Clock {
  public:
    std::chrono::system_clock::time_point now() const override {
        std::lock_guard lock(mutex_);
        return wall_;
    }
    std::chrono::steady_clock::time_point monotonic() const override {
        std::lock_guard lock(mutex_);
        return steady_;
    }
    void sleepFor(std::chrono::milliseconds duration) const override {
        {
            std::lock_guard lock(mutex_);
            sleeps_.push_back(duration);
        }
        advance(duration);
    }
    void advance(std::chrono::milliseconds duration) const {
        std::lock_guard lock(mutex_);
        wall_ += duration;
        steady_ += duration;
    }
    std::chrono::milliseconds totalSlept() const {
        std::lock_guard lock(mutex_);
        std::chrono::milliseconds total{0};
        for (auto sleep : sleeps_) total += sleep;
        return total;
    }

  private:
    mutable std::mutex mutex_;
    mutable std::chrono::system_clock::time_point wall_{std::chrono::seconds(1'700'000'000)};
    mutable std::chrono::steady_clock::time_point steady_{};
    mutable std::vector<std::chrono::milliseconds> sleeps_;
};

// One scripted answer: a response, a transport failure, or a streamed body in chunks.
struct ScriptedReply {
    kube::HttpResponse response;
    std::optional<kube::TransportError> error;
    std::vector<std::string> chunks;
};

struct FakeServer {
    std::deque<ScriptedReply> replies;
    std::vector<kube::HttpRequest> requests;
    std::vector<kube::ClientCertificate> certificates;
    const FakeClock* clock = nullptr;
    std::chrono::milliseconds latency{0};

    void reply(long status, std::string body, kube::Headers headers = {}) {
        replies.push_back(
            {kube::HttpResponse{status, std::move(headers), std::move(body)}, {}, {}});
    }
    void fail(kube::TransportError::Kind kind, const std::string& message) {
        replies.push_back({{}, kube::TransportError(kind, message), {}});
    }
    void stream(std::vector<std::string> chunks) {
        replies.push_back({kube::HttpResponse{200, {}, {}}, {}, std::move(chunks)});
    }
    // A streamed body whose connection then fails, as a server that goes away mid-stream.
    void streamThenFail(std::vector<std::string> chunks, kube::TransportError::Kind kind) {
        replies.push_back(
            {{}, kube::TransportError(kind, "the stream was cut"), std::move(chunks)});
    }
    const kube::HttpRequest& last() const { return requests.back(); }
};

class FakeTransport : public kube::Transport {
  public:
    explicit FakeTransport(FakeServer& server) : server_(server) {}

    kube::HttpResponse send(const kube::HttpRequest& request) override {
        server_.requests.push_back(request);
        if (server_.replies.empty())
            FAIL("unexpected request " << request.method << " " << request.url);
        ScriptedReply reply = std::move(server_.replies.front());
        server_.replies.pop_front();
        if (server_.clock) server_.clock->advance(server_.latency);
        if (!reply.chunks.empty() && request.onBodyChunk) {
            for (const auto& chunk : reply.chunks) {
                if (!request.onBodyChunk(chunk)) break;
            }
        }
        if (reply.error) throw *reply.error;
        return reply.response;
    }

    std::unique_ptr<kube::UpgradedConnection> upgrade(const kube::HttpRequest& request) override {
        FAIL("unexpected upgrade " << request.url);
        return nullptr;
    }

    void setClientCertificate(const kube::ClientCertificate& certificate) override {
        server_.certificates.push_back(certificate);
    }

  private:
    FakeServer& server_;
};

inline kube::RestConfig fakeRestConfig() {
    kube::RestConfig config;
    config.server = "https://api.test:6443";
    config.token = "s3cr3t-token-0123456789";
    config.namespaceName = "default";
    return config;
}

// A Client wired to a FakeServer and FakeClock, tracing into `trace`.
struct ClientFixture {
    explicit ClientFixture(int verbosity = 0, kube::RestConfig restConfig = fakeRestConfig(),
                           std::unique_ptr<kube::Authenticator> authenticator = nullptr,
                           const kube::CancelFlag* cancel = nullptr)
        : config(std::move(restConfig)) {
        server.clock = &clock;
        client = std::make_unique<kube::Client>(config, std::make_unique<FakeTransport>(server),
                                                clock, kube::RequestTracer(trace, verbosity),
                                                cancel, std::move(authenticator));
    }

    FakeClock clock;
    FakeServer server;
    std::ostringstream trace;
    kube::RestConfig config;
    std::unique_ptr<kube::Client> client;
};

}  // namespace rossoctl::testing
