// Every repeatable flag of every command takes one value per use, as cobra's and docker's do, and
// `--` always ends rossoctl's flags (issue 34 point 1: `sandbox run --file a.py -- python3 a.py
// --verbose` was refused, `project create --allow-cidr C nc-x` took the name for a CIDR). The
// table is the command tree itself, so a flag added later is covered without a new row.
#include <catch2/catch.hpp>

#include "conventions.hpp"
#include "test_host.hpp"

using rossoctl::testing::TestHost;

namespace {

// A flag is repeatable when CLI11 keeps more than one value of it.
bool repeatable(const CLI::Option* option) {
    return !option->get_positional() && option->get_type_size_max() > 0 &&
           option->get_expected_min() > 0 &&
           (option->get_items_expected_max() > 1 ||
            option->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll);
}

bool isList(const CLI::Option* positional) {
    return positional->get_items_expected_max() >= CLI::detail::expected_max_vector_size / 2;
}

struct Row {
    std::vector<std::string> path;  // {"project", "create"}
    std::string flag;               // "--allow-cidr", each spelling of the flag
};

void collect(const CLI::App* app, std::vector<std::string> path, std::vector<Row>& rows) {
    for (const CLI::Option* option : app->get_options()) {
        if (!repeatable(option)) continue;
        for (const auto& name : option->get_lnames()) rows.push_back({path, "--" + name});
        for (const auto& name : option->get_snames()) rows.push_back({path, "-" + name});
    }
    for (const CLI::App* sub : app->get_subcommands({})) {
        auto below = path;
        below.push_back(sub->get_name());
        collect(sub, below, rows);
    }
}

CLI::App* commandAt(CLI::App& root, const std::vector<std::string>& path) {
    CLI::App* command = &root;
    for (const auto& name : path) command = command->get_subcommand(name);
    return command;
}

// The flags a command cannot parse without, with a value each.
std::vector<std::string> requiredFlags(const CLI::App* command, const std::string& skip) {
    std::vector<std::string> words;
    for (const CLI::Option* option : command->get_options())
        if (!option->get_positional() && option->get_required() && !option->check_name(skip)) {
            words.push_back("--" + option->get_lnames().front());
            words.push_back("required-value");
        }
    return words;
}

// Words for the command's arguments: one per single argument, `list` for a list. A command
// that takes none gets `list` too, which it must refuse as an argument (not take as a value).
std::vector<std::string> argumentWords(const CLI::App* command, std::vector<std::string> list) {
    std::vector<std::string> words;
    bool any = false;
    for (const CLI::Option* option : command->get_options()) {
        if (!option->get_positional()) continue;
        any = true;
        if (isList(option)) {
            words.insert(words.end(), list.begin(), list.end());
        } else {
            for (int i = 0; i < std::max(option->get_items_expected_max(), 1); ++i)
                words.push_back("arg-" + std::to_string(words.size() + 1));
        }
    }
    if (!any) return list;
    return words;
}

bool takesArguments(const CLI::App* command) {
    for (const CLI::Option* option : command->get_options())
        if (option->get_positional()) return true;
    return false;
}

std::vector<std::string> argumentsReceived(const CLI::App* command) {
    std::vector<std::string> received;
    for (const CLI::Option* option : command->get_options())
        if (option->get_positional())
            for (const auto& word : option->results()) received.push_back(word);
    return received;
}

struct Parsed {
    int exit = 0;                        // -1: the line parsed
    std::vector<std::string> values;     // what the flag received
    std::vector<std::string> arguments;  // what the command's arguments received
    std::string err;
};

Parsed parse(const Row& row, const std::vector<std::string>& tail) {
    // The command runs too, against an empty fake cluster: its callback owns the options the
    // flags write to. What it does with the odd values is not looked at here (host.err); the
    // parse's own errors go to `err`.
    TestHost host;
    std::vector<std::string> line = row.path;
    const CLI::App* command = commandAt(host.root(), row.path);
    for (const auto& word : requiredFlags(command, row.flag)) line.push_back(word);
    line.push_back(row.flag);
    line.push_back("value-1");
    line.insert(line.end(), tail.begin(), tail.end());
    std::ostringstream out, err;
    Parsed parsed;
    parsed.exit = rossoctl::commands::parseCommandLine(host.root(), line, out, err);
    parsed.values = command->get_option(row.flag)->results();
    parsed.arguments = argumentsReceived(command);
    parsed.err = err.str();
    return parsed;
}

std::string lineOf(const Row& row, const std::vector<std::string>& tail) {
    std::string text = "rossoctl";
    for (const auto& word : row.path) text += " " + word;
    text += " " + row.flag + " value-1";
    for (const auto& word : tail) text += " " + word;
    return text;
}

std::vector<Row> everyRepeatableFlag() {
    TestHost host;
    std::vector<Row> rows;
    collect(&host.root(), {}, rows);
    return rows;
}

}  // namespace

TEST_CASE("the table holds every repeatable flag the issue names", "[command][parse]") {
    std::vector<std::string> found;
    for (const auto& row : everyRepeatableFlag()) {
        std::string name;
        for (const auto& word : row.path) name += word + " ";
        found.push_back(name + row.flag);
    }
    for (const std::string expected :
         {"sandbox run --file", "sandbox run --env", "project create --allow-host",
          "project create --allow-cidr", "agents import from-image --envVar",
          "agents import from-image --env"}) {
        INFO(expected);
        CHECK(std::find(found.begin(), found.end(), expected) != found.end());
    }
}

TEST_CASE("every repeatable flag takes one value, then the command's own argument",
          "[command][parse]") {
    for (const auto& row : everyRepeatableFlag()) {
        TestHost probe;
        const CLI::App* command = commandAt(probe.root(), row.path);
        const auto tail = argumentWords(command, {"cmd"});
        INFO(lineOf(row, tail));
        const Parsed parsed = parse(row, tail);
        INFO(parsed.err);
        CHECK(parsed.values == std::vector<std::string>{"value-1"});
        if (takesArguments(command)) {
            CHECK(parsed.exit == -1);
            CHECK(parsed.arguments == tail);
        } else {
            // A command without arguments refuses the word as an argument.
            CHECK(parsed.exit == rossoctl::commands::usageExitCode(*command));
            CHECK(parsed.err.find("\"cmd\"") != std::string::npos);
        }
    }
}

TEST_CASE("every repeatable flag, used twice, stops at -- and leaves CMD --with-flags alone",
          "[command][parse]") {
    for (const auto& row : everyRepeatableFlag()) {
        TestHost probe;
        const CLI::App* command = commandAt(probe.root(), row.path);
        // The last argument word starts with "--": after `--` it is an argument, not a flag.
        auto words = argumentWords(command, {"cmd", "--with-flags"});
        words.back() = "--with-flags";
        std::vector<std::string> tail = {row.flag, "value-2", "--"};
        tail.insert(tail.end(), words.begin(), words.end());
        INFO(lineOf(row, tail));
        const Parsed parsed = parse(row, tail);
        INFO(parsed.err);
        CHECK(parsed.values == std::vector<std::string>{"value-1", "value-2"});
        CHECK(parsed.err.find("--with-flags") == std::string::npos);
        if (takesArguments(command)) {
            CHECK(parsed.exit == -1);
            CHECK(parsed.arguments == words);
        } else {
            CHECK(parsed.exit == rossoctl::commands::usageExitCode(*command));
            CHECK(parsed.err.find("\"cmd\"") != std::string::npos);
        }
    }
}
