#include "rossoctl/app/agent_wait.hpp"

#include <catch2/catch.hpp>

#include "kube_fakes.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;
using rossoctl::testing::ClientFixture;
using Outcome = app::AgentWaitResult::Outcome;

namespace {

json sandbox() {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", "orders"},
              {"namespace", "team1"},
              {"uid", "sandbox-uid"},
              {"resourceVersion", "5"}}},
            {"status",
             {{"conditions",
               json::array({{{"type", "Ready"}, {"status", "True"}, {"reason", "PodReady"}}})}}}};
}

json pod(const std::string& uid, bool ready, bool deleting) {
    json pod = {
        {"metadata",
         {{"name", "orders"},
          {"uid", uid},
          {"resourceVersion", "7"},
          {"creationTimestamp", "2026-01-01T00:00:00Z"},
          {"ownerReferences", json::array({{{"uid", "sandbox-uid"}, {"controller", true}}})}}},
        {"status",
         {{"phase", "Running"},
          {"conditions",
           json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}}}};
    if (deleting) pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:01:00Z";
    return pod;
}

std::string list(const json& items) {
    return json{{"metadata", {{"resourceVersion", "9"}}}, {"items", items}}.dump();
}

}  // namespace

TEST_CASE("agents wait does not take a stale Ready=True for a deleted pod", "[agents][fault]") {
    ClientFixture fixture;
    app::Agent agent{{model::WorkloadType::Sandbox, resources::sandboxes("v1beta1")}, sandbox()};
    fixture.server.reply(200, list(json::array({sandbox()})));  // the Sandbox: Ready=True
    fixture.server.reply(200, list(json::array({pod("old", true, true)})));  // its pod: going
    fixture.server.reply(200, list(json::array({pod("old", true, true)})));  // wait for a pod
    fixture.server.stream(
        {json{{"type", "ADDED"}, {"object", pod("new", true, false)}}.dump() + "\n"});
    fixture.server.reply(200, list(json::array({sandbox()})));
    fixture.server.reply(200, list(json::array({pod("new", true, false)})));
    auto result =
        app::waitForAgent(*fixture.client, fixture.clock, agent, std::chrono::seconds(60), nullptr);
    CHECK(result.outcome == Outcome::Ready);
    CHECK(fixture.server.replies.empty());  // it did wait for the new pod
}

TEST_CASE("agents wait times out saying the replacement pod is missing", "[agents][fault]") {
    ClientFixture fixture;
    fixture.server.latency = std::chrono::seconds(10);
    app::Agent agent{{model::WorkloadType::Sandbox, resources::sandboxes("v1beta1")}, sandbox()};
    fixture.server.reply(200, list(json::array({sandbox()})));
    fixture.server.reply(200, list(json::array()));  // no pod at all
    fixture.server.reply(200, list(json::array()));
    // Between spans of the pod wait: the Sandbox, its pods and its events name no blocker.
    fixture.server.reply(200, sandbox().dump());
    fixture.server.reply(200, list(json::array()));
    fixture.server.reply(200, list(json::array()));
    auto result =
        app::waitForAgent(*fixture.client, fixture.clock, agent, std::chrono::seconds(25), nullptr);
    CHECK(result.outcome == Outcome::TimedOut);
    CHECK(result.waitingFor.find("ready pod") != std::string::npos);
}
