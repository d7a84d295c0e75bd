// The third newcomer walkthrough (stop 49), offline: a kubectl user's habits the CLI refused.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {
const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
}  // namespace

TEST_CASE("--request-timeout takes a bare number as seconds, as kubectl does",
          "[walkthrough49][conventions]") {
    for (const std::string timeout : {"5", "0", "5s"}) {
        TestHost host;
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes, 200, list({}));
        host.server.onJson("GET", "/api/v1/namespaces/team1/pods", 200, list({}));
        const int code = host.run({"--request-timeout", timeout, "sandbox", "list"});
        INFO(timeout << ": " << host.err.str());
        CHECK(code == 0);
    }
    TestHost bad;
    CHECK(bad.run({"--request-timeout", "5x", "sandbox", "list"}) == kExitUsage);
    CHECK(bad.err.str().find("--request-timeout") != std::string::npos);
}

TEST_CASE("verify -o with a typo suggests the format, as list's -o does",
          "[walkthrough49][verify]") {
    TestHost host;
    CHECK(host.run({"sandbox", "verify", "orders", "-o", "junt"}) == kExitUsage);
    CHECK(host.err.str() ==
          "error: --output \"junt\" is not one of table, json, junit, sarif (did you mean "
          "junit?)\n");
}

TEST_CASE("a bare --request-timeout out of range is refused in the words typed",
          "[walkthrough49][conventions][review52]") {
    TestHost host;
    CHECK(host.run({"--request-timeout", "99999999999999999999", "sandbox", "list"}) == kExitUsage);
    INFO(host.err.str());
    CHECK(host.err.str().find("99999999999999999999s") == std::string::npos);
    CHECK(host.err.str().find("99999999999999999999") != std::string::npos);
}
