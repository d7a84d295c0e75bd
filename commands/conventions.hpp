#pragma once
// The kubectl conventions every command shares: --dry-run's three modes, TYPE/NAME arguments,
// and usage errors worded as kubectl words them (unknown command/flag, exit 2).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "rossoctl/ui/nearest_word.hpp"
#include "rossoctl/ui/printer.hpp"

namespace rossoctl::commands {

// --- --dry-run=none|client|server --------------------------------------------------------------

enum class DryRun { None, Client, Server };

// Adds --dry-run[=none|client|server] to command; bare --dry-run means client, as in kubectl.
void addDryRunFlag(CLI::App* command, std::string& mode, const std::string& description);

// The mode a --dry-run value names. "true"/"false" are accepted with kubectl's deprecation
// note on warnings; anything else throws UsageError.
DryRun parseDryRun(const std::string& mode, std::ostream& warnings);
// "", "client" or "server": the word messages use.
std::string dryRunText(DryRun mode);

// How --help and the man page spell an option: "--dry-run[=client]" for a flag with a value.
std::string optionDisplayName(const CLI::Option* option);
// Makes app's help (and that of the commands added to it afterwards) spell options that way.
void useKubectlHelp(CLI::App& app);

// -l/--selector on a list, as kubectl spells it.
void addSelectorFlag(CLI::App* command, std::string& selector);

// --- -o jsonpath=... / custom-columns=... / --sort-by -----------------------------------------

struct OutputFlags;

// True for -o jsonpath=TEMPLATE and -o custom-columns=SPEC (checked when printed).
bool isTemplateOutput(const std::string& output);

// Prints objects for a template -o (sorted by --sort-by first); false for any other -o, so the
// command prints them its own way. One object is the document for get NAME, else a List.
// `terminal`: out is one, so jsonpath escapes the server's strings (ui::printJsonPath).
bool printTemplate(std::ostream& out, const OutputFlags& flags, std::vector<nlohmann::json> objects,
                   bool single, bool terminal);

// Reads --sort-by and a template -o without printing: UsageError for one that cannot be read.
void checkTemplateOutput(const OutputFlags& flags);

// A -w stream through a template -o, as kubectl get -w prints each event: jsonpath reads each
// object itself; custom-columns prints rows under the widths its first batch set (headers once),
// so later rows line up and no printed line is re-aligned.
class WatchedTemplate {
  public:
    WatchedTemplate(std::ostream& out, const OutputFlags& flags, bool terminal);
    // False (nothing printed) for any other -o. A batch with no objects prints nothing.
    bool print(const std::vector<nlohmann::json>& objects);

  private:
    std::ostream& out_;
    const OutputFlags& flags_;
    bool terminal_;
    ui::StreamingTable columns_;
};

// --- TYPE/NAME ------------------------------------------------------------------------------

// The type prefixes a name argument may carry, as kubectl accepts them: "sandbox",
// "sandboxes", "sandbox.agents.x-k8s.io", ...
struct ObjectType {
    std::string singular;              // "sandbox"
    std::string plural;                // "sandboxes"
    std::string group;                 // "agents.x-k8s.io"; "" for the core group
    std::vector<std::string> aliases;  // short names: "sts", "deploy", "ns"
};

const ObjectType& sandboxType();
const ObjectType& namespaceType();  // a project is a namespace; "project" is accepted too
// The types an agent's name may carry: its workload's (deployment, statefulset, job, sandbox)
// or its AgentRuntime's, which has the agent's name.
const std::vector<ObjectType>& agentTypes();

// "sandbox.agents.x-k8s.io/orders" -> "orders" when the prefix names one of types; a bare
// name is returned as it is. A prefix of another type throws UsageError naming what is taken.
std::string objectName(const std::string& argument, const std::vector<ObjectType>& types,
                       const std::string& what);

// objectName for each argument, in order, each name once ("restart a a" restarts a once).
std::vector<std::string> objectNames(const std::vector<std::string>& arguments,
                                     const std::vector<ObjectType>& types, const std::string& what);

// --- usage errors ----------------------------------------------------------------------------

// A word as a shell line shows it: quoted when the shell would read it otherwise.
std::string shellWord(const std::string& word);
// "rossoctl" and the words, each as shellWord shows it.
std::string shellLine(std::vector<std::string>::const_iterator begin,
                      std::vector<std::string>::const_iterator end);

// argv as pflag reads it: "--size -1" joined into "--size=-1" (a negative number reaches the
// option's check instead of being read as a flag) and "-o=name" split into "-o" "name".
std::vector<std::string> normalizeArguments(const CLI::App& root, std::vector<std::string> args);

// A command whose own failures, usage errors included, exit with its code instead of 2:
// sandbox run keeps 1 and 2 for the code it runs (125, as docker run does).
class CommandWithFailureCode : public CLI::App {
  public:
    // Set up from parent as CLI::App::add_subcommand sets a command up (help flag, formatter).
    CommandWithFailureCode(std::string description, std::string name, CLI::App* parent,
                           int failureCode)
        : CLI::App(std::move(description), std::move(name), parent), failureCode_(failureCode) {}
    int failureCode() const { return failureCode_; }

  private:
    int failureCode_;
};

// Adds such a command to parent.
CommandWithFailureCode* addCommandWithFailureCode(CLI::App& parent, const std::string& name,
                                                  const std::string& description, int failureCode);

// The exit code of a usage error in command: its own failure code, else 2.
int usageExitCode(const CLI::App& command);

// Parses args (without argv[0]) and on a command-line mistake prints kubectl's wording on err and
// returns usageExitCode of the command; returns -1 when the line parsed. Help requests print help,
// return 0.
int parseCommandLine(CLI::App& root, const std::vector<std::string>& args, std::ostream& out,
                     std::ostream& err);

using ui::nearestWord;

}  // namespace rossoctl::commands
