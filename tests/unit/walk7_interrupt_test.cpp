// The fifth newcomer walkthrough (notes walk5, issue 34): what verify, restart and suspend say
// when they are interrupted or wait on a pod that is slow to stop. Each case failed on the code
// before its fix.
#include <catch2/catch.hpp>

#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;

TEST_CASE("sandbox verify interrupted early says so in one line, not \"error: cancelled\"",
          "[walk7][verify][command]") {
    // walk5 MINOR 12: INT before any check gave "error: cancelled".
    TestHost host;
    serveHardened(host, "none");
    host.server.onRequest = [&host](const kube::HttpRequest& request) {
        if (request.method == "GET" && contains(request.url, kSandboxes + "/orders")) {
            host.cancel.cancel();  // Ctrl-C as the first read goes out
            throw kube::TransportError(kube::TransportError::Kind::Cancelled, "cancelled");
        }
    };
    CHECK(host.run({"sandbox", "verify", "orders"}) == kExitCancelled);
    CHECK(host.err.str() ==
          "error: sandbox verify was interrupted (Ctrl-C); sandbox/orders not verified\n");
    CHECK(host.out.str().empty());
}

TEST_CASE("sandbox verify interrupted late prints a report that says it is partial",
          "[walk7][verify][command]") {
    // walk5 MINOR 12: INT during the restart printed a whole report and exited 130 with no word
    // of the interruption.
    for (const std::string format : {"table", "json"}) {
        TestHost host;
        serveHardened(host, "none");
        host.server.onRequest = [&host](const kube::HttpRequest& request) {
            if (request.method == "DELETE" && contains(request.url, kPods + "/orders"))
                host.cancel.cancel();  // Ctrl-C as verify's restart deletes the pod
        };
        INFO(format);
        CHECK(host.run({"sandbox", "verify", "orders", "-o", format}) == kExitCancelled);
        const std::string err = host.err.str();
        INFO(err);
        CHECK(contains(err,
                       "error: sandbox verify was interrupted (Ctrl-C); the report of "
                       "sandbox/orders is partial (what it cut short is unproven)\n"));
        CHECK(contains(err, "/workspace is gone with it"));  // the files note stays
        if (format == "table")
            CHECK(contains(host.out.str(),
                           "; partial: verify was interrupted (Ctrl-C), and what it cut short is "
                           "unproven\n"));
        else
            CHECK(testing::printedJson(host.out.str())["interrupted"] == true);
    }
}
