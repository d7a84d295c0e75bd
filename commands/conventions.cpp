// --dry-run's three modes and TYPE/NAME arguments, the way kubectl takes them.
#include "conventions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "command.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/ui/jsonpath.hpp"

namespace rossoctl::commands {

void addDryRunFlag(CLI::App* command, std::string& mode, const std::string& description) {
    command->add_flag(
        "--dry-run{client}", mode,
        "Must be \"none\", \"client\" or \"server\" (bare --dry-run: client). " + description);
}

DryRun parseDryRun(const std::string& mode, std::ostream& warnings) {
    if (mode.empty() || mode == "none") return DryRun::None;
    if (mode == "client") return DryRun::Client;
    if (mode == "server") return DryRun::Server;
    // kubectl still takes the old boolean spelling, with a note saying what replaces it.
    if (mode == "true" || mode == "false") {
        const char* now = mode == "true" ? "client" : "none";
        warnings << fmt::format(
            "warning: --dry-run={} is deprecated (boolean value) and can be replaced with "
            "--dry-run={}.\n",
            mode, now);
        return mode == "true" ? DryRun::Client : DryRun::None;
    }
    throw UsageError(fmt::format(
        "invalid argument \"{}\" for \"--dry-run\" flag: must be \"none\", \"client\" or "
        "\"server\"",
        mode));
}

std::string dryRunText(DryRun mode) {
    return mode == DryRun::Client ? "client" : mode == DryRun::Server ? "server" : "";
}

std::string optionDisplayName(const CLI::Option* option) {
    std::string name = option->get_name(false, true);
    for (size_t open; (open = name.find('{')) != std::string::npos;) {
        size_t close = name.find('}', open);
        if (close == std::string::npos) break;
        // "--pool{}": a flag with an optional value of no default, named by its type name.
        std::string value = name.substr(open + 1, close - open - 1);
        if (value.empty())
            value = option->get_type_name().empty() ? "VALUE" : option->get_type_name();
        name = name.substr(0, open) + "[=" + value + "]" + name.substr(close + 1);
    }
    return name;
}

namespace {

class KubectlFormatter : public CLI::Formatter {
  public:
    std::string make_option_name(const CLI::Option* option, bool positional) const override {
        return positional ? CLI::Formatter::make_option_name(option, true)
                          : optionDisplayName(option);
    }
};

}  // namespace

void useKubectlHelp(CLI::App& app) {
    app.formatter(std::make_shared<KubectlFormatter>());
}

void addSelectorFlag(CLI::App* command, std::string& selector) {
    command->add_option("-l,--selector", selector,
                        "Label selector to filter on (e.g. -l key1=value1,key2=value2)");
}

bool isTemplateOutput(const std::string& output) {
    return output.rfind("jsonpath=", 0) == 0 || output.rfind("custom-columns=", 0) == 0;
}

bool printTemplate(std::ostream& out, const OutputFlags& flags, std::vector<nlohmann::json> objects,
                   bool single, bool terminal) {
    if (!flags.sortBy.empty()) ui::sortByPath(objects, flags.sortBy);  // reads the path first
    if (!isTemplateOutput(flags.output)) return false;
    const std::string spec = flags.output.substr(flags.output.find('=') + 1);
    if (flags.output.rfind("custom-columns=", 0) == 0) {
        ui::printCustomColumns(out, objects, spec, flags.noHeaders);
    } else {
        const nlohmann::json document =
            single && objects.size() == 1 ? objects.front() : ui::asList(nlohmann::json(objects));
        ui::printJsonPath(out, ui::withoutManagedFields(document), spec, terminal);
    }
    return true;
}

void checkTemplateOutput(const OutputFlags& flags) {
    if (!flags.sortBy.empty()) ui::checkSortField({}, flags.sortBy);  // no items: reads the path
    if (!isTemplateOutput(flags.output)) return;
    const std::string spec = flags.output.substr(flags.output.find('=') + 1);
    if (flags.output.rfind("custom-columns=", 0) == 0)
        ui::customColumnsTable({}, spec);
    else
        ui::checkJsonPathTemplate(spec);
}

WatchedTemplate::WatchedTemplate(std::ostream& out, const OutputFlags& flags, bool terminal)
    : out_(out), flags_(flags), terminal_(terminal), columns_(out, flags.noHeaders, true) {}

bool WatchedTemplate::print(const std::vector<nlohmann::json>& objects) {
    if (!isTemplateOutput(flags_.output)) return false;
    const std::string spec = flags_.output.substr(flags_.output.find('=') + 1);
    if (flags_.output.rfind("custom-columns=", 0) == 0) {
        columns_.print(ui::customColumnsTable(objects, spec));
        return true;
    }
    for (const auto& object : objects)  // each event its own document, as kubectl prints it
        ui::printJsonPath(out_, ui::withoutManagedFields(object), spec, terminal_);
    return true;
}

const ObjectType& sandboxType() {
    static const ObjectType type{"sandbox", "sandboxes", "agents.x-k8s.io", {"sbx"}};
    return type;
}

const ObjectType& namespaceType() {
    static const ObjectType type{"namespace", "namespaces", "", {"ns", "project", "projects"}};
    return type;
}

const std::vector<ObjectType>& agentTypes() {
    static const std::vector<ObjectType> types{
        {"deployment", "deployments", "apps", {"deploy"}},
        {"statefulset", "statefulsets", "apps", {"sts"}},
        {"job", "jobs", "batch", {}},
        sandboxType(),
        // The AgentRuntime agents import makes is named after its agent, so
        // agentruntime.agent.rossoctl.dev/orders (what import -o name prints) is agent orders.
        {"agentruntime", "agentruntimes", "agent.rossoctl.dev", {}},
    };
    return types;
}

namespace {

bool names(const ObjectType& type, const std::string& prefix) {
    std::string kind = prefix;
    std::transform(kind.begin(), kind.end(), kind.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // "sandbox.agents.x-k8s.io" and "sandboxes.v1beta1.agents.x-k8s.io" name the group too.
    const size_t dot = kind.find('.');
    if (dot != std::string::npos) {
        const std::string group = kind.substr(dot + 1);
        if (type.group.empty() || (group != type.group && !group.ends_with("." + type.group)))
            return false;
        kind = kind.substr(0, dot);
    }
    return kind == type.singular || kind == type.plural ||
           std::find(type.aliases.begin(), type.aliases.end(), kind) != type.aliases.end();
}

}  // namespace

std::string objectName(const std::string& argument, const std::vector<ObjectType>& types,
                       const std::string& what) {
    const size_t slash = argument.find('/');
    if (slash == std::string::npos) return argument;
    const std::string prefix = argument.substr(0, slash);
    for (const auto& type : types)
        if (names(type, prefix)) return argument.substr(slash + 1);
    std::string accepted;
    for (const auto& type : types)
        accepted += (accepted.empty() ? "" : ", ") + type.singular + "/NAME";
    const bool vowel =
        !what.empty() && std::string("aeiou").find(what.front()) != std::string::npos;
    throw UsageError(fmt::format("\"{}\" is not {} {}: give NAME or {}", argument,
                                 vowel ? "an" : "a", what, accepted));
}

std::vector<std::string> objectNames(const std::vector<std::string>& arguments,
                                     const std::vector<ObjectType>& types,
                                     const std::string& what) {
    std::vector<std::string> result;
    for (const auto& argument : arguments) {
        std::string name = objectName(argument, types, what);
        if (std::find(result.begin(), result.end(), name) == result.end()) result.push_back(name);
    }
    return result;
}

}  // namespace rossoctl::commands
