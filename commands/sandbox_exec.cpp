// rossoctl sandbox exec: run a command in a sandbox's pod, streams and exit code passed through.
#include <fmt/format.h>
#include <termios.h>

#include <algorithm>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/kube/exec.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "rossoctl/ui/tty_session.hpp"
#include "run_pod_target.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

constexpr int kExitCannotStart = 126;  // the shell's "found but could not be run"
constexpr int kExitKilled = 137;       // 128 + SIGKILL

struct ExecCommandOptions {
    std::string name;
    std::string container;
    bool stdinOpen = false;
    bool tty = false;
    std::vector<std::string> command;
    std::vector<std::string> typed;  // the line as typed ("--" is not kept by the parser)
};

// The local terminal in raw mode while a TTY session runs (keys go to the pod as typed, the
// pod's terminal echoes them), restored however the session ends.
class RawTerminal {
  public:
    RawTerminal(int descriptor, const Clock& clock) : descriptor_(descriptor), clock_(clock) {
        if (descriptor_ < 0 || ::tcgetattr(descriptor_, &saved_) != 0) {
            descriptor_ = -1;
            return;
        }
        termios raw = saved_;
        ::cfmakeraw(&raw);
        if (::tcsetattr(descriptor_, TCSANOW, &raw) != 0) descriptor_ = -1;
    }
    ~RawTerminal() {
        if (descriptor_ < 0) return;
        // The terminal's answers to queries the pod sent last arrive after the session: they
        // are thrown away with the rest of the pending input, never read by the local shell.
        ::tcdrain(descriptor_);
        clock_.sleepFor(std::chrono::milliseconds(50));
        ::tcsetattr(descriptor_, TCSAFLUSH, &saved_);
    }
    RawTerminal(const RawTerminal&) = delete;
    RawTerminal& operator=(const RawTerminal&) = delete;

  private:
    int descriptor_;
    const Clock& clock_;
    termios saved_{};
};

// `sandbox exec -- cat F`: the parser takes the command's first word for the sandbox's name
// (kubectl says a pod name is required). Said before anything is looked up.
void refuseCommandAsName(const ExecCommandOptions& options) {
    const auto& typed = options.typed;
    const auto dash = std::find(typed.begin(), typed.end(), "--");
    if (dash == typed.end() || dash + 1 == typed.end() || *(dash + 1) != options.name ||
        std::find(typed.begin(), dash, options.name) != dash)
        return;
    std::vector<std::string> line(typed.begin(), dash);  // the line as typed, SANDBOX added
    line.push_back("SANDBOX");
    line.insert(line.end(), dash, typed.end());
    throw UsageError(
        fmt::format("name the sandbox before \"--\": {} (\"{}\" after \"--\" is the command's)",
                    shellLine(line.begin(), line.end()), options.name));
}

int runExec(app::Context& context, ExecCommandOptions& options) {
    // validate
    refuseCommandAsName(options);
    const auto target = sandboxOrRunPod(options.name);
    model::validateDnsSubdomain(target.name, target.runPod ? "pod name" : "sandbox name");
    if (!options.container.empty()) model::validateDnsLabel(options.container, "--container");
    if (options.command.empty())
        throw UsageError("give the command after --, e.g. rossoctl sandbox exec " + options.name +
                         " -- ls /");

    // complete
    const std::string ns = context.namespaceName();
    const json pod =
        target.runPod
            ? app::run::reachableRunPod(context.client(), ns, target.name, /*running=*/true, "exec")
            : app::runningSandboxPod(context.client(), context.discovery().sandboxes(),
                                     context.clock().now(), ns, target.name, "run commands in",
                                     /*takesRunPods=*/true);
    // As logs says it: the pod's containers, not the server's refusal of the exec.
    if (const auto missing = app::missingContainer(pod, options.container); !missing.empty())
        throw Error(target.runPod
                        ? fmt::format("pod/{} {}", target.name, missing)
                        : fmt::format("sandbox/{} pod {} {}", target.name,
                                      pod.value("metadata", json::object()).value("name", ""),
                                      missing));

    // run
    kube::ExecRequest request;
    request.namespaceName = ns;
    request.pod = pod.value("metadata", json::object()).value("name", "");
    request.container = options.container;
    if (request.container.empty()) {
        const json containers =
            pod.value("spec", json::object()).value("containers", json::array());
        if (!containers.empty()) request.container = containers.front().value("name", "");
    }
    request.command = options.command;
    // kubectl's rule: a TTY needs -i and a terminal on stdin; -t alone is ignored, and -it
    // with a pipe or file runs without one, saying so.
    if (options.tty && options.stdinOpen) {
        request.tty = context.streams().inIsTty;
        if (!request.tty)
            context.err() << "Unable to use a TTY - input is not a terminal or the right kind of "
                             "file\n";
    }
    kube::ExecIo io;
    // On a terminal the pod's bytes are escaped: its control sequences never drive the terminal.
    // In a TTY session (-it) the pod's terminal is the point (a prompt, line editing, full-screen
    // programs): cursor and colour sequences pass, but nothing that reaches beyond the session
    // (titles, the clipboard, terminal queries), and the modes it left on are reset at the end.
    const bool ttyOnTerminal = request.tty && context.streams().outIsTty;
    const bool utf8 = context.utf8Terminal();
    ui::TtySessionWriter session(context.out(), utf8);
    ui::UntrustedTextWriter podStdout(context.out(), context.streams().outIsTty && !request.tty,
                                      utf8);
    ui::UntrustedTextWriter podStderr(context.err(), context.streams().errIsTty, utf8);
    io.onStdout = [&](std::string_view bytes) {
        ttyOnTerminal ? session.write(bytes) : podStdout.write(bytes);
    };
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
    kube::ExecResult result;
    {
        RawTerminal raw(request.tty ? context.streams().inDescriptor : -1, context.clock());
        try {
            result = kube::execInPod(context.client(), request, io);
        } catch (...) {
            if (ttyOnTerminal) session.finish();  // a cut session leaves no mode on either
            throw;
        }
    }
    ttyOnTerminal ? session.finish() : podStdout.finish();
    podStderr.finish();
    if (!result.message.empty()) {
        context.err() << "error: " << ui::escapeErrorLine(result.message, context.utf8Terminal())
                      << '\n';
        return kExitCannotStart;
    }
    if (result.exitCode == kExitKilled) {
        // SIGKILL from outside the command: say who, when the pod's status tells.
        const std::string why =
            app::whyContainerKilled(context.client(), ns, request.pod, request.container);
        if (!why.empty())
            context.err() << "note: the command was killed (exit 137): "
                          << ui::escapeErrorLine(why, context.utf8Terminal()) << '\n';
    }
    return result.exitCode;
}

}  // namespace

void registerSandboxExec(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<ExecCommandOptions>();
    auto* command = sandbox.add_subcommand("exec", "Run a command in a sandbox's pod");
    command
        ->add_option("sandbox", options->name,
                     "Sandbox name (NAME or sandbox/NAME), or pod/NAME: a pod \"sandbox run "
                     "--keep\" kept")
        ->required();
    command->add_option("-c,--container", options->container,
                        "Container name (default: the pod's first container)");
    command->add_flag("-i,--stdin", options->stdinOpen, "Pass stdin to the command");
    command->add_flag("-t,--tty", options->tty,
                      "With -i on a terminal: give the command a TTY (an interactive shell); its "
                      "cursor and colour codes then reach the terminal, nothing more");
    command->add_option("command", options->command, "The command and its arguments, after --");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox exec orders -n team1 -- ls -la /workspace\n"
        "  echo 'print(1 + 1)' | rossoctl sandbox exec orders -i -- python3 -\n"
        "  rossoctl sandbox exec orders -c sidecar -- sh -c 'env | sort'\n"
        "  rossoctl sandbox exec orders -it -- sh\n"
        "  rossoctl sandbox exec pod/rossoctl-run-d6382408 -n team1 -- ls /workspace/out\n\n"
        "Exit codes: the command's own exit status; 1 the sandbox or its Running pod cannot\n"
        "be found or the exec is refused; 2 invalid arguments; 126 the command could not be\n"
        "started.");
    command->callback([&host, options] {
        options->typed = host.arguments();
        host.setExitCode(app::runCommand(
            host.context(), [&](app::Context& context) { return runExec(context, *options); }));
    });
}

}  // namespace rossoctl::commands
