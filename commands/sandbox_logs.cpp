// rossoctl sandbox logs: the sandbox's pod logs, streamed; -f follows across pod restarts.
#include "rossoctl/app/sandbox_logs.hpp"

#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "run_pod_target.hpp"

namespace rossoctl::commands {
namespace {

struct LogsOptions {
    std::string name;
    std::string container;
    bool follow = false;
    std::string since;
    int64_t tail = -1;
    bool previous = false;
    bool timestamps = false;
    int64_t limitBytes = -1;  // -1: the default (kDefaultLogLimitBytes without -f, none with it)
};

int runLogs(app::Context& context, LogsOptions& options) {
    // validate
    const auto target = sandboxOrRunPod(options.name);
    options.name = target.name;
    model::validateDnsSubdomain(options.name, target.runPod ? "pod name" : "sandbox name");
    app::SandboxLogOptions logs;
    if (!options.container.empty()) model::validateDnsLabel(options.container, "-c/--container");
    logs.container = options.container;
    if (options.follow && options.previous)
        throw UsageError("--previous shows a container that has ended; it cannot be followed (-f)");
    if (!options.since.empty()) {
        const auto since = app::parseDuration(options.since, "--since");
        if (since.count() <= 0) throw UsageError("--since must be more than 0, e.g. 10m");
        logs.sinceSeconds = (since.count() + 999) / 1000;  // whole seconds, rounded up
    }
    if (options.tail < -1) throw UsageError("--tail must be a number of lines, or -1 for all");
    if (options.tail >= 0) logs.tailLines = options.tail;
    if (options.limitBytes == 0 || options.limitBytes < -1)
        throw UsageError("--limit-bytes must be a number of bytes more than 0");
    // A one-shot read is always capped; a follow runs on until told, so only when asked.
    logs.limitBytes = options.limitBytes > 0 ? options.limitBytes
                      : options.follow       ? 0
                                             : app::kDefaultLogLimitBytes;
    logs.follow = options.follow;
    logs.previous = options.previous;
    logs.timestamps = options.timestamps;

    // complete
    const std::string ns = context.namespaceName();

    // run: bytes go out as they come; on a terminal through the escaper (the pod is untrusted).
    ui::UntrustedTextWriter output(context.out(), context.streams().outIsTty,
                                   context.utf8Terminal());
    logs.cancel = context.cancelFlag();
    logs.onLog = [&](std::string_view bytes) { output.write(bytes); };
    logs.onNote = [&](const std::string& note) {
        output.finish();
        context.err() << "note: " << ui::escapeErrorLine(note, context.utf8Terminal()) << '\n'
                      << std::flush;
    };
    bool finished = false;
    if (target.runPod) {
        const auto pod = app::run::reachableRunPod(context.client(), ns, options.name,
                                                   /*running=*/false, "logs");
        // Said first, so an empty log (or a -f that waits) is never taken for the run's output.
        logs.onNote(app::run::runOutputNotInLog(ns, options.name));
        finished = app::streamPodLogs(context.client(), context.clock(), ns, pod, logs);
    } else {
        finished = app::streamSandboxLogs(context.client(), context.clock(),
                                          context.discovery().sandboxes(), ns, options.name, logs);
    }
    output.finish();
    return finished ? kExitOk : kExitCancelled;
}

}  // namespace

void registerSandboxLogs(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<LogsOptions>();
    auto* command = sandbox.add_subcommand("logs", "Print or follow the logs of a sandbox's pod");
    command
        ->add_option("sandbox", options->name,
                     "Sandbox name (NAME or sandbox/NAME), or pod/NAME: a pod \"sandbox run "
                     "--keep\" kept")
        ->required();
    command->add_option("-c,--container", options->container,
                        "Container name (default: the pod's first container)");
    command->add_flag("-f,--follow", options->follow,
                      "Keep streaming new lines, across the pod being replaced");
    command->add_option("--since", options->since,
                        "Only lines newer than this, e.g. 10m or 1h (the first pod only)");
    command
        ->add_option("--tail", options->tail,
                     "Only the last N lines (the first pod only); -1 shows all")
        ->capture_default_str();
    command->add_flag("-p,--previous", options->previous,
                      "The previous instance of the container (after a crash)");
    command->add_flag("--timestamps", options->timestamps,
                      "Start each line with the time it was written (RFC 3339)");
    command->add_option("--limit-bytes", options->limitBytes,
                        "Show at most this many bytes (asked of the server, and held here "
                        "whatever it sends); default 64 MiB without -f, no limit with -f");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox logs orders -n team1\n"
        "  rossoctl sandbox logs orders -f --since 10m\n"
        "  rossoctl sandbox logs orders -c agent --tail 100 --timestamps\n"
        "  rossoctl sandbox logs orders --previous\n\n"
        "With -f, a restart of the sandbox is followed: a note on stderr names the new pod and\n"
        "its lines follow; it ends when the sandbox is deleted or suspended, or its pod ends.\n"
        "On a terminal the pod's control characters are shown as escapes (\\x1b); piped or\n"
        "redirected, its bytes pass unchanged.\n"
        "Without -f at most 64 MiB are shown (more than the kubelet keeps of a container's\n"
        "log), so a server that never stops sending cannot fill a disk; a note on stderr says\n"
        "when the output was cut. Raise it with --limit-bytes; with -f there is no limit\n"
        "unless --limit-bytes sets one.\n"
        "A pod \"sandbox run --keep\" kept (pod/NAME) only sleeps: its run's output went through\n"
        "exec and is not in its log (a note says so).\n"
        "Exit codes: 0 done, 1 the sandbox, its pod or its logs cannot be read, 2 invalid\n"
        "arguments, 130 interrupted.");
    onRun(command, host, options, &runLogs);
}

}  // namespace rossoctl::commands
