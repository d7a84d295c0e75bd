// rossoctl help [COMMAND...]: listed among the commands; parseCommandLine reads
// `help sandbox run` as `sandbox run --help` (a newcomer's habit from kubectl help and gh help).
#include "registry.hpp"

namespace rossoctl::commands {

void registerHelp(CLI::App& root, CommandHost& host) {
    auto* command = root.add_subcommand("help", "Help about any command");
    command->footer(
        "Usage: rossoctl help [COMMAND...]\n\n"
        "Examples:\n"
        "  rossoctl help\n"
        "  rossoctl help sandbox run");
    // Reached only when words came before "help" (rossoctl -n x help): the root's help.
    command->callback([&host] {
        CLI::App& root = host.root();
        host.context().out() << root.get_formatter()->make_help(&root, root.get_name(),
                                                                CLI::AppFormatMode::Normal);
    });
}

}  // namespace rossoctl::commands
