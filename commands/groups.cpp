// The command groups of DESIGN.md section 2 and the order their subcommands appear in help.
#include "conventions.hpp"
#include "registry.hpp"

namespace rossoctl::commands {

const std::vector<ExitCodeText>& exitCodes() {
    static const std::vector<ExitCodeText> codes = {
        {"0", "success", "success", false},
        {"1", "error", "an error: API, network, not found, forbidden", false},
        {"2", "usage error", "a usage error, found before any request was sent", false},
        {"3", "a sandbox boundary does not hold or is not proven",
         "sandbox verify found a boundary that does not hold or is not proven", false},
        {"130", "interrupted (Ctrl-C)", "interrupted (Ctrl-C), a list -w ended by it included",
         false},
        {"124", "timed out", "sandbox run: the code ran longer than --timeout", true},
        {"125", "its own failure",
         "sandbox run: rossoctl itself failed (bad flags and an -o json output cap reached "
         "included)",
         true},
        {"137", "killed",
         "sandbox run: the code was killed (out of memory, a deadline, an eviction); otherwise "
         "sandbox run exits with the code's own status",
         true},
    };
    return codes;
}

std::string rootFooter() {
    std::string general, run;
    for (const auto& exit : exitCodes()) {
        std::string& line = exit.runOnly ? run : general;
        line += std::string(line.empty() ? "" : ", ") + exit.code + " " + exit.brief;
    }
    const std::string text = "Exit codes: " + general +
                             "; sandbox run passes on the code's own status, else " + run + ".";
    // Wrapped at 92 columns, as the rest of the help is.
    std::string wrapped, line;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find(' ', start);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(start, end - start);
        if (!line.empty() && line.size() + 1 + word.size() > 92) {
            wrapped += line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
        start = end + 1;
    }
    return wrapped + line + "\nRun 'rossoctl COMMAND --help' for more about a command.";
}

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
