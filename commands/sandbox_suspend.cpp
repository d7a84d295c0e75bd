// rossoctl sandbox suspend / resume: the two directions of one change (spec.operatingMode,
// or replicas on v1alpha1), so they share this file.
#include "rossoctl/app/sandbox_suspend.hpp"

#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

struct SuspendCommandOptions {
    bool suspend = true;
    std::vector<std::string> names;
    bool wait = true;
    std::string timeout = "2m";
};

int runSuspend(app::Context& context, SuspendCommandOptions& options) {
    // validate
    const char* verb = options.suspend ? "suspend" : "resume";
    if (options.names.empty()) throw UsageError(fmt::format("name the sandboxes to {}", verb));
    const auto names = objectNames(options.names, {sandboxType()}, "sandbox");
    for (const auto& name : names) model::validateDnsSubdomain(name, "sandbox name");
    app::SuspendOptions suspend;
    suspend.suspend = options.suspend;
    suspend.wait = options.wait;
    suspend.timeout = app::parseDuration(options.timeout, "--timeout");
    suspend.cancel = context.cancelFlag();
    suspend.onSlowStop = [&context](const std::string& line) {
        context.err() << ui::escapeErrorLine(line, context.utf8Terminal()) << '\n' << std::flush;
    };

    // complete
    const std::string ns = context.namespaceName();
    const kube::ResourceRef ref = context.discovery().sandboxes();

    // run
    size_t failed = 0;
    // Each line may quote the server (its error, a pod's name): escaped on its way out.
    const auto shown = [&](const std::string& text) {
        return ui::escapeErrorLine(text, context.utf8Terminal());
    };
    app::setSandboxesSuspended(
        context.client(), context.clock(), ref, ns, names, suspend,
        [&](const app::SuspendResult& result) {
            if (!result.error.empty()) {
                ++failed;
                context.err() << "error: " << shown(result.error) << '\n' << std::flush;
            } else {
                context.out() << shown(app::describeSuspend(result, options.suspend)) << '\n'
                              << std::flush;
            }
            // Suspended, its pod goes whatever the wait for it then met (Ctrl-C, a time-out).
            if (!result.lostFiles.empty())
                context.err() << "note: " << shown(result.lostFiles) << '\n' << std::flush;
        });
    return failed > 0 ? kExitError : kExitOk;
}

CLI::App* addSuspendCommand(CLI::App& sandbox, CommandHost& host, bool suspend) {
    auto options = std::make_shared<SuspendCommandOptions>();
    options->suspend = suspend;
    auto* command = sandbox.add_subcommand(
        suspend ? "suspend" : "resume",
        suspend ? "Stop sandboxes' pods, keeping the sandboxes (files in /workspace are lost "
                  "unless imported with --storage)"
                : "Start suspended sandboxes' pods again and wait until they are Ready");
    command->add_option("sandboxes", options->names, "Sandbox names (NAME or sandbox/NAME)");
    command
        ->add_flag("--wait", options->wait,
                   suspend ? "Wait until the pod is gone and the Suspended condition is True "
                             "(--wait=false: return after the write)"
                           : "Wait until the Sandbox is Ready (--wait=false: return after the "
                             "write)")
        ->capture_default_str();
    command->add_option("--timeout", options->timeout, "How long to wait per sandbox")
        ->capture_default_str();
    onRun(command, host, options, &runSuspend);
    return command;
}

}  // namespace

void registerSandboxSuspend(CLI::App& sandbox, CommandHost& host) {
    addSuspendCommand(sandbox, host, true)
        ->footer(
            "Examples:\n"
            "  rossoctl sandbox suspend orders -n team1\n"
            "  rossoctl sandbox suspend orders billing --timeout 5m\n"
            "  rossoctl sandbox suspend orders --wait=false\n\n"
            "Sets spec.operatingMode: Suspended (spec.replicas: 0 on v1alpha1) with a merge patch\n"
            "of that field alone; the controller deletes the pod. A sandbox already suspended is\n"
            "left as it is. Resume it with \"rossoctl sandbox resume\".\n"
            "What the pod wrote to an emptyDir (/workspace unless the sandbox was imported with\n"
            "--storage, which keeps it in a volume claim) is deleted with the pod.\n"
            "Exit codes: 0 all suspended, 1 any sandbox failed or timed out, 2 invalid\n"
            "arguments, 130 interrupted.");
}

void registerSandboxResume(CLI::App& sandbox, CommandHost& host) {
    addSuspendCommand(sandbox, host, false)
        ->footer(
            "Examples:\n"
            "  rossoctl sandbox resume orders -n team1\n"
            "  rossoctl sandbox resume orders billing --timeout 5m\n"
            "  rossoctl sandbox resume orders --wait=false\n\n"
            "Sets spec.operatingMode: Running (spec.replicas: 1 on v1alpha1) with a merge patch\n"
            "of that field alone; the controller creates a new pod from the current template.\n"
            "A running sandbox is left as it is; an expired or finished one is refused.\n"
            "Exit codes: 0 all Ready, 1 any sandbox failed or timed out, 2 invalid arguments,\n"
            "130 interrupted.");
}

}  // namespace rossoctl::commands
