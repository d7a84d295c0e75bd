#include "rossoctl/ui/printer.hpp"

#include <algorithm>
#include <tuple>

#include "rossoctl/errors.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "rossoctl/ui/yaml.hpp"

namespace rossoctl::ui {

OutputFormat parseOutputFormat(const std::string& text, const std::vector<std::string>& allowed) {
    std::string value = text.empty() ? "table" : text;
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
        std::string list;
        for (const auto& name : allowed) list += (list.empty() ? "" : ", ") + name;
        throw UsageError("unsupported output format \"" + value + "\"; use one of: " + list);
    }
    if (value == "wide") return OutputFormat::Wide;
    if (value == "json") return OutputFormat::Json;
    if (value == "yaml") return OutputFormat::Yaml;
    if (value == "name") return OutputFormat::Name;
    return OutputFormat::Table;
}

namespace {

// The columns shown: all with `wide`, else those not marked wide-only.
std::vector<size_t> shownColumns(const Table& table, bool wide) {
    std::vector<size_t> columns;
    for (size_t i = 0; i < table.headers.size(); ++i)
        if (wide || i >= table.wideOnly.size() || !table.wideOnly[i]) columns.push_back(i);
    return columns;
}

// No column is padded wider than this: one server's 10 MiB name must not pad every other row
// of its column with 10 MiB of spaces (100 rows printed 1 GB). The long cell itself is whole.
constexpr size_t kMaxPaddedWidth = 1024;

// A cell takes the room of its escaped text (a paint's escapes take none), up to the bound.
void widen(std::vector<size_t>& widths, const std::vector<size_t>& columns,
           const std::vector<std::string>& row) {
    for (size_t i : columns)
        if (i < row.size())
            widths[i] =
                std::max(widths[i], std::min(escapedSizeForTerminal(row[i]), kMaxPaddedWidth));
}

// The paints of one row, by column, in the order given (a cell painted twice nests them).
class RowPaints {
  public:
    explicit RowPaints(const Table& table) : paints_(table.paints) {
        std::stable_sort(paints_.begin(), paints_.end(), [](const auto& a, const auto& b) {
            return std::tie(a.row, a.column) < std::tie(b.row, b.column);
        });
    }
    // `shown` (cell `column` of row `row`, escaped) with its paints; rows are asked in order.
    void apply(size_t row, size_t column, std::string& shown) {
        while (next_ < paints_.size() && paints_[next_].row < row) ++next_;
        for (size_t i = next_; i < paints_.size() && paints_[i].row == row; ++i)
            if (paints_[i].column == column) shown = ui::paint(paints_[i].color, shown, true);
    }
    bool rowHasPaints(size_t row) {
        while (next_ < paints_.size() && paints_[next_].row < row) ++next_;
        return next_ < paints_.size() && paints_[next_].row == row;
    }

  private:
    std::vector<Table::Paint> paints_;
    size_t next_ = 0;
};

// One line, each cell escaped as it is written (the table holds the server's text once, never
// an escaped copy of it), painted, padded to its column's width and three spaces (none after
// the last). `row` is the index paints name, or none for the header.
void printRow(std::ostream& out, const std::vector<size_t>& columns,
              const std::vector<size_t>& widths, const std::vector<std::string>& cells,
              RowPaints* paints = nullptr, size_t row = 0) {
    const bool painted = paints != nullptr && paints->rowHasPaints(row);
    std::string line;
    for (size_t c = 0; c < columns.size(); ++c) {
        const size_t i = columns[c];
        const size_t start = line.size();
        if (i < cells.size()) appendEscapedForTerminal(line, cells[i]);
        const size_t width = line.size() - start;
        if (painted && i < cells.size()) {
            std::string shown = line.substr(start);
            paints->apply(row, i, shown);
            line.replace(start, std::string::npos, shown);
        }
        if (c + 1 < columns.size()) line.append(std::max(widths[i], width) - width + 3, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
}

}  // namespace

void printTable(std::ostream& out, const Table& table, bool noHeaders, bool wide) {
    const auto columns = shownColumns(table, wide);
    std::vector<size_t> widths(table.headers.size(), 0);
    if (!noHeaders) widen(widths, columns, table.headers);
    for (const auto& row : table.rows) widen(widths, columns, row);
    if (!noHeaders) printRow(out, columns, widths, table.headers);
    RowPaints paints(table);
    for (size_t r = 0; r < table.rows.size(); ++r)
        printRow(out, columns, widths, table.rows[r], &paints, r);
}

void StreamingTable::print(const Table& table) {
    if (table.rows.empty()) return;
    const auto columns = shownColumns(table, wide_);
    if (widths_.empty()) {
        widths_.assign(table.headers.size(), 0);
        if (!noHeaders_) widen(widths_, columns, table.headers);
        for (const auto& row : table.rows) widen(widths_, columns, row);
        for (size_t i = 0; i < table.watchWidths.size() && i < widths_.size(); ++i)
            widths_[i] = std::max(widths_[i], table.watchWidths[i]);
        if (!noHeaders_) printRow(out_, columns, widths_, table.headers);
    }
    RowPaints paints(table);
    for (size_t r = 0; r < table.rows.size(); ++r)
        printRow(out_, columns, widths_, table.rows[r], &paints, r);
}

// Both stream their text: indentation makes a deep body's output a thousand times its size
// (3 MB of JSON printed as 1.6 GB), which must never be held in memory whole.
void printJson(std::ostream& out, const nlohmann::json& value) {
    nlohmann::detail::serializer<nlohmann::json> serializer(
        nlohmann::detail::output_adapter<char>(out), ' ', nlohmann::json::error_handler_t::replace);
    serializer.dump(value, /*pretty_print=*/true, /*ensure_ascii=*/false, 4);
    out << '\n';
}

void printYaml(std::ostream& out, const nlohmann::json& value) {
    writeYaml(out, value);
}

namespace {

// metadata.name, or "" when a server's object lacks it or holds something else there.
std::string nameOf(const nlohmann::json& object) {
    if (!object.is_object()) return "";
    const auto metadata = object.find("metadata");
    if (metadata == object.end() || !metadata->is_object()) return "";
    const auto name = metadata->find("name");
    return name != metadata->end() && name->is_string() ? name->get<std::string>() : "";
}

}  // namespace

void printNames(std::ostream& out, const nlohmann::json& objects, const std::string& typeName) {
    auto one = [&](const nlohmann::json& object) {
        out << typeName << '/' << escapeForTerminal(nameOf(object)) << '\n';
    };
    if (objects.is_array()) {
        for (const auto& object : objects) one(object);
    } else if (objects.contains("items")) {
        for (const auto& object : objects["items"]) one(object);
    } else {
        one(objects);
    }
}

bool printJsonOrYaml(std::ostream& out, OutputFormat format, nlohmann::json document,
                     bool showManagedFields) {
    if (format != OutputFormat::Json && format != OutputFormat::Yaml) return false;
    if (!showManagedFields) document = withoutManagedFields(std::move(document));
    if (format == OutputFormat::Json)
        printJson(out, document);
    else
        printYaml(out, document);
    return true;
}

nlohmann::json withoutManagedFields(nlohmann::json value) {
    if (value.is_object() && value.contains("metadata") && value["metadata"].is_object())
        value["metadata"].erase("managedFields");
    if (value.is_object() && value.contains("items") && value["items"].is_array())
        for (auto& item : value["items"]) item = withoutManagedFields(std::move(item));
    return value;
}

nlohmann::json asList(const nlohmann::json& items) {
    return {{"apiVersion", "v1"},
            {"kind", "List"},
            {"metadata", {{"resourceVersion", ""}}},
            {"items", items.is_array() ? items : nlohmann::json::array()}};
}

std::string formatAge(std::chrono::seconds age) {
    long long s = std::max<long long>(0, age.count());
    if (s < 120) return std::to_string(s) + "s";
    long long m = s / 60;
    if (m < 10) return std::to_string(m) + "m" + (s % 60 ? std::to_string(s % 60) + "s" : "");
    if (m < 180) return std::to_string(m) + "m";
    long long h = m / 60;
    if (h < 8) return std::to_string(h) + "h" + (m % 60 ? std::to_string(m % 60) + "m" : "");
    if (h < 48) return std::to_string(h) + "h";
    long long d = h / 24;
    if (d < 8) return std::to_string(d) + "d" + (h % 24 ? std::to_string(h % 24) + "h" : "");
    if (d < 365 * 2) return std::to_string(d) + "d";
    return std::to_string(d / 365) + "y";
}

}  // namespace rossoctl::ui
