// Command-line mistakes worded as kubectl words them: unknown command (with the nearest one),
// unknown flag, a flag's bad value; each names the flag or argument as --help shows it, exit 2.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "conventions.hpp"
#include "rossoctl/errors.hpp"

namespace rossoctl::commands {
namespace {

bool isNegativeNumber(const std::string& word) {
    return word.size() > 1 && word[0] == '-' &&
           std::all_of(word.begin() + 1, word.end(),
                       [](unsigned char c) { return std::isdigit(c) || c == '.'; });
}

bool isVisible(const CLI::App* app) {
    return !app->get_name().empty() && app->get_name().rfind("__", 0) != 0;
}

// The option a flag names on app or (global flags fall through) on an ancestor.
const CLI::Option* findFlag(const CLI::App* app, const std::string& flag) {
    for (; app != nullptr; app = app->get_parent())
        for (const CLI::Option* option : app->get_options())
            if (!option->get_positional() && option->check_name(flag)) return option;
    return nullptr;
}

bool optionTakesValue(const CLI::Option* option) {
    return option->get_type_size_max() > 0 && option->get_expected_min() > 0;
}

const CLI::App* findSubcommand(const CLI::App* app, const std::string& word) {
    for (const CLI::App* sub : app->get_subcommands({}))
        if (sub->check_name(word)) return sub;
    return nullptr;
}

bool takesArguments(const CLI::App* app) {
    for (const CLI::Option* option : app->get_options())
        if (option->get_positional()) return true;
    return false;
}

// How many words a command's positional arguments take; a list counts as unlimited.
size_t argumentCapacity(const CLI::App* app) {
    size_t capacity = 0;
    for (const CLI::Option* option : app->get_options()) {
        if (!option->get_positional()) continue;
        const int most = option->get_items_expected_max();
        if (most >= CLI::detail::expected_max_vector_size / 2) return SIZE_MAX;
        capacity += static_cast<size_t>(std::max(most, 1));
    }
    return capacity;
}

// "; did you mean --envVar?" for a long flag of app (or a global one) that the typed one
// nearly spells: the same letters in another case (--envvar), the last word of its name
// (--image for --container-image), or within kubectl's edit distance of two (--namespcae).
std::string nearestFlag(const CLI::App* app, const std::string& typed) {
    auto lower = [](std::string text) {
        std::transform(text.begin(), text.end(), text.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return text;
    };
    const std::string word = lower(typed.substr(2));
    std::vector<std::string> known;
    std::string lastWord;
    for (const CLI::App* at = app; at != nullptr; at = at->get_parent())
        for (const CLI::Option* option : at->get_options())
            for (const auto& name : option->get_lnames()) {
                if (lower(name) == word) return "; did you mean --" + name + "?";
                if (name == "help-all") continue;  // never what a mistyped flag meant (--all)
                known.push_back(name);
                const std::string tail = "-" + word;
                if (lastWord.empty() && name.size() > tail.size() &&
                    lower(name).compare(name.size() - tail.size(), tail.size(), tail) == 0)
                    lastWord = name;
            }
    const std::string nearest = !lastWord.empty() ? lastWord
                                : word.size() > 2 ? nearestWord(word, known)
                                                  : "";
    return nearest.empty() ? "" : "; did you mean --" + nearest + "?";
}

// The positional that takes the command to run after "--" (sandbox run, sandbox exec).
const CLI::Option* commandArgument(const CLI::App* app) {
    for (const CLI::Option* option : app->get_options())
        if (option->get_positional() && option->get_name() == "command") return option;
    return nullptr;
}

// ": --env takes one value, so give each its own (--env B=2)" when `word` came right after a
// value of a repeatable flag (one value per use since takeOneValuePerUse); else "".
std::string oneValuePerUse(const CLI::Option* flag, const std::string& word) {
    if (flag == nullptr || flag->get_lnames().empty() ||
        flag->get_multi_option_policy() != CLI::MultiOptionPolicy::TakeAll)
        return {};
    const std::string name = "--" + flag->get_lnames().front();
    return fmt::format(": {} takes one value, so give each its own ({} {})", name, name, word);
}

// A word on the wrong side of "--", said as such: CLI11 would list the command's first word as
// unexpected too, in reverse order. Before "--" of `run --env A=1 B=2 -- CMD` (one value per
// --env), or after it where the command is given by flags (agents import's --command, --args).
std::optional<std::string> findMisplacedArgument(
    const CLI::App* app, const std::vector<std::string>& arguments, size_t beforeDash,
    const std::vector<const CLI::Option*>& valueFlagBefore, bool dash) {
    if (!dash) return std::nullopt;
    if (const CLI::Option* command = commandArgument(app)) {
        size_t own = 0;  // the words before "--" that are the command's own (sandbox exec's S)
        for (const CLI::Option* option : app->get_options())
            if (option->get_positional() && option != command)
                own += static_cast<size_t>(std::max(option->get_items_expected_max(), 1));
        if (beforeDash <= own) return std::nullopt;
        const std::string& word = arguments[own];
        if (const std::string oneValue = oneValuePerUse(valueFlagBefore[own], word);
            !oneValue.empty())
            return fmt::format("unexpected \"{}\" before \"--\"{}", word, oneValue);
        return fmt::format(
            "unexpected \"{}\" before \"--\": the command and its arguments go after \"--\"", word);
    }
    if (arguments.size() > beforeDash && argumentCapacity(app) == 0 &&
        findFlag(app, "--command") != nullptr)
        return fmt::format(
            "unexpected \"{}\" after \"--\": this command takes none; give the container's "
            "command with --command {} and each argument with --args",
            arguments[beforeDash], arguments[beforeDash]);
    return std::nullopt;
}

// "rossoctl agents import": the command line that reaches app.
std::string commandPath(const CLI::App* app) {
    std::string path = app->get_name();
    for (const CLI::App* at = app->get_parent(); at != nullptr; at = at->get_parent())
        path = at->get_name() + " " + path;
    return path;
}

// Whether the words (after a command reached as app) hold a name: a word that is neither a
// flag nor a flag's value.
bool namesAfter(const CLI::App* app, std::vector<std::string>::const_iterator begin,
                std::vector<std::string>::const_iterator end) {
    for (auto it = begin; it != end; ++it) {
        if (it->size() < 2 || (*it)[0] != '-') return true;
        const CLI::Option* option = findFlag(app, it->substr(0, it->find('=')));
        if (option != nullptr && optionTakesValue(option) && it->find('=') == std::string::npos &&
            (it->rfind("--", 0) == 0 || it->size() == 2) && it + 1 != end)
            ++it;
    }
    return false;
}

// The group a kubectl resource word names ("sandboxes" is sandbox's), or "".
std::string groupOfNoun(const std::string& noun) {
    static const std::vector<std::pair<std::string, std::vector<std::string>>> kNouns = {
        {"sandbox", {"sandbox", "sandboxes", "sb", "sandboxes.agents.x-k8s.io"}},
        {"agents", {"agent", "agents", "agentruntime", "agentruntimes"}},
        {"project", {"project", "projects", "namespace", "namespaces", "ns"}},
    };
    for (const auto& [group, words] : kNouns)
        if (std::find(words.begin(), words.end(), noun) != words.end()) return group;
    return "";
}

// kubectl's verbs come first and the noun after; rossoctl's the other way round. Where a verb
// typed where rossoctl wants a noun (or a noun's verb it lacks) lives instead; "" when nowhere.
std::string verbHint(const CLI::App& root, const std::string& where, const std::string& word,
                     const std::vector<std::string>& after) {
    struct Hint {
        std::string_view where, word, instead;
    };
    static constexpr Hint kHints[] = {
        {"rossoctl", "describe",
         "\"rossoctl sandbox get NAME -o wide\", \"rossoctl agents get NAME -o wide\" or "
         "\"rossoctl project describe NAME\""},
        {"rossoctl", "apply", "\"rossoctl agents import from-image --name NAME ...\""},
        {"rossoctl", "create",
         "\"rossoctl agents import from-image --name NAME ...\" or \"rossoctl project create "
         "NAME\""},
        {"rossoctl", "edit", "\"rossoctl sandbox set-env NAME K=V\""},
        {"rossoctl", "set", "\"rossoctl sandbox set-env NAME K=V\""},
        {"rossoctl", "patch", "\"rossoctl sandbox set-env NAME K=V\""},
        {"rossoctl", "rollout", "\"rossoctl sandbox restart NAME\""},
        {"rossoctl sandbox", "delete",
         "a sandbox is deleted with its agent: \"rossoctl agents delete NAME\""},
        // A hosted sandbox CLI's words (E2B, Daytona): a sandbox, not a project (walk 7 W1).
        {"rossoctl sandbox", "create",
         "\"rossoctl agents import --deployment-type sandbox from-image --name NAME "
         "--containerImage IMAGE\" (to run one command in a new pod: \"rossoctl sandbox run -- "
         "CMD\")"},
        {"rossoctl sandbox", "rm",
         "a sandbox is deleted with its agent: \"rossoctl agents delete NAME\""},
        {"rossoctl sandbox", "ssh", "\"rossoctl sandbox exec NAME -it -- sh\""},
        {"rossoctl sandbox", "shell", "\"rossoctl sandbox exec NAME -it -- sh\""},
        {"rossoctl sandbox", "describe",
         "\"rossoctl sandbox get NAME -o wide\" or \"rossoctl project describe PROJECT\""},
        {"rossoctl agents", "describe", "\"rossoctl agents get NAME -o wide\""},
    };
    const std::string noun = after.empty() ? "" : groupOfNoun(after.front());
    const std::string nounWhere = noun.empty() ? where : "rossoctl " + noun;  // `delete sandbox x`
    for (const auto& hint : kHints)
        if ((hint.where == where || hint.where == nounWhere) && hint.word == word) {
            const std::string instead(hint.instead);
            return instead.front() == '"' ? "; use " + instead : "; " + instead;
        }
    // A verb one of the groups has: `rossoctl get` is `rossoctl sandbox get` or `agents get`;
    // `get sandboxes` is `sandbox list`, `get sandbox orders` is `sandbox get orders`.
    std::vector<std::string> found;
    for (const CLI::App* group : root.get_subcommands(isVisible)) {
        if (findSubcommand(group, word) == nullptr || "rossoctl " + group->get_name() == where ||
            (!noun.empty() && noun != group->get_name()))
            continue;
        std::vector<std::string> line{group->get_name(), word};
        line.insert(line.end(), after.begin() + (noun.empty() ? 0 : 1), after.end());
        if (word == "get" && !noun.empty() && findSubcommand(group, "list") != nullptr &&
            !namesAfter(findSubcommand(group, word), after.begin() + 1, after.end()))
            line[1] = "list";
        found.push_back("\"" + shellLine(line.begin(), line.end()) + "\"");
    }
    if (found.empty()) return "";
    std::string list = found.front();
    for (size_t i = 1; i < found.size(); ++i)
        list += (i + 1 == found.size() ? " or " : ", ") + found[i];
    return "; use " + list;
}

// The command named by `where` ("rossoctl sandbox list") when it has a sibling that shows one
// object: "; to show one, \"rossoctl sandbox get orders\"".
std::string showOneHint(const CLI::App* app, const std::string& word) {
    const CLI::App* parent = app->get_parent();
    if (parent == nullptr || app->get_name() != "list") return "";
    for (const char* verb : {"get", "describe"})
        if (findSubcommand(parent, verb) != nullptr)
            return fmt::format("; to show one, \"rossoctl {} {} {}\"", parent->get_name(), verb,
                               shellWord(word));
    return "";
}

// kubectl's "unknown flag: --x" (or "unknown shorthand flag: 'x' in -xy") for args[at], with
// what the user most likely meant: a command's own flag before "--", a flag of a subcommand
// left out, kubectl's --all, set-env's variables given as --env, or the flag nearly spelt.
std::string unknownFlag(const CLI::App* app, const std::vector<std::string>& args, size_t at,
                        const std::string& flag, const CLI::Option* valueOf,
                        const std::vector<size_t>& argumentAt) {
    const std::string& word = args[at];
    const bool longFlag = flag.rfind("--", 0) == 0;
    const std::string message =
        longFlag ? "unknown flag: " + flag
                 : fmt::format("unknown shorthand flag: '{}' in {}", flag.substr(1), word);
    // `agents import --command sh -c '...'`: the container command's flag
    if (valueOf != nullptr && (valueOf->check_lname("command") || valueOf->check_lname("args")))
        return message + fmt::format(
                             "; give each of the command's arguments with --args "
                             "(--args={})",
                             shellWord(word));
    // `sandbox exec orders ls -la`, `sandbox run python3 -c ...`: the command's own flag
    if (const CLI::Option* command = commandArgument(app); command != nullptr) {
        size_t own = 0;  // the words that are the command's own (sandbox exec's S)
        for (const CLI::Option* option : app->get_options())
            if (option->get_positional() && option != command)
                own += static_cast<size_t>(std::max(option->get_items_expected_max(), 1));
        if (argumentAt.size() > own) {
            const auto start = args.begin() + static_cast<long>(argumentAt[own]);
            std::vector<std::string> line(args.begin(), start);
            line.push_back("--");
            line.insert(line.end(), start, args.end());
            std::string hint = message +
                               "; put the command after \"--\" so that its flags are its own: " +
                               shellLine(line.begin(), line.end());
            // `run --pool py python3 -c ...`: the word after a bare --pool may be a pool's name
            // (walk 7 W2: the line above would run "py"); which one takes a GET, not made here.
            if (start != args.begin() && *(start - 1) == "--pool" && start + 1 != args.end()) {
                std::vector<std::string> named(args.begin(), start - 1);
                named.push_back("--pool=" + *start);
                named.push_back("--");
                named.insert(named.end(), start + 1, args.end());
                hint += fmt::format(", or, when {} names a warm pool: {}", shellWord(*start),
                                    shellLine(named.begin(), named.end()));
            }
            return hint;
        }
    }
    // `agents import --name x` with from-image left out
    for (const CLI::App* sub : app->get_subcommands(isVisible))
        for (const CLI::Option* option : sub->get_options())
            if (!option->get_positional() && option->check_name(flag) &&
                findFlag(app, flag) == nullptr)
                return message + fmt::format(
                                     "; it is a flag of \"{} {}\": did you leave out "
                                     "\"{}\"?",
                                     commandPath(app), sub->get_name(), sub->get_name());
    if (flag == "--all" && findFlag(app, "--all-namespaces") != nullptr)
        return message + "; for every namespace use -A/--all-namespaces";
    // docker's and kubectl's -i where this command names it --stdin only
    if (flag == "-i" && findFlag(app, "--stdin") != nullptr)
        return message + "; to pass stdin to the command use --stdin";
    // `sandbox set-env orders --env A=1`: the variables are arguments
    static const std::vector<std::string> envFlags{"--env", "--envVar", "--env-var", "-e"};
    if (app->get_name() == "set-env" &&
        std::find(envFlags.begin(), envFlags.end(), flag) != envFlags.end()) {
        std::vector<std::string> line(args.begin(), args.begin() + static_cast<long>(at));
        const size_t equals = word.find('=');
        if (longFlag && equals != std::string::npos)
            line.push_back(word.substr(equals + 1));
        else if (!longFlag && word.size() > 2)
            line.push_back(word.substr(2));
        line.insert(line.end(), args.begin() + static_cast<long>(at) + 1, args.end());
        return message + "; give NAME=VALUE as arguments: " + shellLine(line.begin(), line.end());
    }
    return longFlag ? message + nearestFlag(app, flag) : message;
}

struct Mistake {
    std::string message;
    std::string where;  // "rossoctl sandbox"
};

// Walks the line the way the parser does and names the first word that cannot be right;
// `where` and `app` are set to the command the line reached.
std::optional<Mistake> findMistake(const CLI::App& root, const std::vector<std::string>& args,
                                   std::string& where, const CLI::App*& app) {
    app = &root;
    where = "rossoctl";
    std::vector<std::string> arguments;               // the positional words of the command reached
    bool rest = false;                                // after "--" every word is an argument
    size_t beforeDash = 0;                            // how many of them came before "--"
    std::vector<const CLI::Option*> valueFlagBefore;  // per word before "--": the flag just before
    const CLI::Option* lastValueFlag = nullptr;       // the flag the previous word was a value of
    std::vector<size_t> argumentAt;                   // where in args each positional word is
    auto takeArgument = [&](size_t at) {
        const std::string& word = args[at];
        argumentAt.push_back(at);
        arguments.push_back(word);
        if (rest) return;
        ++beforeDash;
        valueFlagBefore.push_back(std::exchange(lastValueFlag, nullptr));
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& word = args[i];
        if (rest) {
            takeArgument(i);
            continue;
        }
        if (word == "--") {
            rest = true;
            continue;
        }
        if (word.size() > 1 && word[0] == '-' && !isNegativeNumber(word)) {
            const bool longFlag = word.rfind("--", 0) == 0;
            const std::string flag = word.substr(0, longFlag ? word.find('=') : 2);
            const CLI::Option* option = findFlag(app, flag);
            if (option == nullptr)
                return Mistake{unknownFlag(app, args, i, flag, lastValueFlag, argumentAt), where};
            const bool joined = longFlag ? word.find('=') != std::string::npos : word.size() > 2;
            lastValueFlag = optionTakesValue(option) ? option : nullptr;
            if (optionTakesValue(option) && !joined) {
                if (i + 1 >= args.size()) return Mistake{"flag needs an argument: " + word, where};
                ++i;
            }
            continue;
        }
        if (!arguments.empty()) {
            takeArgument(i);
            continue;
        }
        if (const CLI::App* sub = findSubcommand(app, word)) {
            app = sub;
            where += " " + sub->get_name();
            continue;
        }
        if (!app->get_subcommands(isVisible).empty() && !takesArguments(app)) {
            std::vector<std::string> known;
            for (const CLI::App* sub : app->get_subcommands(isVisible)) {
                known.push_back(sub->get_name());
                for (const auto& alias : sub->get_aliases()) known.push_back(alias);
            }
            std::string message = fmt::format("unknown command \"{}\" for \"{}\"", word, where);
            const std::string nearest = nearestWord(word, known);
            const std::vector<std::string> after(args.begin() + static_cast<long>(i) + 1,
                                                 args.end());
            if (const std::string hint = verbHint(root, where, word, after); !hint.empty())
                message += hint;
            else if (!nearest.empty())
                message += fmt::format("; did you mean \"{}\"?", nearest);
            return Mistake{message, where};
        }
        takeArgument(i);
    }
    if (auto misplaced = findMisplacedArgument(app, arguments, beforeDash, valueFlagBefore, rest))
        return Mistake{*misplaced, where};
    // kubectl's words for extra arguments: cobra's NoArgs and MaximumNArgs, in the user's order
    // (CLI11 lists them reversed).
    // A command with subcommands that also runs on its own words (sandbox pool [NAME] beside
    // sandbox pool list) is held to its own arguments, not asked for a subcommand.
    const bool runsAlone = app->get_subcommands(isVisible).empty() || takesArguments(app);
    const size_t capacity = argumentCapacity(app);
    if (arguments.size() > capacity && runsAlone) {
        // `--allow-host a b`: the extra word is a second value of a flag that takes one
        const std::string oneValue =
            capacity < beforeDash ? oneValuePerUse(valueFlagBefore[capacity], arguments[capacity])
                                  : "";
        if (capacity == 0) {
            // `from-image x`: the name is a flag's value here
            std::string hint = oneValue.empty() ? showOneHint(app, arguments[0]) : oneValue;
            if (hint.empty() && findFlag(app, "--name") != nullptr)
                hint = fmt::format("; give the name with --name {}", shellWord(arguments[0]));
            return Mistake{
                fmt::format("unknown command \"{}\" for \"{}\"{}", arguments[0], where, hint),
                where};
        }
        return Mistake{fmt::format("accepts at most {} arg(s), received {}: unexpected \"{}\"{}",
                                   capacity, arguments.size(), arguments[capacity], oneValue),
                       where};
    }
    // `sandbox get -n P`: kubectl's get lists when given no name; rossoctl's list does
    if (arguments.empty() && app->get_name() == "get" && app->get_parent() != nullptr &&
        findSubcommand(app->get_parent(), "list") != nullptr) {
        std::vector<std::string> line = args;
        std::replace(line.begin(), line.end(), std::string("get"), std::string("list"));
        return Mistake{fmt::format("name is required; to list them all, \"{}\"",
                                   shellLine(line.begin(), line.end())),
                       where};
    }
    if (!runsAlone && app != &root) {
        std::string commands;
        for (const CLI::App* sub : app->get_subcommands(isVisible))
            commands += (commands.empty() ? "" : ", ") + sub->get_name();
        return Mistake{fmt::format("\"{}\" needs a command: {}", where, commands), where};
    }
    return std::nullopt;
}

// A flag that is true or false (--wait, -w): a flag without a value of its own, unlike
// --dry-run[=client].
// A flag whose value may be left out and has no default (--pool[=NAME], CLI11 "--pool{}").
bool takesOptionalName(const CLI::Option* option) {
    return !optionTakesValue(option) &&
           option->get_name(false, true).find("{}") != std::string::npos;
}

bool isBooleanFlag(const CLI::Option* option) {
    return !optionTakesValue(option) &&
           option->get_name(false, true).find('{') == std::string::npos;
}

// The words strconv.ParseBool takes, which is what pflag accepts after --flag= (CLI11 would
// take yes, on, 2 and more).
bool isPflagBoolean(const std::string& value) {
    static const std::vector<std::string> words{"1",    "0",     "t",    "f",     "T",    "F",
                                                "true", "false", "TRUE", "FALSE", "True", "False"};
    return std::find(words.begin(), words.end(), value) != words.end();
}

// pflag names a flag with its shorthand when it has one: "-w, --watch", else "--wait".
std::string pflagName(const CLI::Option* option) {
    const auto& shorts = option->get_snames();
    const auto& longs = option->get_lnames();
    const std::string name = longs.empty() ? "-" + shorts.front() : "--" + longs.front();
    return shorts.empty() || longs.empty() ? name : "-" + shorts.front() + ", " + name;
}

// The first --flag=VALUE of a boolean flag whose VALUE pflag would refuse, in pflag's words.
std::optional<Mistake> findBadBoolean(const CLI::App& root, const std::vector<std::string>& args,
                                      const CLI::App*& app) {
    app = &root;
    std::string where = "rossoctl";
    for (const auto& word : args) {
        if (word == "--") break;
        if (const CLI::App* sub = findSubcommand(app, word)) {
            app = sub;
            where += " " + sub->get_name();
            continue;
        }
        const size_t equals = word.find('=');
        if (word.rfind("--", 0) != 0 || equals == std::string::npos) continue;
        const CLI::Option* option = findFlag(app, word.substr(0, equals));
        const std::string value = word.substr(equals + 1);
        if (option == nullptr || !isBooleanFlag(option) || isPflagBoolean(value)) continue;
        return Mistake{fmt::format("invalid argument \"{}\" for \"{}\" flag: strconv.ParseBool: "
                                   "parsing \"{}\": invalid syntax",
                                   value, pflagName(option), value),
                       where};
    }
    return std::nullopt;
}

// A repeatable flag (--allow-host, --env, --file) takes one value per use, as pflag's
// StringArray and docker's list flags do. CLI11 would go on taking the words after it (a name,
// the command) and eat the "--" that ends rossoctl's flags, so the command's own flags were ours.
void takeOneValuePerUse(CLI::App& app) {
    for (CLI::Option* option : app.get_options())
        if (!option->get_positional() && optionTakesValue(option) &&
            (option->get_items_expected_max() > 1 ||
             option->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll))
            option->expected(1)->allow_extra_args(false)->multi_option_policy(
                CLI::MultiOptionPolicy::TakeAll);
    for (CLI::App* sub : app.get_subcommands({})) takeOneValuePerUse(*sub);
}

// pflag keeps the last value of a flag given twice ("-o yaml -o json" prints json); CLI11 would
// refuse the second. Lists (--allow-host, --env) keep every value.
void takeLastValues(CLI::App& app) {
    for (CLI::Option* option : app.get_options())
        if (!option->get_positional() && option->get_items_expected_max() == 1 &&
            option->get_multi_option_policy() == CLI::MultiOptionPolicy::Throw)
            option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    for (CLI::App* sub : app.get_subcommands({})) takeLastValues(*sub);
}

// CLI11's own wording for what findMistake does not catch, in kubectl's terms.
std::string rewordParseError(const CLI::ParseError& error) {
    std::string message = error.what();
    while (!message.empty() && message.back() == '\n') message.pop_back();
    std::replace(message.begin(), message.end(), '\n', ' ');
    // "Could not convert: --size = abc"
    const std::string convert = "Could not convert: ";
    if (message.rfind(convert, 0) == 0) {
        const std::string rest = message.substr(convert.size());
        const size_t equals = rest.find(" = ");
        if (equals != std::string::npos)
            return fmt::format("invalid argument \"{}\" for \"{}\" flag: not a number",
                               rest.substr(equals + 3), rest.substr(0, equals));
    }
    return message;
}

}  // namespace

std::string shellWord(const std::string& word) {
    const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
        return std::isalnum(c) ||
               std::string_view("_-./=:,@%+").find(static_cast<char>(c)) != std::string_view::npos;
    });
    if (plain) return word;
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

std::string shellLine(std::vector<std::string>::const_iterator begin,
                      std::vector<std::string>::const_iterator end) {
    std::string line = "rossoctl";
    for (auto it = begin; it != end; ++it) line += " " + shellWord(*it);
    return line;
}

CommandWithFailureCode* addCommandWithFailureCode(CLI::App& parent, const std::string& name,
                                                  const std::string& description, int failureCode) {
    auto command =
        std::make_shared<CommandWithFailureCode>(description, name, &parent, failureCode);
    CommandWithFailureCode* added = command.get();
    parent.add_subcommand(std::move(command));
    return added;
}

int usageExitCode(const CLI::App& command) {
    const auto* own = dynamic_cast<const CommandWithFailureCode*>(&command);
    return own != nullptr ? own->failureCode() : kExitUsage;
}

std::vector<std::string> normalizeArguments(const CLI::App& root, std::vector<std::string> args) {
    const CLI::App* app = &root;
    std::vector<std::string> joined;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& word = args[i];
        if (word == "--") {
            joined.insert(joined.end(), args.begin() + static_cast<long>(i), args.end());
            break;
        }
        if (const CLI::App* sub = findSubcommand(app, word)) app = sub;
        if (word.size() > 2 && word[0] == '-' && word[1] != '-' && word[2] == '=') {
            const CLI::Option* shortFlag = findFlag(app, word.substr(0, 2));
            if (shortFlag && optionTakesValue(shortFlag)) {
                joined.push_back(word.substr(0, 2));
                joined.push_back(word.substr(3));
                continue;
            }
            // "-w=false": pflag's value of a boolean shorthand, which CLI11 takes only as
            // "--watch=false".
            if (shortFlag && isBooleanFlag(shortFlag) && !shortFlag->get_lnames().empty()) {
                joined.push_back("--" + shortFlag->get_lnames().front() + word.substr(2));
                continue;
            }
        }
        const CLI::Option* option = word.rfind("--", 0) == 0 && word.find('=') == std::string::npos
                                        ? findFlag(app, word)
                                        : nullptr;
        if (option && optionTakesValue(option) && i + 1 < args.size() &&
            isNegativeNumber(args[i + 1])) {
            joined.push_back(word + "=" + args[i + 1]);
            ++i;
            continue;
        }
        // `--pool NAME -- CMD`: a flag with an optional value and no default ("--pool{}") takes
        // a bare word as its value only when `--` follows, since the command then comes after
        // it; without `--` the word stays the command's (pflag's reading of `--pool CMD`).
        if (option && takesOptionalName(option) && i + 1 < args.size() && !args[i + 1].empty() &&
            args[i + 1][0] != '-' &&
            std::find(args.begin() + static_cast<long>(i) + 2, args.end(), "--") != args.end()) {
            joined.push_back(word + "=" + args[i + 1]);
            ++i;
            continue;
        }
        joined.push_back(word);
    }
    return joined;
}

int parseCommandLine(CLI::App& root, const std::vector<std::string>& args, std::ostream& out,
                     std::ostream& err) {
    takeOneValuePerUse(root);
    takeLastValues(root);
    // `rossoctl help sandbox run` is `rossoctl sandbox run --help`, as kubectl and gh read it; an
    // unknown word then gets the usual "unknown command" with its nearest name.
    std::vector<std::string> words = args;
    if (!words.empty() && words.front() == "help") {
        words.erase(words.begin());
        words.push_back("--help");
    }
    std::vector<std::string> reversed = normalizeArguments(root, words);
    const CLI::App* reached = &root;
    if (auto mistake = findBadBoolean(root, reversed, reached)) {
        err << "error: " << mistake->message << " (see '" << mistake->where << " --help')\n";
        return usageExitCode(*reached);
    }
    std::reverse(reversed.begin(), reversed.end());
    try {
        root.parse(reversed);
        return -1;
    } catch (const CLI::ParseError& error) {
        if (error.get_exit_code() == 0) return root.exit(error, out, err);
        std::string where;
        const CLI::App* command = &root;
        auto mistake = findMistake(root, args, where, command);
        const std::string message = mistake ? mistake->message : rewordParseError(error);
        err << "error: " << message << " (see '" << where << " --help')\n";
        return usageExitCode(*command);
    }
}

}  // namespace rossoctl::commands
