#pragma once
// Caps on what a pod may send (sandbox run --artifacts-max-*, sandbox cp --max-*).
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "rossoctl/errors.hpp"
#include "rossoctl/model/validation.hpp"

namespace rossoctl::commands {

// A cap such as 512Mi or 10000: a whole number above 0.
inline uint64_t parseCap(const std::string& value, const std::string& flag) {
    const double number = model::parseQuantity(value, flag);
    if (number < 1 || number > 9.0e18 ||
        number != static_cast<double>(static_cast<uint64_t>(number)))
        throw UsageError(fmt::format("{} must be a whole number above 0, e.g. 512Mi", flag));
    return static_cast<uint64_t>(number);
}

}  // namespace rossoctl::commands
