// rossoctl sandbox exec: run a command in a sandbox's pod, streams and exit code passed through.
#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/exec.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

constexpr int kExitCannotStart = 126;  // the shell's "found but could not be run"
constexpr int kExitKilled = 137;       // 128 + SIGKILL

struct ExecCommandOptions {
    std::string name;
    std::string container;
    bool stdinOpen = false;
    std::vector<std::string> command;
};

int runExec(app::Context& context, ExecCommandOptions& options) {
    // validate
    options.name = objectName(options.name, {sandboxType()}, "sandbox");
    model::validateDnsSubdomain(options.name, "sandbox name");
    if (!options.container.empty()) model::validateDnsLabel(options.container, "--container");
    if (options.command.empty())
        throw UsageError("give the command after --, e.g. rossoctl sandbox exec " + options.name +
                         " -- ls /");

    // complete
    const std::string ns = context.namespaceName();
    const json pod = app::runningSandboxPod(context.client(), context.discovery().sandboxes(),
                                            context.clock().now(), ns, options.name);

    // run
    kube::ExecRequest request;
    request.namespaceName = ns;
    request.pod = pod["metadata"].value("name", "");
    request.container = options.container;
    if (request.container.empty()) {
        const json containers = pod["spec"].value("containers", json::array());
        if (!containers.empty()) request.container = containers.front().value("name", "");
    }
    request.command = options.command;
    kube::ExecIo io;
    // On a terminal the pod's bytes are escaped: its control sequences never drive the terminal.
    ui::UntrustedTextWriter podStdout(context.out(), context.streams().outIsTty);
    ui::UntrustedTextWriter podStderr(context.err(), context.streams().errIsTty);
    io.onStdout = [&](std::string_view bytes) { podStdout.write(bytes); };
    io.onStderr = [&](std::string_view bytes) { podStderr.write(bytes); };
    if (options.stdinOpen) {
        if (context.streams().inDescriptor >= 0) {
            // The real stdin, polled: an interactive line goes at once, and an exited command
            // does not wait for the terminal or pipe to close.
            io.stdinDescriptor = context.streams().inDescriptor;
        } else {
            io.readStdin = [&context](char* buffer, size_t size) -> size_t {
                return static_cast<size_t>(
                    context.in().rdbuf()->sgetn(buffer, static_cast<std::streamsize>(size)));
            };
        }
    }
    const kube::ExecResult result = kube::execInPod(context.client(), request, io);
    podStdout.finish();
    podStderr.finish();
    if (!result.message.empty()) {
        context.err() << "error: " << result.message << '\n';
        return kExitCannotStart;
    }
    if (result.exitCode == kExitKilled) {
        // SIGKILL from outside the command: say who, when the pod's status tells.
        const std::string why =
            app::whyContainerKilled(context.client(), ns, request.pod, request.container);
        if (!why.empty())
            context.err() << "note: the command was killed (exit 137): " << why << '\n';
    }
    return result.exitCode;
}

}  // namespace

void registerSandboxExec(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<ExecCommandOptions>();
    auto* command = sandbox.add_subcommand("exec", "Run a command in a sandbox's pod");
    command->add_option("sandbox", options->name, "Sandbox name")->required();
    command->add_option("-c,--container", options->container,
                        "Container name (default: the pod's first container)");
    command->add_flag("-i,--stdin", options->stdinOpen, "Pass stdin to the command");
    command->add_option("command", options->command, "The command and its arguments, after --");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox exec orders -n team1 -- ls -la /workspace\n"
        "  echo 'print(1 + 1)' | rossoctl sandbox exec orders -i -- python3 -\n"
        "  rossoctl sandbox exec orders -c sidecar -- sh -c 'env | sort'\n\n"
        "Exit codes: the command's own exit status; 1 the sandbox or its Running pod cannot\n"
        "be found or the exec is refused; 2 invalid arguments; 126 the command could not be\n"
        "started.");
    onRun(command, host, options, &runExec);
}

}  // namespace rossoctl::commands
