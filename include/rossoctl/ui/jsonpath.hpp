#pragma once
// kubectl's -o jsonpath=TEMPLATE, -o custom-columns=SPEC and --sort-by=PATH, for the subset
// of JSONPath kubectl users write: .field, ['field'], [n], [*], ..field (at any depth),
// [?(@.type=="Ready")] (==, !=, <, <=, >, >=, or [?(@.field)] for "has one"), {range}...{end},
// {"text"}. --sort-by and custom-columns take a path without its leading dot, as kubectl does.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "rossoctl/ui/printer.hpp"

namespace rossoctl::ui {

// Every value PATH (".metadata.name", "{.items[*].metadata.name}") finds in value, in place:
// recursive descent finds nested values inside one another, and copies would grow with depth.
// Throws UsageError on a path it cannot read, Error past the walk's bound (see jsonpath.cpp).
std::vector<const nlohmann::json*> findPath(const nlohmann::json& value, const std::string& path);

// Prints a jsonpath template ("{.items[*].metadata.name}") against value, as kubectl does:
// several results separated by spaces, strings without quotes, no newline added. Streamed as
// each match is reached; a template that would print more than 4 GiB stops there with Error.
// A server's strings go into a pipe as they are (scripts read them), as kubectl prints them; on
// a terminal (`terminal`) their control characters are escaped, line breaks and tabs kept.
void printJsonPath(std::ostream& out, const nlohmann::json& value, const std::string& text,
                   bool terminal);

// Reads a jsonpath template as printJsonPath does, printing nothing: UsageError when it cannot.
void checkJsonPathTemplate(const std::string& text);

// custom-columns=NAME:.metadata.name,READY:.status.ready over each item; "<none>" if missing.
void printCustomColumns(std::ostream& out, const std::vector<nlohmann::json>& items,
                        const std::string& spec, bool noHeaders);
// The table printCustomColumns prints: what a -w stream lines up under its first rows' widths.
Table customColumnsTable(const std::vector<nlohmann::json>& items, const std::string& spec);

// "metadata.name" as ".metadata.name": how --sort-by and custom-columns read a path.
std::string relaxedPath(const std::string& path);

// Throws UsageError for a path it cannot read and, as kubectl does, Error when items are not
// empty and none has a value at path ("couldn't find any field with path ...").
void checkSortField(const std::vector<nlohmann::json>& items, const std::string& path);

// Sorts items by the first value path finds in each (numbers by value, else as text); a stable
// sort, so items without the field keep their order. checkSortField first.
void sortByPath(std::vector<nlohmann::json>& items, const std::string& path);
// The order sortByPath uses: a before b.
bool lessByPath(const nlohmann::json& a, const nlohmann::json& b, const std::string& path);

}  // namespace rossoctl::ui
