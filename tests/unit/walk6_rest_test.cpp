// The sixth newcomer walkthrough (notes walk6, issue 34), the MINOR findings left after walk8:
// each case failed on the code before its fix.
#include <catch2/catch.hpp>

#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("sandbox verify --all skips a suspended sandbox with a note and exits on the others",
          "[walk6][verify][command]") {
    // walk6 MINOR 6: keeper, suspended, was an error (exit 1) that hid orders' result (exit 3).
    namespace fixtures = testing::verify_fixtures;
    TestHost host;
    json keeper = testing::suspendedOrdersSandbox();
    keeper["metadata"]["name"] = "keeper";
    host.server.onJson("GET", fixtures::kSandboxes, 200,
                       fixtures::list({fixtures::sandbox(), keeper}));
    fixtures::serveHardened(host, "curl");
    testing::Listener control;
    host.resolver.addresses["control.test"] = {"127.0.0.1"};
    const int exitCode =
        host.run({"sandbox", "verify", "--all", "--no-restart", "--egress-target",
                  "http://control.test:" + std::to_string(control.port) + "/", "-o", "json"});
    INFO(host.out.str() << host.err.str());
    CHECK(exitCode == kExitBoundaryNotProven);  // orders' egress, seen from its own pod
    const json reports = testing::printedJson(host.out.str());
    REQUIRE(reports["items"].size() == 1);
    CHECK(reports["items"][0]["sandbox"] == "orders");
    CHECK(has(host.err.str(),
              "note: sandbox/keeper is suspended, so it has no pod to verify: skipped (verify it "
              "once \"rossoctl sandbox resume keeper -n team1\" has run)\n"));
    CHECK(!has(host.err.str(), "error:"));

    TestHost allSuspended;  // nothing left to verify: not a pass
    allSuspended.serveSandboxGroup();
    allSuspended.server.onJson("GET", fixtures::kSandboxes, 200, fixtures::list({keeper}));
    CHECK(allSuspended.run({"sandbox", "verify", "--all"}) == kExitError);
    CHECK(has(allSuspended.err.str(),
              "error: every sandbox in namespace team1 is suspended: nothing to verify\n"));
}
