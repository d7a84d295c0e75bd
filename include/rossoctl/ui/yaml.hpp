#pragma once
// YAML <-> JSON, with YAML 1.2 core-schema scalars (true, 3, null) typed as JSON.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace rossoctl::ui {

// Throws Error("<origin>: line L: reason") on malformed input. Multi-document input
// yields an array of documents when allowMulti.
nlohmann::json yamlToJson(const std::string& text, const std::string& origin,
                          bool allowMulti = false);
std::string jsonToYaml(const nlohmann::json& value);
// The same text written to out as it is made, ending in a newline.
void writeYaml(std::ostream& out, const nlohmann::json& value);

}  // namespace rossoctl::ui
