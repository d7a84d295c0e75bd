#include "rossoctl/kube/timestamp.hpp"

#include <cstdio>
#include <ctime>

namespace rossoctl::kube {

std::optional<std::chrono::system_clock::time_point> parseTimestamp(const std::string& text) {
    std::tm tm{};
    int consumed = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6)
        return std::nullopt;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    std::string rest = text.substr(static_cast<size_t>(consumed));
    size_t pos = 0;
    if (pos < rest.size() && rest[pos] == '.') {  // fractional seconds are dropped
        ++pos;
        while (pos < rest.size() && rest[pos] >= '0' && rest[pos] <= '9') ++pos;
    }
    long offsetSeconds = 0;
    if (pos < rest.size() && (rest[pos] == 'Z' || rest[pos] == 'z')) {
        ++pos;
    } else if (pos < rest.size() && (rest[pos] == '+' || rest[pos] == '-')) {
        int hours = 0, minutes = 0;
        if (std::sscanf(rest.c_str() + pos + 1, "%2d:%2d", &hours, &minutes) != 2)
            return std::nullopt;
        offsetSeconds = (hours * 3600L + minutes * 60L) * (rest[pos] == '+' ? 1 : -1);
        pos += 6;
    } else {
        return std::nullopt;
    }
    if (pos != rest.size()) return std::nullopt;
    time_t utc = timegm(&tm);
    if (utc == static_cast<time_t>(-1)) return std::nullopt;
    // system_clock counts nanoseconds in 64 bits (years 1678-2261); beyond that a time is
    // clamped a day short of the limit, so "9999-12-31" still reads as "far future".
    const long long seconds = static_cast<long long>(utc) - offsetSeconds;
    constexpr long long kLimit =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::duration::max())
            .count() -
        86400;
    if (seconds > kLimit)
        return std::chrono::system_clock::time_point(std::chrono::seconds(kLimit));
    if (seconds < -kLimit)
        return std::chrono::system_clock::time_point(std::chrono::seconds(-kLimit));
    return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
}

std::string formatTimestamp(std::chrono::system_clock::time_point when) {
    time_t seconds = std::chrono::system_clock::to_time_t(when);
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
}

}  // namespace rossoctl::kube
