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
    // A wait that goes on where this one stopped watches from version 2, with no LIST.
    const auto resume = result.resumeList();
    REQUIRE(resume);
    CHECK((*resume)["metadata"]["resourceVersion"] == "2");
    REQUIRE((*resume)["items"].size() == 1);
    CHECK((*resume)["items"][0]["metadata"]["resourceVersion"] == "2");
}

TEST_CASE("a wait that ended on 410 Gone cannot be resumed: the next one lists", "[wait]") {
    ClientFixture fixture;
    fixture.server.latency = std::chrono::milliseconds(600);
    fixture.server.reply(200, list("10", json::array({pod("a", "10", false)})));
    fixture.server.stream({event("ERROR", {{"kind", "Status"},
                                           {"status", "Failure"},
                                           {"code", 410},
                                           {"reason", "Expired"},
                                           {"message", "too old resource version: 10 (50)"}})});
    WaitOptions options;
    options.timeout = std::chrono::seconds(1);
    auto result =
        waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", options, anyReady);
    CHECK(result.outcome == WaitOutcome::TimedOut);
    CHECK(result.relists == 1);
    CHECK_FALSE(result.resumeList());
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

namespace {

// One request refused through all of the client's own retries (5 attempts).
void refuse(ClientFixture& fixture) {
    for (int attempt = 0; attempt < 5; ++attempt)
        fixture.server.fail(TransportError::Kind::Connect, "connection refused");
}

}  // namespace

TEST_CASE("reconnect backoff doubles and is capped", "[wait][fault]") {
    ReconnectBackoff backoff;
    CHECK(backoff.delay(1) == std::chrono::milliseconds(250));
    CHECK(backoff.delay(2) == std::chrono::milliseconds(500));
    CHECK(backoff.delay(4) == std::chrono::milliseconds(2000));
    CHECK(backoff.delay(5) == std::chrono::milliseconds(4000));
    CHECK(backoff.delay(50) == std::chrono::milliseconds(4000));
}

TEST_CASE("an outage shorter than the deadline is ridden out", "[wait][fault]") {
    ClientFixture fixture;
    fixture.server.reply(200, list("1", json::array({pod("a", "1", false)})));
    fixture.server.stream({event("MODIFIED", pod("a", "2", false))});
    refuse(fixture);  // the apiserver stops: re-watches are refused
    refuse(fixture);
    fixture.server.stream({event("MODIFIED", pod("a", "3", true))});
    WaitOptions options;
    options.timeout = std::chrono::seconds(25);
    auto result =
        waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", options, anyReady);
    CHECK(result.satisfied());
    CHECK(result.reconnects == 2);
    // Re-watched from the last version seen, not from scratch.
    CHECK(fixture.server.last().url.find("resourceVersion=2") != std::string::npos);
}

TEST_CASE("a LIST answered 503 while the apiserver starts is retried", "[wait][fault]") {
    ClientFixture fixture;
    for (int attempt = 0; attempt < 5; ++attempt) fixture.server.reply(503, "{}");
    fixture.server.reply(200, list("4", json::array({pod("a", "4", true)})));
    WaitOptions options;
    options.timeout = std::chrono::seconds(60);
    auto result =
        waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", options, anyReady);
    CHECK(result.satisfied());
    CHECK(result.reconnects == 1);
}

TEST_CASE("an outage longer than the deadline is reported, within the deadline", "[wait][fault]") {
    ClientFixture fixture;
    fixture.server.reply(200, list("1", json::array({pod("a", "1", false)})));
    for (int request = 0; request < 10; ++request) refuse(fixture);
    WaitOptions options;
    options.timeout = std::chrono::seconds(10);
    const auto start = fixture.clock.monotonic();
    CHECK_THROWS_AS(
        waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", options, anyReady),
        TransportError);
    // The last refused request may start just before the deadline; its retries are bounded.
    CHECK(fixture.clock.monotonic() - start < std::chrono::seconds(10 + 4));
}

TEST_CASE("an error a retry cannot fix ends the wait at once", "[wait][fault]") {
    ClientFixture fixture;
    fixture.server.reply(403, R"({"kind":"Status","code":403,"reason":"Forbidden"})");
    WaitOptions options;
    options.timeout = std::chrono::seconds(60);
    CHECK_THROWS_AS(
        waitForSet(*fixture.client, fixture.clock, resources::pods(), "ns", options, anyReady),
        ApiError);
    CHECK(fixture.server.requests.size() == 1);
}

namespace {

// The user presses Ctrl-C during the first pause of the wait.
class CancellingClock : public testing::FakeClock {
  public:
    explicit CancellingClock(CancelFlag& cancel) : cancel_(cancel) {}
    void sleepFor(std::chrono::milliseconds duration) const override {
        cancel_.cancel();
        FakeClock::sleepFor(duration);
    }

  private:
    CancelFlag& cancel_;
};

}  // namespace

TEST_CASE("Ctrl-C during an outage's backoff ends the wait as cancelled", "[wait][fault]") {
    CancelFlag cancel;
    CancellingClock waitClock(cancel);
    ClientFixture fixture;
    fixture.server.reply(200, list("1", json::array({pod("a", "1", false)})));
    refuse(fixture);
    WaitOptions options;
    options.cancel = &cancel;
    options.timeout = std::chrono::seconds(60);
    options.reconnect.initial = std::chrono::seconds(4);
    auto result =
        waitForSet(*fixture.client, waitClock, resources::pods(), "ns", options, anyReady);
    CHECK(result.outcome == WaitOutcome::Cancelled);
    // One slice of the 4 s pause, not all of it.
    CHECK(waitClock.totalSlept() <= std::chrono::milliseconds(100));
}

TEST_CASE("rideOutOutage repeats a safe request through an outage, within its budget",
          "[wait][fault]") {
    testing::FakeClock clock;
    int calls = 0;
    rideOutOutage(clock, std::chrono::seconds(10), nullptr, [&] {
        if (++calls < 4) throw TransportError(TransportError::Kind::Connect, "refused");
    });
    CHECK(calls == 4);
    CHECK(clock.totalSlept() == std::chrono::milliseconds(250 + 500 + 1000));

    calls = 0;
    CHECK_THROWS_AS(rideOutOutage(clock, std::chrono::seconds(2), nullptr,
                                  [&] {
                                      ++calls;
                                      throw TransportError(TransportError::Kind::Reset, "cut");
                                  }),
                    TransportError);
    CHECK(calls == 4);  // 250 + 500 + 1000 ms slept; the next 2 s pause would pass the budget

    calls = 0;
    CHECK_THROWS_AS(rideOutOutage(clock, std::chrono::seconds(10), nullptr,
                                  [&] {
                                      ++calls;
                                      throw ApiError(404, "NotFound", "gone", {});
                                  }),
                    ApiError);
    CHECK(calls == 1);
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

TEST_CASE("a wait over every namespace keeps same-named objects apart", "[wait]") {
    ClientFixture fixture;
    json inA = pod("orders", "7", false);
    inA["metadata"]["namespace"] = "team-a";
    json inB = pod("orders", "8", false);
    inB["metadata"]["namespace"] = "team-b";
    fixture.server.reply(200, list("9", json::array({inA, inB})));
    size_t seen = 0;
    WaitOptions options;
    options.keyByNamespace = true;
    auto result = waitForSet(*fixture.client, fixture.clock, resources::pods(), "", options,
                             [&](const ObjectSet& objects) {
                                 seen = objects.size();
                                 return true;
                             });
    CHECK(result.satisfied());
    CHECK(seen == 2);
    CHECK(result.objects.count("team-a/orders") == 1);
    CHECK(result.objects.count("team-b/orders") == 1);
}
