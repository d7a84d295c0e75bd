#include "rossoctl/ui/printer.hpp"

#include <algorithm>

#include "rossoctl/errors.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "rossoctl/ui/yaml.hpp"

namespace rossoctl::ui {

namespace {

// Columns line up by what the eye sees: a color's escape sequence takes no room.
size_t visibleWidth(const std::string& cell) {
    size_t width = 0;
    for (size_t i = 0; i < cell.size(); ++i) {
        if (cell[i] == '\033' && i + 1 < cell.size() && cell[i + 1] == '[') {
            i = cell.find('m', i);
            if (i == std::string::npos) break;
            continue;
        }
        ++width;
    }
    return width;
}

}  // namespace

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

void widen(std::vector<size_t>& widths, const std::vector<size_t>& columns,
           const std::vector<std::string>& row) {
    for (size_t i : columns)
        if (i < row.size())
            widths[i] = std::max(widths[i], std::min(visibleWidth(row[i]), kMaxPaddedWidth));
}

// The rows as shown: each cell escaped, then painted (the paint's escapes are the only ones).
std::vector<std::vector<std::string>> shownRows(const Table& table) {
    std::vector<std::vector<std::string>> rows;
    rows.reserve(table.rows.size());
    for (const auto& row : table.rows) {
        auto& shown = rows.emplace_back();
        shown.reserve(row.size());
        for (const auto& cell : row) shown.push_back(escapeForTerminal(cell));
    }
    for (const auto& paint : table.paints)
        if (paint.row < rows.size() && paint.column < rows[paint.row].size())
            rows[paint.row][paint.column] =
                ui::paint(paint.color, rows[paint.row][paint.column], true);
    return rows;
}

std::vector<std::string> shownHeaders(const Table& table) {
    std::vector<std::string> headers;
    for (const auto& header : table.headers) headers.push_back(escapeForTerminal(header));
    return headers;
}

// One line, each cell padded to its column's width and three spaces (none after the last).
void printRow(std::ostream& out, const std::vector<size_t>& columns,
              const std::vector<size_t>& widths, const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < columns.size(); ++c) {
        size_t i = columns[c];
        static const std::string empty;
        const std::string& cell = i < row.size() ? row[i] : empty;
        line += cell;
        if (c + 1 < columns.size())
            line +=
                std::string(std::max(widths[i], visibleWidth(cell)) - visibleWidth(cell) + 3, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
}

}  // namespace

void printTable(std::ostream& out, const Table& table, bool noHeaders, bool wide) {
    const auto columns = shownColumns(table, wide);
    const auto headers = shownHeaders(table);
    const auto rows = shownRows(table);
    std::vector<size_t> widths(table.headers.size(), 0);
    if (!noHeaders) widen(widths, columns, headers);
    for (const auto& row : rows) widen(widths, columns, row);
    if (!noHeaders) printRow(out, columns, widths, headers);
    for (const auto& row : rows) printRow(out, columns, widths, row);
}

void StreamingTable::print(const Table& table) {
    if (table.rows.empty()) return;
    const auto columns = shownColumns(table, wide_);
    const auto rows = shownRows(table);
    if (widths_.empty()) {
        const auto headers = shownHeaders(table);
        widths_.assign(table.headers.size(), 0);
        if (!noHeaders_) widen(widths_, columns, headers);
        for (const auto& row : rows) widen(widths_, columns, row);
        if (!noHeaders_) printRow(out_, columns, widths_, headers);
    }
    for (const auto& row : rows) printRow(out_, columns, widths_, row);
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
