// Reading `sandbox verify -o json`'s report in the verify cases.
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace harness {

// The check with this id; the case fails when the report has none.
inline const nlohmann::json& checkNamed(const nlohmann::json& report, const std::string& id) {
    for (const auto& check : report["checks"])
        if (check["id"] == id) return check;
    FAIL("no check " << id);
    static const nlohmann::json none;
    return none;
}

// A check's static and live evidence, a line each.
inline std::string evidenceOf(const nlohmann::json& check) {
    std::string text;
    for (const char* part : {"static", "live"})
        for (const auto& line : check[part]["evidence"]) text += line.get<std::string>() + "\n";
    return text;
}

}  // namespace harness
