// RFC 3339 timestamps from the API and from exec plugins.
#include "rossoctl/kube/timestamp.hpp"

#include <catch2/catch.hpp>

using rossoctl::kube::formatTimestamp;
using rossoctl::kube::parseTimestamp;

TEST_CASE("timestamps parse with Z, offsets and fractions", "[timestamp]") {
    auto plain = parseTimestamp("2030-01-02T03:04:05Z");
    REQUIRE(plain);
    CHECK(formatTimestamp(*plain) == "2030-01-02T03:04:05Z");
    CHECK(parseTimestamp("2030-01-02T05:04:05.123+02:00") == plain);
    CHECK_FALSE(parseTimestamp("soon"));
    CHECK_FALSE(parseTimestamp("2030-01-02T03:04:05"));
}

TEST_CASE("a timestamp past what the clock can count is far future, not an overflow",
          "[timestamp]") {
    // Found by the exec_credential fuzzer: year 4093 overflowed the nanosecond count.
    auto far = parseTimestamp("4093-01-01T00:00:00Z");
    REQUIRE(far);
    CHECK(*far > std::chrono::system_clock::now() + std::chrono::hours(24 * 365 * 200));
    auto never = parseTimestamp("9999-12-31T23:59:59Z");
    REQUIRE(never);
    CHECK(*never + std::chrono::hours(1) > *never);
    auto ancient = parseTimestamp("0001-01-01T00:00:00Z");
    REQUIRE(ancient);
    CHECK(*ancient < std::chrono::system_clock::now());
}
