// Issue 21, point 9: one truth for sandbox run's exit code on bad flags, and a re-run of
// project create that narrows egress says so where it cannot be missed.
#include <catch2/catch.hpp>

#include "conventions.hpp"
#include "rossoctl/app/run/runner.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

TEST_CASE("sandbox run: a bad flag and a bad value both exit 125, as its help says",
          "[conventions][usage]") {
    TestHost parsed;  // parsed as main parses: CLI11 never saw such a flag
    CHECK(commands::parseCommandLine(parsed.root(), {"sandbox", "run", "--bogus", "--", "ls"},
                                     parsed.out, parsed.err) == app::run::kExitRunFailed);
    CHECK(parsed.err.str().find("unknown flag: --bogus") != std::string::npos);
    TestHost validated;  // a value only validation refuses
    CHECK(validated.run({"sandbox", "run", "--cpu", "0", "--", "ls"}) == app::run::kExitRunFailed);
    CHECK(validated.server.requests.empty());
    const std::string help = TestHost().help({"sandbox", "run"});
    CHECK(help.find("125  rossoctl itself failed (bad flags included") != std::string::npos);
    // Every other command keeps 2 for a usage error.
    TestHost other;
    CHECK(commands::parseCommandLine(other.root(), {"sandbox", "list", "--bogus"}, other.out,
                                     other.err) == kExitUsage);
}

TEST_CASE("project create: a re-run without the earlier --allow-host says egress narrowed",
          "[conventions][project]") {
    const std::string namespaces = "/api/v1/namespaces";
    TestHost host;
    host.server.onJson("GET", namespaces + "/team1", 200,
                       {{"metadata",
                         {{"name", "team1"},
                          {"resourceVersion", "7"},
                          {"labels",
                           {{"rossoctl.dev/sandbox-project", "true"},
                            {"app.kubernetes.io/managed-by", "rossoctl"}}}}},
                        {"status", {{"phase", "Active"}}}});
    // Every object exists from the earlier run; the apply changes the egress policies.
    host.server.on("GET", "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies/*", 200,
                   R"({"metadata":{"resourceVersion":"6",)"
                   R"("labels":{"app.kubernetes.io/managed-by":"rossoctl"}}})");
    host.server.on("PATCH", "/*", 200, R"({"metadata":{"resourceVersion":"8"}})");
    host.server.onJson("GET", namespaces + "/team1/resourcequotas", 200,
                       {{"metadata", {{"resourceVersion", "10"}}},
                        {"items",
                         {{{"metadata", {{"name", "sandbox-quota"}}},
                           {"status", {{"hard", {{"pods", "20"}}}}}}}}});
    REQUIRE(host.run({"project", "create", "team1", "--no-check"}) == 0);
    const std::string err = host.err.str();
    INFO(err);
    // Not "allowed only to nothing (and DNS)" (issue 34 point 12).
    CHECK(err.find("Warning: the egress policy of project team1 changed: egress is now denied "
                   "to every destination but DNS.") != std::string::npos);
    CHECK(err.find("repeat every --allow-host/--allow-cidr still wanted") != std::string::npos);
}
