// app::waitUnlessBlocked, the one wait loop that looks for a blocker between spans: an
// apiserver outage longer than a span, or a blocker read the user may not make, must not end
// a wait that has time left.
#include <catch2/catch.hpp>

#include "kube_fakes.hpp"
#include "rossoctl/app/agent_failure.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/transport.hpp"

using namespace rossoctl;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

kube::WaitResult outcome(kube::WaitOutcome value) {
    kube::WaitResult result;
    result.outcome = value;
    return result;
}

kube::TransportError refused() {
    return kube::TransportError(kube::TransportError::Kind::Connect, "connection refused");
}

}  // namespace

TEST_CASE("an outage longer than one span is ridden out while the wait has time left",
          "[wait][blocker]") {
    testing::FakeClock clock;
    int spans = 0;
    auto result = app::waitUnlessBlocked(
        clock, seconds(60), nullptr,
        [&](milliseconds span) {
            clock.advance(span);  // each span used all of its time, then lost the server
            if (++spans <= 3) throw refused();
            return outcome(kube::WaitOutcome::Satisfied);
        },
        [&]() -> std::optional<std::string> { return std::nullopt; });
    CHECK(result.wait.satisfied());
    CHECK_FALSE(result.blocker);
    CHECK(spans == 4);
}

TEST_CASE("a blocker read during an outage is retried, and its answer still ends the wait",
          "[wait][blocker]") {
    testing::FakeClock clock;
    int reads = 0;
    auto result = app::waitUnlessBlocked(
        clock, seconds(60), nullptr,
        [&](milliseconds span) {
            clock.advance(span);
            return outcome(kube::WaitOutcome::TimedOut);
        },
        [&]() -> std::optional<std::string> {
            if (++reads <= 2) throw kube::ApiError(503, "ServiceUnavailable", "down", {});
            return "exceeded quota";
        });
    REQUIRE(result.blocker);
    CHECK(*result.blocker == "exceeded quota");
    CHECK(reads == 3);
}

TEST_CASE("a blocker read the user may not make is skipped, not an error", "[wait][blocker]") {
    testing::FakeClock clock;
    int spans = 0;
    auto result = app::waitUnlessBlocked(
        clock, seconds(60), nullptr,
        [&](milliseconds span) {
            clock.advance(span);
            return outcome(++spans < 3 ? kube::WaitOutcome::TimedOut
                                       : kube::WaitOutcome::Satisfied);
        },
        [&]() -> std::optional<std::string> {
            throw kube::ApiError(403, "Forbidden", "events is forbidden", {});
        });
    CHECK(result.wait.satisfied());
    CHECK(spans == 3);
}

TEST_CASE("an outage that outlasts the wait's time fails with the outage", "[wait][blocker]") {
    testing::FakeClock clock;
    CHECK_THROWS_AS(app::waitUnlessBlocked(
                        clock, seconds(10), nullptr,
                        [&](milliseconds span) -> kube::WaitResult {
                            clock.advance(span);
                            throw refused();
                        },
                        [&]() -> std::optional<std::string> { return std::nullopt; }),
                    kube::TransportError);
    CHECK(clock.monotonic().time_since_epoch() >= seconds(10));
}

TEST_CASE("any other error of a span or a blocker read ends the wait at once", "[wait][blocker]") {
    testing::FakeClock clock;
    CHECK_THROWS_AS(app::waitUnlessBlocked(
                        clock, seconds(60), nullptr,
                        [&](milliseconds) -> kube::WaitResult {
                            throw kube::ApiError(401, "Unauthorized", "no", {});
                        },
                        [&]() -> std::optional<std::string> { return std::nullopt; }),
                    kube::ApiError);
    CHECK_THROWS_AS(app::waitUnlessBlocked(
                        clock, seconds(60), nullptr,
                        [&](milliseconds span) {
                            clock.advance(span);
                            return outcome(kube::WaitOutcome::TimedOut);
                        },
                        [&]() -> std::optional<std::string> {
                            throw kube::ApiError(404, "NotFound", "gone", {});
                        }),
                    kube::ApiError);
}
