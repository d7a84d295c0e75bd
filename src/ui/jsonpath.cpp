#include "rossoctl/ui/jsonpath.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "rossoctl/errors.hpp"
#include "rossoctl/ui/printer.hpp"
#include "rossoctl/ui/terminal_text.hpp"

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

// What one template, column list or sort key may cost, whatever a server nests: recursive
// descent reaches a node once per ".." above it and prints each match's whole subtree, so walk
// and text grow with depth times size. Matches are never copied and -o jsonpath streams, so
// memory stays at the path's depth; these bound the time and the text instead.
constexpr size_t kMaxVisits = 20'000'000;  // ~12 walks of the largest document a server sends
// kubectl prints every match of {..image}, nested ones too: the output may be quadratic in the
// depth, so it is bounded only where it would fill a disk, not where kubectl's would end.
constexpr size_t kMaxPrintedBytes = size_t{4} << 30;
// custom-columns holds its cells in a table until the widths are known (and a string grows by
// doubling: up to twice this in memory).
constexpr size_t kMaxColumnBytes = size_t{128} << 20;

// A match handed over in place (the document outlives the walk); false stops the walk.
using Found = std::function<bool(const json&)>;

// Counts the values every walk of one template visits, against kMaxVisits.
struct WalkBudget {
    std::string path;  // the template or spec, for the error
    size_t visits = 0;
};

class Walker {
  public:
    // strictIndex: an index past an array's end is kubectl's error, as -o jsonpath reads it
    // ("array index out of bounds"), not a silent nothing; a filter's own path stays lenient.
    explicit Walker(WalkBudget& budget, bool strictIndex = false)
        : budget_(budget), strictIndex_(strictIndex) {}
    // Hands each value steps[at..] finds under `value` to `found`, in document order; false
    // when `found` stopped the walk.
    bool walk(const json& value, const std::vector<Step>& steps, size_t at, const Found& found);

  private:
    bool walkStep(const json& value, const Step& step, const std::vector<Step>& steps, size_t at,
                  const Found& found);
    bool descend(const json& value, const Step& step, const std::vector<Step>& steps, size_t at,
                 const Found& found);
    bool matches(const json& element, const Filter& filter);
    void visit();
    WalkBudget& budget_;
    bool strictIndex_;
};

void Walker::visit() {
    if (++budget_.visits > kMaxVisits)
        throw Error(fmt::format(
            "the JSONPath \"{}\" visits more than {} values of this document (recursive descent "
            "through nesting): stopped",
            budget_.path, kMaxVisits));
}

template <typename Value>
bool compareAs(const Value& a, const std::string& op, const Value& b) {
    return op == "=="   ? a == b
           : op == "!=" ? a != b
           : op == "<"  ? a < b
           : op == "<=" ? a <= b
           : op == ">"  ? a > b
                        : a >= b;
}

bool compare(const json& found, const std::string& op, const json& literal) {
    if (found.is_number() && literal.is_number())
        return compareAs(found.get<double>(), op, literal.get<double>());
    if (found.is_string() && literal.is_string())
        return compareAs(found.get_ref<const std::string&>(), op,
                         literal.get_ref<const std::string&>());
    if (op == "==") return found == literal;
    if (op == "!=") return found != literal;
    return false;  // an order between values of different kinds holds for none
}

bool Walker::matches(const json& element, const Filter& filter) {
    bool matched = false;
    Walker(budget_).walk(element, filter.path, 0, [&](const json& one) {
        matched = filter.op.empty() || compare(one, filter.op, filter.literal);
        return !matched;
    });
    return matched;
}

bool Walker::walkStep(const json& value, const Step& step, const std::vector<Step>& steps,
                      size_t at, const Found& found) {
    if (step.filter) {
        if (value.is_array() || value.is_object())
            for (const auto& element : value)
                if (matches(element, *step.filter) && !walk(element, steps, at + 1, found))
                    return false;
    } else if (step.all) {
        if (value.is_array() || value.is_object())
            for (const auto& element : value)
                if (!walk(element, steps, at + 1, found)) return false;
    } else if (step.isIndex) {
        if (!value.is_array()) return true;
        long index = step.index < 0 ? static_cast<long>(value.size()) + step.index : step.index;
        if (index >= 0 && index < static_cast<long>(value.size()))
            return walk(value[static_cast<size_t>(index)], steps, at + 1, found);
        if (strictIndex_ && !step.recursive)
            throw Error(fmt::format(
                "error executing jsonpath \"{}\": array index out of bounds: index {}, length {}",
                budget_.path, index, value.size()));
    } else if (value.is_object()) {
        auto match = value.find(step.field);
        if (match != value.end()) return walk(*match, steps, at + 1, found);
    }
    return true;
}

// Every value under `value`, itself first, in document order.
bool Walker::descend(const json& value, const Step& step, const std::vector<Step>& steps, size_t at,
                     const Found& found) {
    visit();
    if (!walkStep(value, step, steps, at, found)) return false;
    if (value.is_array() || value.is_object())
        for (const auto& child : value)
            if (!descend(child, step, steps, at, found)) return false;
    return true;
}

bool Walker::walk(const json& value, const std::vector<Step>& steps, size_t at,
                  const Found& found) {
    visit();
    if (at == steps.size()) return found(value);
    if (steps[at].recursive) return descend(value, steps[at], steps, at, found);
    return walkStep(value, steps[at], steps, at, found);
}

// Text written through nlohmann's serializer and the template's own, counted against `limit`
// and handed to `sink`: -o jsonpath's stream, or a custom-columns cell.
class BoundedText : public nlohmann::detail::output_adapter_protocol<char> {
  public:
    BoundedText(std::function<void(std::string_view)> sink, size_t limit, std::string what)
        : sink_(std::move(sink)), limit_(limit), what_(std::move(what)) {}
    void write_character(char c) override { write_characters(&c, 1); }
    void write_characters(const char* text, size_t length) override {
        if (length > limit_ - used_)
            throw Error(
                fmt::format("{} makes more than {} MiB of text from this document "
                            "(recursive descent through nesting): stopped",
                            what_, limit_ >> 20));
        used_ += length;
        sink_(std::string_view(text, length));
    }
    void write(std::string_view text) { write_characters(text.data(), text.size()); }

  private:
    std::function<void(std::string_view)> sink_;
    size_t limit_;
    std::string what_;
    size_t used_ = 0;
};

// A string as its text, anything else as compact JSON, as kubectl prints a match; streamed, so
// a match's subtree is never held as text. `terminal`: a string's control characters escaped
// (its line breaks and tabs kept, as a pod's logs are), for the text is the server's; compact
// JSON escapes its own (\u001b).
void writeValue(BoundedText& text, const json& value, bool terminal = false) {
    if (value.is_string()) {
        const std::string_view string = value.get_ref<const std::string&>();
        if (!terminal) return text.write(string);
        constexpr size_t kPiece = 64 * 1024;  // escaped by pieces: never 4x a big string at once
        TerminalTextStream escaper;
        for (size_t at = 0; at < string.size(); at += kPiece)
            text.write(escaper.feed(string.substr(at, kPiece)));
        return text.write(escaper.finish());
    }
    // Not owned: the serializer lives only within this call.
    std::shared_ptr<nlohmann::detail::output_adapter_protocol<char>> adapter(
        &text, [](nlohmann::detail::output_adapter_protocol<char>*) {});
    nlohmann::detail::serializer<json> serializer(adapter, ' ', json::error_handler_t::replace);
    serializer.dump(value, false, false, 0);
}

// A template piece: literal text, a {path}, or a {range path}...{end} block.
struct Piece {
    enum Kind { Text, Path, Range } kind = Text;
    std::string content;
    std::vector<Piece> body;
    std::vector<Step> steps = {};  // a Path's or Range's, parsed once
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
            range.steps = parseSteps(range.content);
            range.body = parseTemplate(source, i, true);
            pieces.push_back(std::move(range));
        } else if (inside.size() >= 2 && (inside.front() == '"' || inside.front() == '\'') &&
                   inside.back() == inside.front()) {
            // text in double or single quotes ({"\n"}, {'\t'}), as kubectl's parser takes both
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
            // a bad path is a usage error before anything prints
            pieces.push_back({Piece::Path, inside, {}, parseSteps(inside)});
        }
    }
    if (inRange) throw badPath(source, "{range} without {end}");
    return pieces;
}

// Writes each piece as it is reached: a {path}'s matches separated by spaces, a {range}'s body
// once per match.
void render(BoundedText& text, Walker& walker, const json& value, const std::vector<Piece>& pieces,
            bool terminal) {
    for (const auto& piece : pieces) {
        if (piece.kind == Piece::Text) {
            text.write(piece.content);
        } else if (piece.kind == Piece::Path) {
            bool first = true;
            walker.walk(value, piece.steps, 0, [&](const json& found) {
                if (!std::exchange(first, false)) text.write(" ");
                writeValue(text, found, terminal);
                return true;
            });
        } else {
            walker.walk(value, piece.steps, 0, [&](const json& found) {
                render(text, walker, found, piece.body, terminal);
                return true;
            });
        }
    }
}

}  // namespace

std::vector<const json*> findPath(const json& value, const std::string& path) {
    std::vector<const json*> found;
    WalkBudget budget{path};
    Walker(budget).walk(value, parseSteps(path), 0, [&](const json& one) {
        found.push_back(&one);
        return true;
    });
    return found;
}

void printJsonPath(std::ostream& out, const json& value, const std::string& source, bool terminal) {
    size_t at = 0;
    const auto pieces = parseTemplate(source, at, false);
    WalkBudget budget{source};
    Walker walker(budget, /*strictIndex=*/true);
    BoundedText text([&](std::string_view bytes) { out << bytes; }, kMaxPrintedBytes,
                     "the JSONPath template \"" + source + "\"");
    render(text, walker, value, pieces, terminal);  // no newline added, as kubectl
}

void checkJsonPathTemplate(const std::string& source) {
    size_t at = 0;
    parseTemplate(source, at, false);
}

void printCustomColumns(std::ostream& out, const std::vector<json>& items, const std::string& spec,
                        bool noHeaders) {
    printTable(out, customColumnsTable(items, spec), noHeaders, true);
}

Table customColumnsTable(const std::vector<json>& items, const std::string& spec) {
    Table table;
    std::vector<std::vector<Step>> columnSteps;
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
        columnSteps.push_back(parseSteps(relaxedPath(column.substr(colon + 1))));
        start = comma + 1;
    }
    WalkBudget budget{spec};
    Walker walker(budget);
    std::string* cell = nullptr;  // the cell being written
    BoundedText text([&](std::string_view bytes) { cell->append(bytes); }, kMaxColumnBytes,
                     "custom-columns \"" + spec + "\"");
    for (const auto& item : items) {
        std::vector<std::string> row;
        for (const auto& steps : columnSteps) {
            cell = &row.emplace_back();
            walker.walk(item, steps, 0, [&](const json& found) {
                if (!cell->empty()) text.write(",");
                writeValue(text, found);
                return true;
            });
            if (cell->empty()) *cell = "<none>";
        }
        table.rows.push_back(std::move(row));
    }
    return table;
}

std::string relaxedPath(const std::string& path) {
    if (path.empty() || std::string("{.[@$").find(path.front()) != std::string::npos) return path;
    return "." + path;
}

namespace {

// The first value `steps` find in `item`, or nullptr: the walk ends there.
const json* firstMatch(const json& item, const std::vector<Step>& steps, WalkBudget& budget) {
    const json* first = nullptr;
    Walker(budget).walk(item, steps, 0, [&](const json& found) {
        first = &found;
        return false;
    });
    return first;
}

}  // namespace

void checkSortField(const std::vector<json>& items, const std::string& path) {
    const std::string relaxed = relaxedPath(path);
    const auto steps = parseSteps(relaxed);
    if (items.empty()) return;
    WalkBudget budget{relaxed};
    for (const auto& item : items)
        if (firstMatch(item, steps, budget)) return;
    std::string shown = relaxed.front() == '{' ? relaxed : "{" + relaxed + "}";
    throw Error(
        fmt::format("couldn't find any field with path \"{}\" in the list of objects", shown));
}

bool lessByPath(const json& a, const json& b, const std::string& sortPath) {
    const std::string path = relaxedPath(sortPath);
    const auto steps = parseSteps(path);
    WalkBudget budget{path};
    const json* left = firstMatch(a, steps, budget);
    const json* right = firstMatch(b, steps, budget);
    const bool leftNull = !left || left->is_null(), rightNull = !right || right->is_null();
    if (leftNull || rightNull) return !leftNull && rightNull;
    if (left->is_number() && right->is_number()) return left->get<double>() < right->get<double>();
    if (left->is_string() && right->is_string())
        return left->get_ref<const std::string&>() < right->get_ref<const std::string&>();
    auto text = [](const json& value) {
        return value.is_string() ? value.get<std::string>()
                                 : value.dump(-1, ' ', false, json::error_handler_t::replace);
    };
    return text(*left) < text(*right);
}

void sortByPath(std::vector<json>& items, const std::string& path) {
    checkSortField(items, path);
    std::stable_sort(items.begin(), items.end(),
                     [&](const json& a, const json& b) { return lessByPath(a, b, path); });
}

}  // namespace rossoctl::ui
