// The streams a hostile pod writes (artifact tar, exec WebSocket) as fuzz targets. They use
// only the kube layer and the extractor, so the CI smoke builds a small library, not the core.
#include <algorithm>
#include <chrono>
#include <sstream>

#include "rossoctl/app/extract.hpp"
#include "rossoctl/clock.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/exec.hpp"
#include "rossoctl/kube/websocket.hpp"
#include "targets.hpp"

namespace fuzz {
namespace {

using namespace rossoctl;

// Serves the input as the server's side of an exec WebSocket after a valid handshake.
class ExecConnection : public kube::UpgradedConnection {
  public:
    ExecConnection(kube::HttpResponse handshake, std::string_view bytes)
        : handshake_(std::move(handshake)), bytes_(bytes) {}
    const kube::HttpResponse& handshake() const override { return handshake_; }
    size_t read(char* buffer, size_t size, std::chrono::milliseconds) override {
        const size_t n = std::min({size, bytes_.size(), step_});
        std::copy_n(bytes_.data(), n, buffer);
        bytes_.remove_prefix(n);
        step_ = step_ % 997 + 13;
        return n;
    }
    size_t write(std::string_view bytes, std::chrono::milliseconds) override {
        return bytes.size();
    }

  private:
    kube::HttpResponse handshake_;
    std::string_view bytes_;
    size_t step_ = 5;
};

class ExecTransport : public kube::Transport {
  public:
    explicit ExecTransport(std::string_view bytes) : bytes_(bytes) {}
    kube::HttpResponse send(const kube::HttpRequest&) override { return {}; }
    std::unique_ptr<kube::UpgradedConnection> upgrade(const kube::HttpRequest& request) override {
        std::string key;
        for (const auto& [name, value] : request.headers)
            if (name == "Sec-WebSocket-Key") key = value;
        kube::HttpResponse handshake{101,
                                     {{"sec-websocket-accept", kube::wsAcceptFor(key)},
                                      {"sec-websocket-protocol", "v5.channel.k8s.io"}},
                                     {}};
        return std::make_unique<ExecConnection>(std::move(handshake), bytes_);
    }
    void setClientCertificate(const kube::ClientCertificate&) override {}

  private:
    std::string_view bytes_;
};

}  // namespace

// The artifact stream a pod sends: the tar/pax reader and the extractor's caps (hash only, so
// the fuzzer does not write files), fed in uneven pieces.
void tarArchive(std::string_view input) {
    try {
        app::ExtractLimits limits;
        limits.maxBytes = 1 << 20;
        limits.maxEntries = 64;
        limits.maxFileBytes = 1 << 18;
        app::TarExtractor extractor("", limits);
        size_t step = 1;
        for (size_t pos = 0; pos < input.size(); pos += step, step = step % 509 + 3)
            extractor.feed(input.substr(pos, step));
        extractor.finish();
        for (const auto& file : extractor.files()) (void)file.sha256.size();
    } catch (const Error&) {
        // A damaged or over-limit archive is refused cleanly.
    }
}

// The exec stream: frames, channel demultiplexing and the status channel's reassembly.
void execStream(std::string_view input) {
    static SystemClock clock;
    std::ostringstream trace;
    kube::RestConfig config;
    config.server = "https://fuzz.invalid";
    kube::Client client(config, std::make_unique<ExecTransport>(input), clock,
                        kube::RequestTracer(trace, 0));
    try {
        kube::ExecRequest request{"ns", "pod", "run", {"true"}, false, {}};
        size_t seen = 0;
        kube::ExecIo io;
        io.onStdout = [&](std::string_view bytes) { seen += bytes.size(); };
        io.onStderr = [&](std::string_view bytes) { seen += bytes.size(); };
        (void)kube::execInPod(client, request, io).exitCode;
    } catch (const Error&) {
        // A clean, one-line failure is the right answer to a hostile stream.
    }
}

}  // namespace fuzz
