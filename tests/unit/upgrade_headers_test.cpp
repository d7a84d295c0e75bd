// The WebSocket upgrade's request headers, as a kubelet behind the apiserver judges them.
#include <catch2/catch.hpp>

#include "kube_fakes.hpp"
#include "rossoctl/kube/client.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;

namespace {

// Records the upgrade request and refuses it, so the test sees exactly what was sent.
class RecordingTransport : public Transport {
  public:
    explicit RecordingTransport(Headers& sent) : sent_(sent) {}
    HttpResponse send(const HttpRequest&) override { return {}; }
    void setClientCertificate(const ClientCertificate&) override {}
    std::unique_ptr<UpgradedConnection> upgrade(const HttpRequest& request) override {
        sent_ = request.headers;
        throw TransportError(TransportError::Kind::Connect, "refused by the test");
    }

  private:
    Headers& sent_;
};

}  // namespace

TEST_CASE("a WebSocket upgrade accepts any type, never only JSON (a kubelet answers 406)",
          "[exec][websocket]") {
    // Found on a real kubelet: exec, cp and verify's probes all got 406 Not Acceptable.
    Headers sent;
    testing::FakeClock clock;
    std::ostringstream trace;
    Client client(testing::fakeRestConfig(), std::make_unique<RecordingTransport>(sent), clock,
                  RequestTracer(trace, 0));
    CHECK_THROWS(client.upgrade("/api/v1/namespaces/team1/pods/orders/exec?command=true",
                                {{"Sec-WebSocket-Protocol", "v5.channel.k8s.io"}}));
    std::vector<std::string> accepts;
    for (const auto& [name, value] : sent)
        if (name == "Accept") accepts.push_back(value);
    CHECK(accepts == std::vector<std::string>{"*/*"});
}
