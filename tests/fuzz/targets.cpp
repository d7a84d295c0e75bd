#include "targets.hpp"

#include <sstream>

#include "rossoctl/app/context.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/auth.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/config.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/kube/websocket.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/yaml.hpp"

namespace fuzz {
namespace {

using rossoctl::Error;
using namespace rossoctl;

template <class Fn>
void expectingCleanErrors(Fn&& fn) {
    try {
        fn();
    } catch (const Error&) {
        // A clean, one-line failure is the right answer to junk input.
    }
}

void kubeconfig(std::string_view input) {
    expectingCleanErrors([&] { kube::parseKubeConfig(std::string(input), "fuzz", "/tmp"); });
}

void execCredential(std::string_view input) {
    expectingCleanErrors(
        [&] { kube::parseExecCredential(std::string(input), "client.authentication.k8s.io/v1"); });
}

void apiStatus(std::string_view input) {
    // Never throws: it builds the error from whatever the server sent.
    auto error = kube::apiErrorFromResponse(500, std::string(input));
    (void)error.what();
}

// A streaming transport that hands the input over in small, uneven chunks.
class ChunkedTransport : public kube::Transport {
  public:
    explicit ChunkedTransport(std::string_view body) : body_(body) {}
    kube::HttpResponse send(const kube::HttpRequest& request) override {
        size_t step = 1;
        for (size_t pos = 0; pos < body_.size(); pos += step, step = step % 61 + 7)
            if (request.onBodyChunk && !request.onBodyChunk(body_.substr(pos, step))) break;
        return {200, {}, {}};
    }
    std::unique_ptr<kube::UpgradedConnection> upgrade(const kube::HttpRequest&) override {
        return nullptr;
    }
    void setClientCertificate(const kube::ClientCertificate&) override {}

  private:
    std::string_view body_;
};

void watchStream(std::string_view input) {
    static SystemClock clock;
    std::ostringstream trace;
    kube::RestConfig config;
    config.server = "https://fuzz.invalid";
    kube::Client client(config, std::make_unique<ChunkedTransport>(input), clock,
                        kube::RequestTracer(trace, 0));
    expectingCleanErrors([&] {
        client.watch(kube::resources::pods(), "ns", {},
                     [](const kube::WatchEvent& event) { return !event.type.empty(); });
    });
}

void websocketFrames(std::string_view input) {
    expectingCleanErrors([&] {
        kube::WsFrameParser parser(1 << 20);
        parser.feed(input);
        while (auto frame = parser.next()) (void)frame->payload.size();
    });
}

void envFile(std::string_view input) {
    expectingCleanErrors([&] { model::parseEnvFile(std::string(input), "fuzz.env"); });
}

void envAssignment(std::string_view input) {
    expectingCleanErrors([&] { model::parseEnvAssignment(std::string(input), "--env"); });
}

void quantity(std::string_view input) {
    expectingCleanErrors([&] { model::parseQuantity(std::string(input), "--memory"); });
}

void duration(std::string_view input) {
    expectingCleanErrors([&] { app::parseDuration(std::string(input), "--timeout"); });
}

void yaml(std::string_view input) {
    expectingCleanErrors([&] { ui::yamlToJson(std::string(input), "fuzz.yaml", true); });
}

void timestamp(std::string_view input) {
    (void)kube::parseTimestamp(std::string(input));
}

}  // namespace

const NamedTarget kTargets[] = {
    {"kubeconfig", kubeconfig},
    {"exec_credential", execCredential},
    {"api_status", apiStatus},
    {"watch_stream", watchStream},
    {"websocket", websocketFrames},
    {"env_file", envFile},
    {"env_assignment", envAssignment},
    {"quantity", quantity},
    {"duration", duration},
    {"yaml", yaml},
    {"timestamp", timestamp},
    {"tar", tarArchive},
    {"exec_stream", execStream},
#ifdef ROSSOCTL_HAVE_VTERM
    {"tty_vterm", ttyAgainstVterm},
#endif
};
const size_t kTargetCount = sizeof kTargets / sizeof kTargets[0];

Target findTarget(std::string_view name) {
    for (const auto& target : kTargets)
        if (name == target.name) return target.run;
    return nullptr;
}

}  // namespace fuzz
