// Go-style durations ("1h30m") for flags such as --timeout and --request-timeout.
#include <fmt/format.h>

#include <cctype>

#include "rossoctl/errors.hpp"
#include "rossoctl/model/validation.hpp"

namespace rossoctl::model {

std::chrono::milliseconds parseDuration(const std::string& text, const std::string& flag) {
    auto invalid = [&] {
        return UsageError(fmt::format(
            "invalid value \"{}\" for {}: want a duration such as 30s, 2m or 1h30m", text, flag));
    };
    if (text == "0") return std::chrono::milliseconds{0};
    if (text.empty()) throw invalid();
    double totalMs = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t start = pos;
        while (pos < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.'))
            ++pos;
        if (pos == start) throw invalid();
        double number = 0;
        try {
            number = std::stod(text.substr(start, pos - start));
        } catch (...) {
            throw invalid();
        }
        size_t unitStart = pos;
        while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) ++pos;
        std::string unit = text.substr(unitStart, pos - unitStart);
        double scale = 0;
        if (unit == "ms")
            scale = 1;
        else if (unit == "s")
            scale = 1000;
        else if (unit == "m")
            scale = 60'000;
        else if (unit == "h")
            scale = 3'600'000;
        else
            throw invalid();
        totalMs += number * scale;
        // A deadline is now + this in nanoseconds: past ~292 years it wraps into the past.
        if (totalMs > 876'000.0 * 3'600'000)
            throw UsageError(fmt::format("invalid value \"{}\" for {}: at most 876000h (100 years)",
                                         text, flag));
    }
    return std::chrono::milliseconds{static_cast<long long>(totalMs)};
}

}  // namespace rossoctl::model
