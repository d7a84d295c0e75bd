// sandbox logs without -f shows a bounded number of bytes, whatever the server sends: asked
// with limitBytes, and held on this side when the server ignores it.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kLog = kPods + "/orders/log";

json sandbox() {
    json container = {{"name", "agent"}, {"image", "ghcr.io/acme/orders:1.4"}};
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata", {{"name", "orders"}, {"namespace", "team1"}, {"uid", "uid-orders"}}},
            {"spec",
             {{"operatingMode", "Running"},
              {"podTemplate", {{"spec", {{"containers", json::array({container})}}}}}}},
            {"status",
             {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
              {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

json pod() {
    return {
        {"metadata",
         {{"name", "orders"},
          {"namespace", "team1"},
          {"uid", "pod-uid"},
          {"creationTimestamp", "2023-11-14T22:00:05Z"},
          {"ownerReferences",
           {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}}},
        {"spec", {{"containers", {{{"name", "agent"}}}}}},
        {"status",
         {{"phase", "Running"},
          {"containerStatuses", {{{"name", "agent"}, {"state", {{"running", json::object()}}}}}}}}};
}

}  // namespace

TEST_CASE("sandbox logs --limit-bytes: asked of the server and held when it sends more",
          "[limit-bytes][logs]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
    host.server.onJson("GET", kPods, 200, list({pod()}));
    host.server.onStream("GET", kLog, {"0123456789", "abcdefghij", "never shown\n"});
    REQUIRE(host.run({"sandbox", "logs", "orders", "--limit-bytes", "15"}) == 0);
    CHECK(host.out.str() == "0123456789abcde");  // the old code: no such flag (exit 2)
    CHECK(host.server.last().url.find("limitBytes=15") != std::string::npos);
    CHECK(host.err.str() == "note: output cut at 15 bytes (--limit-bytes); the log goes on\n");
    testing::checkUsageErrors({{"sandbox", "logs", "orders", "--limit-bytes", "0"},
                               {"sandbox", "logs", "orders", "--limit-bytes", "-5"}});
}

TEST_CASE("sandbox logs without -f stops at 64 MiB by default, whatever the server sends",
          "[limit-bytes][logs]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
    host.server.onJson("GET", kPods, 200, list({pod()}));
    // A server that ignores limitBytes: 65 MiB in 1 MiB chunks.
    host.server.onStream("GET", kLog, std::vector<std::string>(65, std::string(1 << 20, 'x')));
    REQUIRE(host.run({"sandbox", "logs", "orders"}) == 0);
    CHECK(host.out.str().size() == (size_t{64} << 20));  // the old code: all 65 MiB
    CHECK(host.server.last().url.find("limitBytes=67108864") != std::string::npos);
    CHECK(host.err.str().find("output cut at 67108864 bytes") != std::string::npos);
}
