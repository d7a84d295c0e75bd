#pragma once
// Every command group and subcommand main wires into the tree; one file each in commands/.
#include "command.hpp"

namespace rossoctl::commands {

void registerVersion(CLI::App& root, CommandHost& host);
void registerCompletion(CLI::App& root, CommandHost& host);
void registerComplete(CLI::App& root, CommandHost& host);
void registerManpage(CLI::App& root, CommandHost& host);
void registerHelp(CLI::App& root, CommandHost& host);
// The exit codes any command may end with (DESIGN's list): the root --help's footer and the man
// pages' EXIT STATUS both print this one list.
struct ExitCodeText {
    const char* code;     // "124"
    const char* brief;    // "timed out", as the footer's line says it
    const char* meaning;  // the man page's sentence
    bool runOnly;         // sandbox run's own (else the code's exit status passes through)
};
const std::vector<ExitCodeText>& exitCodes();
// The root command's footer: every exit code, then where to read more. Subcommands added after
// it is set inherit it (CLI11 copies a parent's footer).
std::string rootFooter();
// The groups (agents, sandbox, project) and their subcommands.
void registerGroups(CLI::App& root, CommandHost& host);

// agents
void registerAgentsImport(CLI::App& agents, CommandHost& host);
void registerAgentsList(CLI::App& agents, CommandHost& host);
void registerAgentsGet(CLI::App& agents, CommandHost& host);
void registerAgentsDelete(CLI::App& agents, CommandHost& host);
void registerAgentsWait(CLI::App& agents, CommandHost& host);

// sandbox
void registerSandboxList(CLI::App& sandbox, CommandHost& host);
void registerSandboxGet(CLI::App& sandbox, CommandHost& host);
void registerSandboxSetEnv(CLI::App& sandbox, CommandHost& host);
void registerSandboxRestart(CLI::App& sandbox, CommandHost& host);
void registerSandboxExec(CLI::App& sandbox, CommandHost& host);
void registerSandboxLogs(CLI::App& sandbox, CommandHost& host);
void registerSandboxSuspend(CLI::App& sandbox, CommandHost& host);
void registerSandboxResume(CLI::App& sandbox, CommandHost& host);
void registerSandboxVerify(CLI::App& sandbox, CommandHost& host);
void registerSandboxRun(CLI::App& sandbox, CommandHost& host);
void registerSandboxPool(CLI::App& sandbox, CommandHost& host);
// `sandbox pool list`, under the pool command; returned so that pool's own run skips it.
CLI::App* registerSandboxPoolList(CLI::App& pool, CommandHost& host);
// `sandbox pool delete NAME...`, the same way.
CLI::App* registerSandboxPoolDelete(CLI::App& pool, CommandHost& host);
void registerSandboxCp(CLI::App& sandbox, CommandHost& host);
void registerSandboxDelete(CLI::App& sandbox, CommandHost& host);
void registerSandboxPortForward(CLI::App& sandbox, CommandHost& host);
void registerSandboxTop(CLI::App& sandbox, CommandHost& host);

// project
void registerProjectCreate(CLI::App& project, CommandHost& host);
void registerProjectDelete(CLI::App& project, CommandHost& host);
void registerProjectDescribe(CLI::App& project, CommandHost& host);
void registerProjectList(CLI::App& project, CommandHost& host);

// gc
void registerGc(CLI::App& root, CommandHost& host);

}  // namespace rossoctl::commands
