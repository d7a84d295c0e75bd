#include "rossoctl/model/validation.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <regex>

#include "rossoctl/errors.hpp"

namespace rossoctl::model {
namespace {

// Shown in messages without letting control characters or huge input through.
std::string printable(const std::string& value) {
    std::string out;
    for (unsigned char c : value.substr(0, 80)) out += (c < 0x20 || c == 0x7f) ? '?' : char(c);
    if (value.size() > 80) out += "...";
    return out;
}

}  // namespace

void validateDnsLabel(const std::string& value, const std::string& what) {
    static const std::regex kLabel("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    if (value.empty()) throw UsageError(what + " must not be empty");
    if (value.size() > 63)
        throw UsageError(fmt::format("{} \"{}\" is {} characters long; at most 63 are allowed",
                                     what, printable(value), value.size()));
    if (!std::regex_match(value, kLabel))
        throw UsageError(fmt::format(
            "{} \"{}\" is not a valid name: use lower-case letters, digits and '-', starting and "
            "ending with a letter or digit",
            what, printable(value)));
}

namespace {

bool subdomainShaped(const std::string& value) {
    static const std::regex kSubdomain(
        "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    return std::regex_match(value, kSubdomain);
}

}  // namespace

bool isDnsSubdomain(const std::string& value) {
    return !value.empty() && value.size() <= 253 && subdomainShaped(value);
}

void validateDnsSubdomain(const std::string& value, const std::string& what) {
    if (value.empty()) throw UsageError(what + " must not be empty");
    if (value.size() > 253)
        throw UsageError(
            fmt::format("{} is {} characters long; at most 253 are allowed", what, value.size()));
    if (!subdomainShaped(value))
        throw UsageError(fmt::format(
            "{} \"{}\" is not a valid name: use lower-case letters, digits, '-' and '.'", what,
            printable(value)));
}

void validateEnvName(const std::string& value, const std::string& what) {
    if (value.empty()) throw UsageError(what + ": a variable name must not be empty");
    // A plain loop, not std::regex: its recursion per character overflowed the stack on a
    // 30,000-character name.
    const auto allowed = [](char c, bool first) {
        return std::isalpha(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
               (!first && std::isdigit(static_cast<unsigned char>(c)));
    };
    bool valid = allowed(value[0], true);
    for (size_t i = 1; valid && i < value.size(); ++i) valid = allowed(value[i], false);
    if (!valid)
        throw UsageError(fmt::format(
            "{}: \"{}\" is not a valid variable name: use letters, digits, '_', '-' and '.', not "
            "starting with a digit",
            what, printable(value)));
}

double parseQuantity(const std::string& value, const std::string& what) {
    static const std::regex kQuantity(
        R"(([+]?)([0-9]+(\.[0-9]*)?|\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][-+]?[0-9]+)?)");
    auto invalid = [&] {
        return UsageError(fmt::format(
            "invalid quantity \"{}\" for {}: use a number with an optional suffix such as 500m, "
            "2, 512Mi or 1Gi",
            printable(value), what));
    };
    // stod throws on numbers out of double's range; that is bad input too, not a crash.
    auto toNumber = [&](const std::string& text) {
        try {
            return std::stod(text);
        } catch (const std::exception&) {
            throw invalid();
        }
    };
    std::smatch match;
    // Length first: std::regex recurses per character and a long input overflows the stack.
    if (value.size() > 64 || !std::regex_match(value, match, kQuantity)) throw invalid();
    double number = toNumber(match[2].str());
    const std::string suffix = match[4].str();
    static const std::vector<std::pair<std::string, double>> kScale = {{"m", 1e-3},
                                                                       {"k", 1e3},
                                                                       {"M", 1e6},
                                                                       {"G", 1e9},
                                                                       {"T", 1e12},
                                                                       {"P", 1e15},
                                                                       {"E", 1e18},
                                                                       {"Ki", 1024.0},
                                                                       {"Mi", 1048576.0},
                                                                       {"Gi", 1073741824.0},
                                                                       {"Ti", 1099511627776.0},
                                                                       {"Pi", std::pow(1024.0, 5)},
                                                                       {"Ei", std::pow(1024.0, 6)}};
    if (suffix.empty()) return number;
    // Binary and decimal suffixes first: "E" alone is exa, not an exponent without digits.
    for (const auto& [name, scale] : kScale)
        if (name == suffix) return number * scale;
    return number * std::pow(10.0, toNumber(suffix.substr(1)));
}

void validateImageReference(const std::string& value, const std::string& what) {
    // [host[:port]/]path(/path)*[:tag][@algo:hex]
    static const std::regex kImage(
        R"(((([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*(:[0-9]+)?|\[[0-9a-fA-F:]+\](:[0-9]+)?)/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?)");
    if (value.empty()) throw UsageError(what + " must not be empty");
    // Length first (std::regex recurses per character); real references are far shorter.
    if (value.size() > 1024 || !std::regex_match(value, kImage))
        throw UsageError(
            fmt::format("{} \"{}\" is not a valid image reference (expected e.g. "
                        "registry.example.com/team/agent:1.2)",
                        what, printable(value)));
}

int parsePort(const std::string& value, const std::string& what) {
    static const std::regex kDigits("[0-9]{1,5}");
    if (value.size() > 5 || !std::regex_match(value, kDigits) || std::stoi(value) < 1 ||
        std::stoi(value) > 65535)
        throw UsageError(
            fmt::format("invalid port \"{}\" for {}: want 1-65535", printable(value), what));
    return std::stoi(value);
}

EnvVar parseEnvAssignment(const std::string& text, const std::string& what) {
    auto eq = text.find('=');
    if (eq == std::string::npos)
        throw UsageError(
            fmt::format("{}: \"{}\" is not of the form NAME=VALUE", what, printable(text)));
    EnvVar var{text.substr(0, eq), text.substr(eq + 1)};
    validateEnvName(var.name, what);
    return var;
}

std::vector<EnvVar> parseEnvFile(const std::string& text, const std::string& origin) {
    std::vector<EnvVar> vars;
    size_t lineNumber = 0, pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(pos, end - pos);
        pos = end + 1;
        ++lineNumber;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        size_t start = line.find_first_not_of(" \t");
        if (start == std::string::npos || line[start] == '#') {
            if (end == text.size()) break;
            continue;
        }
        line = line.substr(start);
        if (line.rfind("export ", 0) == 0) line = line.substr(7);
        std::string where = fmt::format("{}: line {}", origin, lineNumber);
        EnvVar var = parseEnvAssignment(line, where);
        if (var.value.size() >= 2 && (var.value.front() == '"' || var.value.front() == '\'') &&
            var.value.back() == var.value.front())
            var.value = var.value.substr(1, var.value.size() - 2);
        vars.push_back(var);
        if (end == text.size()) break;
    }
    return vars;
}

std::vector<EnvVar> mergeEnv(const std::vector<EnvVar>& base, const std::vector<EnvVar>& over) {
    std::vector<EnvVar> merged;
    auto put = [&](const EnvVar& var) {
        for (auto& existing : merged)
            if (existing.name == var.name) {
                existing.value = var.value;
                return;
            }
        merged.push_back(var);
    };
    for (const auto& var : base) put(var);
    for (const auto& var : over) put(var);
    return merged;
}

std::chrono::seconds parseLifetime(const std::string& text, const std::string& what) {
    auto duration = parseDuration(text, what);
    if (duration.count() < 1000)
        throw UsageError(fmt::format("{} must be at least 1s, got \"{}\"", what, printable(text)));
    return std::chrono::duration_cast<std::chrono::seconds>(duration);
}

}  // namespace rossoctl::model
