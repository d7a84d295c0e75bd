#include "rossoctl/ui/jsonpath.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "rossoctl/errors.hpp"
#include "rossoctl/ui/printer.hpp"

namespace rossoctl::ui {
namespace {

using nlohmann::json;

UsageError badPath(const std::string& path, const std::string& why) {
    return UsageError(fmt::format("cannot read the JSONPath \"{}\": {}", path, why));
}

struct Step;

// [?(@.type=="Ready")]: the elements whose value at `path` compares with `literal`, or (no
// operator) that have a value there at all.
struct Filter {
    std::vector<Step> path;
    std::string op;  // "==", "!=", "<", "<=", ">", ">=", or "" for existence
    json literal;
};

// One step of a path: a field name, an index, every element ("*"), or a filter; `recursive`
// (after "..") applies it at every depth below, as kubectl's recursive descent does.
struct Step {
    std::string field;
    long index = 0;
    bool isIndex = false;
    bool all = false;
    bool recursive = false;
    std::shared_ptr<Filter> filter;
};

Step fieldStep(std::string field) {
    Step step;
    step.field = std::move(field);
    return step;
}

Step allStep() {
    Step step;
    step.all = true;
    return step;
}

Step indexStep(long index) {
    Step step;
    step.index = index;
    step.isIndex = true;
    return step;
}

std::vector<Step> parseSteps(const std::string& path);

// Where the ']' closing the '[' at `open` is, past quoted text and nested brackets.
size_t closingBracket(const std::string& text, size_t open) {
    int depth = 0;
    char quote = 0;
    for (size_t i = open; i < text.size(); ++i) {
        const char c = text[i];
        if (quote != 0) {
            if (c == '\\')
                ++i;
            else if (c == quote)
                quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '[') {
            ++depth;
        } else if (c == ']' && --depth == 0) {
            return i;
        }
    }
    return std::string::npos;
}

json parseLiteral(const std::string& path, std::string text) {
    while (!text.empty() && text.front() == ' ') text.erase(0, 1);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
        text.back() == text.front())
        return text.substr(1, text.size() - 2);
    if (text == "true" || text == "false") return text == "true";
    if (text == "null") return nullptr;
    try {
        size_t used = 0;
        const double number = std::stod(text, &used);
        if (used == text.size()) return number;
    } catch (const std::exception&) {
    }
    throw badPath(path, "\"" + text + "\" is not a quoted string, a number, true, false or null");
}

std::shared_ptr<Filter> parseFilter(const std::string& path, const std::string& inside) {
    // inside is "?(@.type=="Ready")"
    if (inside.size() < 4 || inside[1] != '(' || inside.back() != ')')
        throw badPath(path, "a filter is written [?(@.field==\"value\")]");
    const std::string expression = inside.substr(2, inside.size() - 3);
    auto filter = std::make_shared<Filter>();
    size_t at = std::string::npos;
    char quote = 0;
    for (size_t i = 0; i < expression.size() && at == std::string::npos; ++i) {
        const char c = expression[i];
        if (quote != 0) {
            if (c == quote) quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '=' || c == '!' || c == '<' || c == '>') {
            at = i;
        }
    }
    std::string left = expression.substr(0, at);
    while (!left.empty() && left.back() == ' ') left.pop_back();
    if (left.empty() || left.front() != '@')
        throw badPath(path, "a filter compares a path that starts with @");
    filter->path = parseSteps(left);
    if (at == std::string::npos) return filter;
    const bool twoChars = at + 1 < expression.size() && expression[at + 1] == '=';
    filter->op = expression.substr(at, twoChars ? 2 : 1);
    if (filter->op == "=" || filter->op == "!")
        throw badPath(path, "compare with ==, !=, <, <=, > or >=");
    filter->literal = parseLiteral(path, expression.substr(at + filter->op.size()));
    return filter;
}

std::vector<Step> parseSteps(const std::string& path) {
    std::string text = path;
    if (!text.empty() && text.front() == '{' && text.back() == '}')
        text = text.substr(1, text.size() - 2);
    std::vector<Step> steps;
    size_t i = 0;
    if (!text.empty() && (text[0] == '@' || text[0] == '$')) ++i;
    bool recursive = false;  // the next step is reached through ".."
    auto add = [&](Step step) {
        step.recursive = std::exchange(recursive, false);
        steps.push_back(std::move(step));
    };
    while (i < text.size()) {
        if (text[i] == '.') {
            ++i;
            if (i < text.size() && text[i] == '.') {
                recursive = true;
                ++i;
                if (i < text.size() && text[i] == '[') continue;
            }
            std::string field;
            while (i < text.size() && text[i] != '.' && text[i] != '[') {
                if (text[i] == '\\' && i + 1 < text.size()) ++i;  // "\." inside a key
                field += text[i++];
            }
            if (field == "*")
                add(allStep());
            else if (!field.empty())
                add(fieldStep(field));
            else if (recursive)
                throw badPath(path, "\"..\" needs a field after it");
        } else if (text[i] == '[') {
            const size_t close = closingBracket(text, i);
            if (close == std::string::npos) throw badPath(path, "a '[' is not closed");
            std::string inside = text.substr(i + 1, close - i - 1);
            i = close + 1;
            if (inside == "*") {
                add(allStep());
            } else if (!inside.empty() && inside.front() == '?') {
                Step step;
                step.filter = parseFilter(path, inside);
                add(std::move(step));
            } else if (inside.size() >= 2 && (inside.front() == '\'' || inside.front() == '"')) {
                add(fieldStep(inside.substr(1, inside.size() - 2)));
            } else {
                try {
                    size_t used = 0;
                    long index = std::stol(inside, &used);
                    if (used != inside.size()) throw std::invalid_argument(inside);
                    add(indexStep(index));
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

void walk(const json& value, const std::vector<Step>& steps, size_t at, std::vector<json>& out);

bool compare(const json& found, const std::string& op, const json& literal) {
    if (found.is_number() && literal.is_number()) {
        const double a = found.get<double>(), b = literal.get<double>();
        return op == "=="   ? a == b
               : op == "!=" ? a != b
               : op == "<"  ? a < b
               : op == "<=" ? a <= b
               : op == ">"  ? a > b
                            : a >= b;
    }
    if (found.is_string() && literal.is_string()) {
        const auto a = found.get<std::string>(), b = literal.get<std::string>();
        return op == "=="   ? a == b
               : op == "!=" ? a != b
               : op == "<"  ? a < b
               : op == "<=" ? a <= b
               : op == ">"  ? a > b
                            : a >= b;
    }
    if (op == "==") return found == literal;
    if (op == "!=") return found != literal;
    return false;  // an order between values of different kinds holds for none
}

bool matches(const json& element, const Filter& filter) {
    std::vector<json> found;
    walk(element, filter.path, 0, found);
    if (filter.op.empty()) return !found.empty();
    return std::any_of(found.begin(), found.end(),
                       [&](const json& one) { return compare(one, filter.op, filter.literal); });
}

void walkStep(const json& value, const Step& step, const std::vector<Step>& steps, size_t at,
              std::vector<json>& out) {
    if (step.filter) {
        if (value.is_array() || value.is_object())
            for (const auto& element : value)
                if (matches(element, *step.filter)) walk(element, steps, at + 1, out);
    } else if (step.all) {
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

// Every value under `value`, itself first, in document order.
void descend(const json& value, const Step& step, const std::vector<Step>& steps, size_t at,
             std::vector<json>& out) {
    walkStep(value, step, steps, at, out);
    if (value.is_array() || value.is_object())
        for (const auto& child : value) descend(child, step, steps, at, out);
}

void walk(const json& value, const std::vector<Step>& steps, size_t at, std::vector<json>& out) {
    if (at == steps.size()) {
        out.push_back(value);
        return;
    }
    if (steps[at].recursive)
        descend(value, steps[at], steps, at, out);
    else
        walkStep(value, steps[at], steps, at, out);
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
        paths.push_back(relaxedPath(column.substr(colon + 1)));
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

std::string relaxedPath(const std::string& path) {
    if (path.empty() || std::string("{.[@$").find(path.front()) != std::string::npos) return path;
    return "." + path;
}

void checkSortField(const std::vector<json>& items, const std::string& path) {
    const std::string relaxed = relaxedPath(path);
    const auto steps = parseSteps(relaxed);
    if (items.empty()) return;
    for (const auto& item : items) {
        std::vector<json> found;
        walk(item, steps, 0, found);
        if (!found.empty()) return;
    }
    std::string shown = relaxed.front() == '{' ? relaxed : "{" + relaxed + "}";
    throw Error(
        fmt::format("couldn't find any field with path \"{}\" in the list of objects", shown));
}

bool lessByPath(const json& a, const json& b, const std::string& sortPath) {
    const std::string path = relaxedPath(sortPath);
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
    checkSortField(items, path);
    std::stable_sort(items.begin(), items.end(),
                     [&](const json& a, const json& b) { return lessByPath(a, b, path); });
}

}  // namespace rossoctl::ui
