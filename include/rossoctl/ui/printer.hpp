#pragma once
// Output printers: table (aligned, wide, no headers), json, yaml, name.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "rossoctl/ui/color.hpp"

namespace rossoctl::ui {

enum class OutputFormat { Table, Wide, Json, Yaml, Name };

// Throws UsageError listing the accepted values.
OutputFormat parseOutputFormat(const std::string& text,
                               const std::vector<std::string>& allowed = {"table", "wide", "json",
                                                                          "yaml", "name"});

// Cells hold plain text, often a server's (names, reasons): the printers escape every cell
// (escapeForTerminal), then paint the colours below, so only rossoctl's own escapes get out.
struct Table {
    std::vector<std::string> headers;
    std::vector<std::vector<std::string>> rows;
    std::vector<bool> wideOnly;  // per column; empty = none
    struct Paint {
        size_t row;
        size_t column;
        Color color;
    };
    std::vector<Paint> paints = {};  // only when colour is on (ui::paint's `enabled`)
    // Per column (empty = none): the least width under list -w, room for the longer words a
    // later row brings (Running, then Suspending; DependenciesReady, then ...NotReady).
    std::vector<size_t> watchWidths = {};
};

void printTable(std::ostream& out, const Table& table, bool noHeaders, bool wide);

// A table printed as its rows come (list -w): the first rows printed, with the header, set each
// column's width (at least the table's watchWidths), as kubectl's watch keeps those of its
// first page, so every later row lines up under them; a later cell wider than its column moves
// only the rest of its own row (a line already printed cannot be widened, and nothing is cut).
class StreamingTable {
  public:
    StreamingTable(std::ostream& out, bool noHeaders, bool wide)
        : out_(out), noHeaders_(noHeaders), wide_(wide) {}
    // `table`'s rows; nothing at all until the first call with rows.
    void print(const Table& table);

  private:
    std::ostream& out_;
    bool noHeaders_;
    bool wide_;
    std::vector<size_t> widths_;  // set by the first rows
};
void printJson(std::ostream& out, const nlohmann::json& value);
void printYaml(std::ostream& out, const nlohmann::json& value);
// "sandbox.agents.x-k8s.io/orders" for each object (kubectl's -o name), the name escaped.
void printNames(std::ostream& out, const nlohmann::json& objects, const std::string& typeName);

// The object (or each item of a List) without metadata.managedFields, as kubectl prints them
// unless --show-managed-fields.
nlohmann::json withoutManagedFields(nlohmann::json value);

// `document` (one object, or a List) as -o json or yaml, managedFields hidden unless
// showManagedFields; false (nothing printed) for any other format. What list, get and each
// write's -o print through.
bool printJsonOrYaml(std::ostream& out, OutputFormat format, nlohmann::json document,
                     bool showManagedFields);

// A List of objects in the shape kubectl prints for -o json/yaml.
nlohmann::json asList(const nlohmann::json& items);

// kubectl-style ages: 45s, 5m, 3h, 2d, 1y.
std::string formatAge(std::chrono::seconds age);

}  // namespace rossoctl::ui
