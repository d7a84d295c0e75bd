// The command groups of DESIGN.md section 2 and the order their subcommands appear in help.
#include "registry.hpp"

namespace rossoctl::commands {

void registerGroups(CLI::App& root, CommandHost& host) {
    auto* agents = root.add_subcommand("agents", "Deploy and manage agents (any workload type)");
    agents->require_subcommand(1);

    auto* sandbox = root.add_subcommand("sandbox", "Inspect, change, restart, verify and run sandboxes");
    sandbox->require_subcommand(1);
    registerSandboxSetEnv(*sandbox, host);
    registerSandboxRestart(*sandbox, host);
    registerSandboxExec(*sandbox, host);
    registerSandboxVerify(*sandbox, host);
    registerSandboxRun(*sandbox, host);
    registerSandboxPool(*sandbox, host);

    auto* project = root.add_subcommand("project", "Create and delete hardened sandbox projects");
    project->require_subcommand(1);
}

}  // namespace rossoctl::commands
