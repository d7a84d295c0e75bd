#pragma once
// What every subcommand file uses to register itself: its Options live in a shared_ptr the
// callback owns, and run() goes through app::runCommand for errors and exit codes.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "command_host.hpp"
#include "rossoctl/app/context.hpp"
#include "rossoctl/ui/printer.hpp"

namespace rossoctl::commands {

template <class Options>
void onRun(CLI::App* command, CommandHost& host, std::shared_ptr<Options> options,
           int (*run)(app::Context&, Options&)) {
    command->callback([&host, options, run] {
        auto& context = host.context();
        host.setExitCode(
            app::runCommand(context, [&](app::Context& c) { return run(c, *options); }));
    });
}

// Sets `given` when the option is on the command line: a default is not the user's choice.
inline CLI::Option* noteGiven(CLI::Option* option, bool& given) {
    return option->each([&given](const std::string&) { given = true; });
}

struct OutputFlags {
    std::string output;
    bool noHeaders = false;
    bool showManagedFields = false;
    std::string sortBy;  // --sort-by=JSONPATH
};

// -o/--output (allowed, then jsonpath=TEMPLATE|custom-columns=SPEC), --no-headers,
// --show-managed-fields and --sort-by, as kubectl's get and list spell them.
void addOutputFlags(CLI::App* command, OutputFlags& flags, const std::string& allowed);

// The -o of a get or list: Json for a template (printTemplate prints it), else table, wide,
// json, yaml or name; anything else is a UsageError naming every format, the templates too.
ui::OutputFormat listOutputFormat(const OutputFlags& flags);

// --show-managed-fields alone, for a command that prints what it wrote (create, import, set-env).
void addShowManagedFieldsFlag(CLI::App* command, bool& show);

}  // namespace rossoctl::commands
