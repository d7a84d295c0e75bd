#include "rossoctl/kube/wait.hpp"

#include <catch2/catch.hpp>

#include "kube_fakes.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;
using rossoctl::testing::ClientFixture;

namespace {

json pod(const std::string& name, const std::string& rv, bool ready) {
    return {{"metadata", {{"name", name}, {"resourceVersion", rv}}},
            {"status",
             {{"conditions",
               json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}}}};
}

std::string list(const std::string& rv, const json& items) {
    return json{{"kind", "PodList"}, {"metadata", {{"resourceVersion", rv}}}, {"items", items}}
        .dump();
}

std::string event(const std::string& type, const json& object) {
    return json{{"type", type}, {"object", object}}.dump() + "\n";
}

bool anyReady(const ObjectSet& objects) {
    for (const auto& [name, object] : objects)
        if (conditionTrue(object, "Ready")) return true;
    return false;
}

}  // namespace

TEST_CASE("wait lists, then watches from the list's resourceVersion", "[wait]") {
    ClientFixture fixture;
    fixture.server.reply(200, list("100", json::array({pod("a", "99", false)})));
    fixture.server.stream(
        {event("MODIFIED", pod("a", "101", false)), event("MODIFIED", pod("a", "102", true))});
    WaitOptions options;
    options.labelSelector = "app=x";
    auto result =
        waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", options, anyReady);
    CHECK(result.satisfied());
    REQUIRE(fixture.server.requests.size() == 2);
    CHECK(fixture.server.requests[0].url.find("labelSelector=app%3Dx") != std::string::npos);
    const std::string& watchUrl = fixture.server.requests[1].url;
    CHECK(watchUrl.find("watch=true") != std::string::npos);
    CHECK(watchUrl.find("resourceVersion=100") != std::string::npos);
    CHECK(result.objects.at("a")["metadata"]["resourceVersion"] == "102");
}

TEST_CASE("a state already true needs no watch", "[wait]") {
    ClientFixture fixture;
    fixture.server.reply(200, list("5", json::array({pod("a", "5", true)})));
    auto result = waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", {}, anyReady);
    CHECK(result.satisfied());
    CHECK(fixture.server.requests.size() == 1);
}

TEST_CASE("an initial list saves the first LIST", "[wait]") {
    ClientFixture fixture;
    fixture.server.stream({event("ADDED", pod("b", "8", true))});
    WaitOptions options;
    options.initialList = json::parse(list("7", json::array()));
    auto result =
        waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", options, anyReady);
    CHECK(result.satisfied());
    REQUIRE(fixture.server.requests.size() == 1);
    CHECK(fixture.server.requests[0].url.find("resourceVersion=7") != std::string::npos);
}

TEST_CASE("410 Gone re-lists and carries on", "[wait]") {
    ClientFixture fixture;
    fixture.server.reply(200, list("10", json::array({pod("a", "10", false)})));
    fixture.server.stream({event("ERROR", {{"kind", "Status"},
                                           {"status", "Failure"},
                                           {"code", 410},
                                           {"reason", "Expired"},
                                           {"message", "too old resource version: 10 (50)"}})});
    fixture.server.reply(200, list("60", json::array({pod("a", "55", false)})));
    fixture.server.stream({event("MODIFIED", pod("a", "61", true))});
    auto result = waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", {}, anyReady);
    CHECK(result.satisfied());
    CHECK(result.relists == 1);
    REQUIRE(fixture.server.requests.size() == 4);
    CHECK(fixture.server.requests[3].url.find("resourceVersion=60") != std::string::npos);
}

TEST_CASE("a watch the server ends is resumed from the last version seen", "[wait]") {
    ClientFixture fixture;
    fixture.server.reply(200, list("1", json::array()));
    fixture.server.stream({event("ADDED", pod("a", "2", false)),
                           event("BOOKMARK", {{"metadata", {{"resourceVersion", "3"}}}})});
    fixture.server.stream({event("MODIFIED", pod("a", "4", true))});
    auto result = waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", {}, anyReady);
    CHECK(result.satisfied());
    REQUIRE(fixture.server.requests.size() == 3);
    CHECK(fixture.server.requests[2].url.find("resourceVersion=3") != std::string::npos);
}

TEST_CASE("the deadline ends the wait with the last state", "[wait]") {
    ClientFixture fixture;
    fixture.server.latency = std::chrono::seconds(20);
    fixture.server.reply(200, list("1", json::array({pod("a", "1", false)})));
    fixture.server.stream({event("MODIFIED", pod("a", "2", false))});
    fixture.server.stream({});
    WaitOptions options;
    options.timeout = std::chrono::seconds(60);
    auto result =
        waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", options, anyReady);
    CHECK(result.outcome == WaitOutcome::TimedOut);
    CHECK(result.objects.at("a")["metadata"]["resourceVersion"] == "2");
    REQUIRE(fixture.server.requests.size() == 3);
    // The server-side watch timeout is what is left of the deadline, rounded up.
    CHECK(fixture.server.requests[1].url.find("timeoutSeconds=40") != std::string::npos);
    CHECK(fixture.server.requests[2].url.find("timeoutSeconds=20") != std::string::npos);
}

TEST_CASE("cancellation ends the wait between events", "[wait]") {
    CancelFlag cancel;
    ClientFixture fixture;
    fixture.server.reply(200, list("1", json::array()));
    fixture.server.stream(
        {event("ADDED", pod("a", "2", false)), event("MODIFIED", pod("a", "3", true))});
    WaitOptions options;
    options.cancel = &cancel;
    int calls = 0;
    auto result = waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", options,
                             [&](const ObjectSet& objects) {
                                 if (++calls == 2) cancel.cancel();  // Ctrl-C after the ADDED
                                 return anyReady(objects);
                             });
    CHECK(result.outcome == WaitOutcome::Cancelled);
    CHECK(calls == 2);
}

TEST_CASE("waitForObject selects by name and sees deletion", "[wait]") {
    ClientFixture fixture;
    fixture.server.reply(200, list("1", json::array({pod("s", "1", false)})));
    fixture.server.stream({event("DELETED", pod("s", "2", false))});
    bool sawGone = false;
    auto result = waitForObject(*fixture.client, fixture.clock, resources::pods(), "ns", "s", {},
                                [&](const std::optional<json>& object) {
                                    sawGone = !object.has_value();
                                    return sawGone;
                                });
    CHECK(result.satisfied());
    CHECK(sawGone);
    CHECK(fixture.server.requests[0].url.find("fieldSelector=metadata.name%3Ds") !=
          std::string::npos);
}

TEST_CASE("conditions are read from status", "[wait]") {
    json object = {
        {"status",
         {{"conditions",
           json::array({{{"type", "Ready"}, {"status", "True"}, {"reason", "PodReady"}}})}}}};
    CHECK(conditionTrue(object, "Ready"));
    CHECK_FALSE(conditionTrue(object, "Finished"));
    CHECK(findCondition(object, "Ready")->value("reason", "") == "PodReady");
    CHECK_FALSE(findCondition(json::object(), "Ready"));
}
