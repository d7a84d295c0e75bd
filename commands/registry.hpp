#pragma once
// Every command group and subcommand main wires into the tree; one file each in commands/.
#include "command.hpp"

namespace rossoctl::commands {

void registerVersion(CLI::App& root, CommandHost& host);
void registerCompletion(CLI::App& root, CommandHost& host);
void registerComplete(CLI::App& root, CommandHost& host);

}  // namespace rossoctl::commands
