#include "command.hpp"

namespace rossoctl::commands {

void addOutputFlags(CLI::App* command, OutputFlags& flags, const std::string& allowed) {
    command->add_option("-o,--output", flags.output, "Output format: " + allowed);
    command->add_flag("--no-headers", flags.noHeaders, "Omit table headers");
}

}  // namespace rossoctl::commands
