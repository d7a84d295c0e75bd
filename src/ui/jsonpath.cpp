#include "rossoctl/ui/jsonpath.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rossoctl/errors.hpp"
#include "rossoctl/ui/printer.hpp"

namespace rossoctl::ui {
namespace {

using nlohmann::json;

UsageError badPath(const std::string& path, const std::string& why) {
    return UsageError(fmt::format("cannot read the JSONPath \"{}\": {}", path, why));
}

// One step of a path: a field name, an index, or every element ("*").
struct Step {
    std::string field;
    long index = 0;
    bool isIndex = false;
    bool all = false;
};

std::vector<Step> parseSteps(const std::string& path) {
    std::string text = path;
    if (!text.empty() && text.front() == '{' && text.back() == '}')
        text = text.substr(1, text.size() - 2);
    std::vector<Step> steps;
    size_t i = 0;
    if (!text.empty() && (text[0] == '@' || text[0] == '$')) ++i;
    while (i < text.size()) {
        if (text[i] == '.') {
            ++i;
            std::string field;
            while (i < text.size() && text[i] != '.' && text[i] != '[') {
                if (text[i] == '\\' && i + 1 < text.size()) ++i;  // "\." inside a key
                field += text[i++];
            }
            if (field == "*")
                steps.push_back({"", 0, false, true});
            else if (!field.empty())
                steps.push_back({field});
        } else if (text[i] == '[') {
            const size_t close = text.find(']', i);
            if (close == std::string::npos) throw badPath(path, "a '[' is not closed");
            std::string inside = text.substr(i + 1, close - i - 1);
            i = close + 1;
            if (inside == "*") {
                steps.push_back({"", 0, false, true});
            } else if (inside.size() >= 2 && (inside.front() == '\'' || inside.front() == '"')) {
                steps.push_back({inside.substr(1, inside.size() - 2)});
            } else {
                try {
                    size_t used = 0;
                    long index = std::stol(inside, &used);
                    if (used != inside.size()) throw std::invalid_argument(inside);
                    steps.push_back({"", index, true});
                } catch (const std::exception&) {
                    throw badPath(path, "\"[" + inside + "]\" is not an index, * or a 'name'");
                }
            }
        } else {
            throw badPath(path, "expected '.' or '[' at \"" + text.substr(i) + "\"");
        }
    }
    return steps;
}

void walk(const json& value, const std::vector<Step>& steps, size_t at, std::vector<json>& out) {
    if (at == steps.size()) {
        out.push_back(value);
        return;
    }
    const Step& step = steps[at];
    if (step.all) {
        if (value.is_array() || value.is_object())
            for (const auto& element : value) walk(element, steps, at + 1, out);
    } else if (step.isIndex) {
        if (!value.is_array()) return;
        long index = step.index < 0 ? static_cast<long>(value.size()) + step.index : step.index;
        if (index >= 0 && index < static_cast<long>(value.size()))
            walk(value[static_cast<size_t>(index)], steps, at + 1, out);
    } else if (value.is_object()) {
        auto found = value.find(step.field);
        if (found != value.end()) walk(*found, steps, at + 1, out);
    }
}

std::string text(const json& value) {
    if (value.is_string()) return value.get<std::string>();
    return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A template piece: literal text, a {path}, or a {range path}...{end} block.
struct Piece {
    enum Kind { Text, Path, Range } kind = Text;
    std::string content;
    std::vector<Piece> body;
};

std::vector<Piece> parseTemplate(const std::string& source, size_t& i, bool inRange) {
    std::vector<Piece> pieces;
    while (i < source.size()) {
        if (source[i] != '{') {
            const size_t next = source.find('{', i);
            pieces.push_back({Piece::Text, source.substr(i, next - i), {}});
            i = next == std::string::npos ? source.size() : next;
            continue;
        }
        const size_t close = source.find('}', i);
        if (close == std::string::npos) throw badPath(source, "a '{' is not closed");
        std::string inside = source.substr(i + 1, close - i - 1);
        i = close + 1;
        if (inside == "end") {
            if (!inRange) throw badPath(source, "{end} without {range}");
            return pieces;
        }
        if (inside.rfind("range ", 0) == 0) {
            Piece range{Piece::Range, inside.substr(6), {}};
            range.body = parseTemplate(source, i, true);
            pieces.push_back(std::move(range));
        } else if (inside.size() >= 2 && inside.front() == '"' && inside.back() == '"') {
            std::string literal;
            for (size_t c = 1; c + 1 < inside.size(); ++c) {
                if (inside[c] == '\\' && c + 2 < inside.size()) {
                    const char escaped = inside[++c];
                    literal += escaped == 'n' ? '\n' : escaped == 't' ? '\t' : escaped;
                } else {
                    literal += inside[c];
                }
            }
            pieces.push_back({Piece::Text, literal, {}});
        } else {
            parseSteps(inside);  // a bad path is a usage error before anything prints
            pieces.push_back({Piece::Path, inside, {}});
        }
    }
    if (inRange) throw badPath(source, "{range} without {end}");
    return pieces;
}

void render(std::ostream& out, const json& value, const std::vector<Piece>& pieces) {
    for (const auto& piece : pieces) {
        if (piece.kind == Piece::Text) {
            out << piece.content;
        } else if (piece.kind == Piece::Path) {
            std::string joined;
            for (const auto& found : findPath(value, piece.content))
                joined += (joined.empty() ? "" : " ") + text(found);
            out << joined;
        } else {
            for (const auto& element : findPath(value, piece.content))
                render(out, element, piece.body);
        }
    }
}

}  // namespace

std::vector<json> findPath(const json& value, const std::string& path) {
    std::vector<json> out;
    walk(value, parseSteps(path), 0, out);
    return out;
}

void printJsonPath(std::ostream& out, const json& value, const std::string& source) {
    size_t at = 0;
    const auto pieces = parseTemplate(source, at, false);
    render(out, value, pieces);  // no newline added, as kubectl
}

void printCustomColumns(std::ostream& out, const std::vector<json>& items, const std::string& spec,
                        bool noHeaders) {
    Table table;
    std::vector<std::string> paths;
    size_t start = 0;
    while (start <= spec.size()) {
        size_t comma = spec.find(',', start);
        if (comma == std::string::npos) comma = spec.size();
        const std::string column = spec.substr(start, comma - start);
        const size_t colon = column.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == column.size())
            throw UsageError(fmt::format(
                "custom-columns: \"{}\" is not HEADER:PATH (e.g. NAME:.metadata.name)", column));
        table.headers.push_back(column.substr(0, colon));
        paths.push_back(column.substr(colon + 1));
        parseSteps(paths.back());
        start = comma + 1;
    }
    for (const auto& item : items) {
        std::vector<std::string> row;
        for (const auto& path : paths) {
            std::string cell;
            for (const auto& found : findPath(item, path))
                cell += (cell.empty() ? "" : ",") + text(found);
            row.push_back(cell.empty() ? "<none>" : cell);
        }
        table.rows.push_back(std::move(row));
    }
    printTable(out, table, noHeaders, true);
}

bool lessByPath(const json& a, const json& b, const std::string& path) {
    auto key = [&](const json& item) {
        auto found = findPath(item, path);
        return found.empty() ? json() : found.front();
    };
    const json left = key(a), right = key(b);
    if (left.is_null() || right.is_null()) return !left.is_null() && right.is_null();
    if (left.is_number() && right.is_number()) return left.get<double>() < right.get<double>();
    return text(left) < text(right);
}

void sortByPath(std::vector<json>& items, const std::string& path) {
    parseSteps(path);
    std::stable_sort(items.begin(), items.end(),
                     [&](const json& a, const json& b) { return lessByPath(a, b, path); });
}

}  // namespace rossoctl::ui
