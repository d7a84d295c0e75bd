// The sixth newcomer walkthrough (notes walk6, issue 34): what agents import, sandbox restart
// and sandbox run --pool say after Ctrl-C, and suspend/resume with a name that is not there.
// Each case failed on the code before its fix.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;

TEST_CASE("sandbox suspend and resume change nothing when a name is not there, as restart",
          "[walk8][suspend][command]") {
    // walk6 MINOR 3: suspend orders keeper nothere suspended orders and keeper (their
    // /workspace lost) and then failed on nothere.
    for (const std::string verb : {"suspend", "resume"}) {
        TestHost host;
        host.serveSandboxGroup();
        for (const std::string name : {"orders", "keeper"}) {
            json found = verb == "suspend" ? testing::ordersSandbox(
                                                 "Running", {testing::condition("Ready", "True")})
                                           : testing::suspendedOrdersSandbox();
            found["metadata"]["name"] = name;
            host.server.onJson("GET", kSandboxes + "/" + name, 200, found);
            host.server.onJson("PATCH", kSandboxes + "/" + name, 200, found);
        }
        host.server.onJson(
            "GET", kSandboxes, 200,
            list({testing::sandboxWithReason("orders"), testing::sandboxWithReason("keeper")}));
        INFO(verb);
        CHECK(host.run({"sandbox", verb, "orders", "keeper", "nothere", "--wait=false"}) ==
              kExitError);
        const std::string err = host.err.str();
        INFO(err);
        CHECK(host.server.writes().empty());
        CHECK(host.out.str().empty());
        CHECK(contains(err, "error: sandbox/nothere not found in namespace team1"));
        CHECK(contains(err, "error: not " +
                                std::string(verb == "suspend" ? "suspended" : "resumed") +
                                ": sandbox/nothere not found, and no sandbox is " +
                                (verb == "suspend" ? "suspended" : "resumed") +
                                " until every name is found\n"));
    }
}

