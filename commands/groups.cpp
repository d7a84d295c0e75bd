// The command groups of DESIGN.md section 2 and the order their subcommands appear in help.
#include "conventions.hpp"
#include "registry.hpp"

namespace rossoctl::commands {

void registerGroups(CLI::App& root, CommandHost& host) {
    useKubectlHelp(root);
    auto* agents = root.add_subcommand("agents", "Deploy and manage agents (any workload type)");
    agents->require_subcommand(1);
    registerAgentsImport(*agents, host);
    registerAgentsList(*agents, host);
    registerAgentsGet(*agents, host);
    registerAgentsDelete(*agents, host);
    registerAgentsWait(*agents, host);

    auto* sandbox = root.add_subcommand(
        "sandbox", "Inspect, change, restart, suspend, verify and run sandboxes");
    sandbox->require_subcommand(1);
    registerSandboxList(*sandbox, host);
    registerSandboxGet(*sandbox, host);
    registerSandboxSetEnv(*sandbox, host);
    registerSandboxRestart(*sandbox, host);
    registerSandboxExec(*sandbox, host);
    registerSandboxLogs(*sandbox, host);
    registerSandboxSuspend(*sandbox, host);
    registerSandboxResume(*sandbox, host);
    registerSandboxVerify(*sandbox, host);
    registerSandboxRun(*sandbox, host);
    registerSandboxPool(*sandbox, host);
    registerSandboxCp(*sandbox, host);
    registerSandboxDelete(*sandbox, host);
    registerSandboxPortForward(*sandbox, host);
    registerSandboxTop(*sandbox, host);

    auto* project = root.add_subcommand("project", "Create and delete hardened sandbox projects");
    project->require_subcommand(1);
    registerProjectCreate(*project, host);
    registerProjectDelete(*project, host);
    registerProjectDescribe(*project, host);
    registerProjectList(*project, host);

    registerGc(root, host);
}

}  // namespace rossoctl::commands
