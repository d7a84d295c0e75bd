#include "rossoctl/app/enforcement_check.hpp"

#include <catch2/catch.hpp>

#include "kube_fakes.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::ClientFixture;

namespace {

void requireRestricted(const json& pod) {
    const auto& spec = pod["spec"];
    CHECK(spec["securityContext"]["runAsNonRoot"] == true);
    CHECK(spec["securityContext"]["runAsUser"] != 0);
    CHECK(spec["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault");
    CHECK(spec["automountServiceAccountToken"] == false);
    CHECK(spec["activeDeadlineSeconds"].get<int>() > 0);  // ends on its own if never deleted
    for (const auto& container : spec["containers"]) {
        CHECK(container["securityContext"]["allowPrivilegeEscalation"] == false);
        CHECK(container["securityContext"]["capabilities"]["drop"] == json::array({"ALL"}));
        CHECK(container["resources"]["limits"].contains("cpu"));
        CHECK(container["resources"]["limits"].contains("memory"));
    }
}

}  // namespace

TEST_CASE("the enforcement check's objects", "[enforcement-check]") {
    app::EnforcementCheckOptions options;
    options.image = "registry.local/tools:1";
    const auto objects = app::enforcementObjects("team1", "abc123", options);
    for (const auto* pod : {&objects.server, &objects.client}) {
        requireRestricted(*pod);
        CHECK((*pod)["metadata"]["namespace"] == "team1");
        CHECK((*pod)["metadata"]["labels"][app::kEnforcementCheckLabel] == "abc123");
        CHECK((*pod)["spec"]["containers"][0]["image"] == "registry.local/tools:1");
    }
    CHECK(objects.server["metadata"]["name"] == "rossoctl-check-abc123-server");
    CHECK(objects.client["metadata"]["name"] == "rossoctl-check-abc123-client");

    SECTION("the server's ingress is open, so only the client's egress can stop the probe") {
        const auto& spec = objects.serverIngress["spec"];
        CHECK(spec["policyTypes"] == json::array({"Ingress"}));
        CHECK(spec["ingress"] == json::array({json::object()}));
        CHECK(spec["podSelector"]["matchLabels"]["rossoctl.dev/enforcement-role"] == "server");
    }
    SECTION("the control allows exactly client to server on the check's port") {
        const auto& spec = objects.control["spec"];
        CHECK(spec["policyTypes"] == json::array({"Egress"}));
        CHECK(spec["podSelector"]["matchLabels"]["rossoctl.dev/enforcement-role"] == "client");
        const auto& rule = spec["egress"][0];
        CHECK(rule["to"][0]["podSelector"]["matchLabels"]["rossoctl.dev/enforcement-role"] ==
              "server");
        CHECK(rule["ports"][0]["port"] == app::kEnforcementCheckPort);
    }
}

TEST_CASE("the connect probe takes its inputs as arguments, never in the script",
          "[enforcement-check]") {
    const auto command = app::connectProbeCommand("10.0.0.7", 8080, 2);
    REQUIRE(command.size() == 7);
    CHECK(command[0] == "sh");
    CHECK(command[2].find("10.0.0.7") == std::string::npos);
    CHECK(command[4] == "10.0.0.7");
    CHECK(command[5] == "8080");
    CHECK(command[6] == "2");
}

TEST_CASE("an enforcement check whose pods cannot be created is unproven and cleans up",
          "[enforcement-check]") {
    ClientFixture fixture;
    fixture.server.reply(201, "{}");  // server ingress policy
    fixture.server.reply(201, "{}");  // control policy
    fixture.server.reply(403, json{{"kind", "Status"},
                                   {"code", 403},
                                   {"reason", "Forbidden"},
                                   {"message", "exceeded quota: sandbox-quota"}}
                                  .dump());
    for (int i = 0; i < 4; ++i) fixture.server.reply(200, "{}");  // the four deletes
    const auto result = app::checkDefaultDenyEnforced(*fixture.client, fixture.clock, "team1", {});
    CHECK(result.verdict == app::Enforcement::Unproven);
    CHECK_THAT(result.evidence.back(), Catch::Contains("exceeded quota"));
    int deletes = 0;
    for (const auto& request : fixture.server.requests) deletes += request.method == "DELETE";
    CHECK(deletes == 4);
}
