#include "rossoctl/kube/retry.hpp"

#include <catch2/catch.hpp>

using namespace rossoctl::kube;
using std::chrono::milliseconds;

namespace {

AttemptOutcome status(long code, int attempt = 1, bool idempotent = true) {
    AttemptOutcome outcome;
    outcome.attempt = attempt;
    outcome.httpStatus = code;
    outcome.idempotent = idempotent;
    return outcome;
}

}  // namespace

TEST_CASE("5xx is retried with doubling backoff up to the cap", "[retry]") {
    RetryPolicy policy;
    policy.maxAttempts = 10;
    CHECK(retryDelay(policy, status(503, 1)) == milliseconds(200));
    CHECK(retryDelay(policy, status(503, 2)) == milliseconds(400));
    CHECK(retryDelay(policy, status(502, 3)) == milliseconds(800));
    CHECK(retryDelay(policy, status(500, 9)) == milliseconds(5000));
}

TEST_CASE("no retry after the last attempt", "[retry]") {
    RetryPolicy policy;
    CHECK(retryDelay(policy, status(503, 4)).has_value());
    CHECK_FALSE(retryDelay(policy, status(503, 5)).has_value());
}

TEST_CASE("5xx is not retried for a non-idempotent request", "[retry]") {
    CHECK_FALSE(retryDelay({}, status(503, 1, false)).has_value());
    CHECK_FALSE(retryDelay({}, status(500, 1, false)).has_value());
}

TEST_CASE("501 and 4xx other than 429 are final", "[retry]") {
    for (long code : {400L, 401L, 403L, 404L, 409L, 422L, 501L}) {
        CAPTURE(code);
        CHECK_FALSE(retryDelay({}, status(code)).has_value());
    }
}

TEST_CASE("429 honours Retry-After for any method", "[retry]") {
    AttemptOutcome outcome = status(429, 1, false);
    outcome.retryAfter = "7";
    CHECK(retryDelay({}, outcome) == milliseconds(7000));
    outcome.retryAfter = "";
    CHECK(retryDelay({}, outcome) == milliseconds(200));
    outcome.retryAfter = "0";
    CHECK(retryDelay({}, outcome) == milliseconds(200));
}

TEST_CASE("an unreasonable or malformed Retry-After ends the retries", "[retry]") {
    AttemptOutcome outcome = status(429);
    outcome.retryAfter = "3600";
    CHECK_FALSE(retryDelay({}, outcome).has_value());
    outcome.retryAfter = "soon";
    CHECK_FALSE(retryDelay({}, outcome).has_value());
}

TEST_CASE("Retry-After on a 503 lengthens the backoff", "[retry]") {
    AttemptOutcome outcome = status(503);
    outcome.retryAfter = "2";
    CHECK(retryDelay({}, outcome) == milliseconds(2000));
}

TEST_CASE("transport failures: connect always, reset only when idempotent", "[retry]") {
    AttemptOutcome refused;
    refused.transportFailed = true;
    refused.connectFailed = true;
    refused.idempotent = false;
    CHECK(retryDelay({}, refused) == milliseconds(200));

    AttemptOutcome reset;
    reset.transportFailed = true;
    reset.idempotent = true;
    CHECK(retryDelay({}, reset) == milliseconds(200));
    reset.idempotent = false;
    CHECK_FALSE(retryDelay({}, reset).has_value());
}

TEST_CASE("success-like statuses are not retried", "[retry]") {
    CHECK_FALSE(retryDelay({}, status(200)).has_value());
    CHECK_FALSE(retryDelay({}, AttemptOutcome{}).has_value());
}
