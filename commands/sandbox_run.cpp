// rossoctl sandbox run: run code in an ephemeral hardened pod and return its streams, exit
// status and artifacts.
#include <fmt/format.h>

#include <exception>
#include <filesystem>
#include <sstream>

#include "caps.hpp"
#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/run/release.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "sandbox_run_internal.hpp"

namespace rossoctl::commands {
namespace {

using app::run::kExitRunFailed;

int runSandboxRun(app::Context& context, RunOptions& options) {
    // validate: all input before any request
    const bool json = !options.output.empty() &&
                      ui::parseOutputFormat(options.output, {"json"}) == ui::OutputFormat::Json;
    if (options.command.empty())
        throw UsageError(
            "give the command after --, e.g. rossoctl sandbox run -n team1 -- python3 main.py");
    app::run::RunRequest request;
    request.shape = {options.image, options.cpu, options.memory, options.workdir,
                     options.runtimeClass};
    app::run::validateRunPodShape(request.shape);
    request.timeout = app::parseDuration(options.timeout, "--timeout");
    if (request.timeout.count() <= 0)
        throw UsageError("--timeout must be more than 0: nothing runs forever");
    request.startTimeout = app::parseDuration(options.startTimeout, "--start-timeout");
    if (request.startTimeout.count() <= 0) throw UsageError("--start-timeout must be more than 0");
    for (const auto& assignment : options.env) {
        auto var = model::parseEnvAssignment(assignment, "--env");
        app::run::validateRunEnvName(var.name);
        request.env.push_back(std::move(var));
    }
    request.command = options.command;
    request.keep = options.keep;
    request.fromPool = options.pool.has_value();
    if (options.pool && !options.pool->empty())
        model::validateDnsSubdomain(*options.pool, "--pool name");
    request.releaseClaimAfterExit = true;  // see releaseAfterExit below
    validateReportPath(options.report);
    request.report = json || !options.report.empty();
    // Checked before anything runs: finding out after the code ran loses its artifacts.
    if (!options.artifacts.empty() && std::filesystem::exists(options.artifacts) &&
        !std::filesystem::is_directory(options.artifacts))
        throw UsageError(fmt::format(
            "--artifacts {}: not a directory; give a directory (it is created if missing)",
            ui::escapeForTerminal(options.artifacts)));
    // The code names what it leaves in out/: as sandbox cp, nothing of the user's is replaced
    // (a .git/hooks/pre-commit in `--artifacts .`) unless --force says so.
    std::error_code unreadable;  // the collection itself says why it cannot write there
    if (!options.artifacts.empty() && !options.force &&
        std::filesystem::is_directory(options.artifacts, unreadable) &&
        !std::filesystem::is_empty(options.artifacts, unreadable) && !unreadable)
        throw UsageError(fmt::format(
            "--artifacts {} already holds files; nothing was run: name a new or empty directory, "
            "or add --force to write into it (files of the same name are replaced)",
            ui::escapeForTerminal(options.artifacts)));
    request.collect = !options.artifacts.empty();
    request.artifactsDir = options.artifacts;
    request.artifactLimits.maxBytes = parseCap(options.artifactsMaxBytes, "--artifacts-max-bytes");
    request.artifactLimits.maxEntries =
        parseCap(options.artifactsMaxFiles, "--artifacts-max-files");
    request.artifactLimits.maxFileBytes =
        parseCap(options.artifactsMaxFileBytes, "--artifacts-max-file-bytes");
    const uint64_t outputCap = parseCap(options.outputMaxBytes, "--output-max-bytes");
    const auto now = std::chrono::system_clock::to_time_t(context.clock().now());
    request.uploadTar = uploadArchive(options.files, static_cast<int64_t>(now));
    if (options.stdinCode) {
        std::ostringstream code;
        code << context.in().rdbuf();
        request.stdinData = code.str();
    }

    // complete
    request.namespaceName = context.namespaceName();
    // rossoctl never makes "default" a project (project create refuses a namespace it did not
    // create): code run there has no default-deny egress and no quota, said before it runs.
    if (context.restConfig().namespaceDefaulted)
        context.err() << "Warning: no namespace given (-n) or set in the kubeconfig context: "
                         "running in \"default\", which is no rossoctl project (no default-deny "
                         "egress, no quota); see \"rossoctl project create --help\"\n";
    refusePoolNameAsCommand(context, options, request.namespaceName);
    if (request.fromPool) choosePool(context, options, request);

    // run
    // -o json holds the streams until the end: capped, so a flood cannot exhaust memory.
    auto stdoutText = app::run::CappedText::withLimit(static_cast<size_t>(outputCap));
    auto stderrText = app::run::CappedText::withLimit(static_cast<size_t>(outputCap));
    // On a terminal the pod's bytes are escaped: its control sequences never drive the terminal.
    ui::UntrustedTextWriter podStdout(context.out(), context.streams().outIsTty,
                                      context.utf8Terminal());
    ui::UntrustedTextWriter podStderr(context.err(), context.streams().errIsTty,
                                      context.utf8Terminal());
    app::run::RunCallbacks callbacks;
    if (json) {
        // A cap reached ends the run (OutputCapReached): what follows would only be dropped.
        callbacks.onStdout = [&](std::string_view bytes) {
            stdoutText.append(bytes);
            if (stdoutText.dropped) throw app::run::OutputCapReached{"stdout"};
        };
        callbacks.onStderr = [&](std::string_view bytes) {
            stderrText.append(bytes);
            if (stderrText.dropped) throw app::run::OutputCapReached{"stderr"};
        };
    } else {
        callbacks.onStdout = [&](std::string_view bytes) { podStdout.write(bytes); };
        callbacks.onStderr = [&](std::string_view bytes) { podStderr.write(bytes); };
    }
    // Notes quote the server (its errors, the names of pods it reaped): escaped on their way out.
    const auto shown = [&](const std::string& text) {
        return ui::escapeErrorLine(text, context.utf8Terminal());
    };
    callbacks.note = [&](const std::string& text) { context.err() << shown(text) << '\n'; };
    const app::run::RunClients clients{context.client(), [&] { return context.newClient(); },
                                       [&] { return context.newUncancellableClient(); }};
    const auto outcome =
        app::run::runInPod(clients, context.clock(), context.cancelFlag(), request, callbacks);
    // The claim of a run whose command ended is deleted once everything is printed, by a
    // process of its own so that the exit does not wait for it (release.hpp: should that
    // process die, the claim's shutdownTime removes it). Without such a process, or when an
    // error leaves first, it is deleted here before the exit.
    auto releaseNow = [&] {
        app::run::releaseClaim(*clients.cleanup(), request.namespaceName, outcome.claim);
    };
    const ScopeExit releaseOnError([&] {
        if (outcome.releasePending && std::uncaught_exceptions() > 0) releaseNow();
    });
    auto releaseAfterExit = [&] {
        if (!outcome.releasePending) return;
        context.out().flush();
        context.err().flush();
        if (!app::run::releaseClaimAfterExit(clients.cleanup, context.clock(),
                                             request.namespaceName, outcome.claim))
            releaseNow();
    };
    podStdout.finish();
    podStderr.finish();

    const bool failed =
        printRunOutcome(context, options, request, outcome, json, stdoutText, stderrText, shown);
    releaseAfterExit();
    return failed ? kExitRunFailed : outcome.exitCode;
}

}  // namespace

void registerSandboxRun(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<RunOptions>();
    // 125 for every failure of rossoctl's own, a bad flag too: 1 and 2 are the code's.
    auto* command = addCommandWithFailureCode(
        sandbox, "run",
        "Run code in an ephemeral hardened pod; return its output, exit code and artifacts",
        kExitRunFailed);
    command->add_option("--image", options->image, "Container image (needs sh, tar and sleep)")
        ->capture_default_str();
    command->add_option("--file", options->files,
                        "File or directory to copy into the working directory (repeatable)");
    command->add_option("--workdir", options->workdir, "Working directory (an emptyDir)")
        ->capture_default_str();
    command->add_option("--env", options->env, "Environment variable K=V (repeatable)");
    command
        ->add_option("--timeout", options->timeout,
                     "Longest the command may run; then it is killed and the exit code is 124")
        ->capture_default_str();
    command
        ->add_option("--start-timeout", options->startTimeout,
                     "Longest to wait for the pod to start")
        ->capture_default_str();
    command->add_option("--cpu", options->cpu, "CPU limit (and request)")->capture_default_str();
    command->add_option("--memory", options->memory, "Memory limit (and request)")
        ->capture_default_str();
    command->add_option("--runtime-class", options->runtimeClass,
                        "RuntimeClass of the pod (gvisor, kata: a kernel of its own); a project "
                        "made with --runtime-class requires its own");
    command->add_option("--artifacts", options->artifacts,
                        "Copy every file the code wrote under WORKDIR/out/ into this directory "
                        "(kept, and said to be partial, when the run timed out, was killed or "
                        "reached a cap)");
    command->add_flag("--force", options->force,
                      "Write into an --artifacts directory that already holds files (files of "
                      "the same name are replaced)");
    command->add_flag("--keep", options->keep, "Keep the pod afterwards (for debugging)");
    command->add_flag("--stdin", options->stdinCode,
                      "Pass this process's stdin to the command (e.g. code for python3 -)");
    command
        ->add_flag("--pool{}", options->pool,
                   "Take a warm sandbox from 'rossoctl sandbox pool' when one matches (a "
                   "SandboxClaim on its SandboxWarmPool, or a bare warm pod); --pool=NAME takes "
                   "from the SandboxWarmPool NAME, whoever made it, on its pods' image and "
                   "limits (a shape flag given that differs is an error)")
        ->type_name("NAME");
    for (const auto& [flag, given] :
         {std::pair{"--image", &options->given.image}, std::pair{"--cpu", &options->given.cpu},
          std::pair{"--memory", &options->given.memory},
          std::pair{"--workdir", &options->given.workdir},
          std::pair{"--runtime-class", &options->given.runtimeClass}})
        noteGiven(command->get_option(flag), *given);
    command
        ->add_option("--output-max-bytes", options->outputMaxBytes,
                     "With -o json: capture at most this much of stdout and of stderr; reaching "
                     "it stops the command (OutputCapReached, exit 125)")
        ->capture_default_str();
    command
        ->add_option("--artifacts-max-bytes", options->artifactsMaxBytes,
                     "Refuse artifacts whose files add up to more than this")
        ->capture_default_str();
    command
        ->add_option("--artifacts-max-files", options->artifactsMaxFiles,
                     "Refuse artifacts with more entries (files, directories, links) than this")
        ->capture_default_str();
    command
        ->add_option("--artifacts-max-file-bytes", options->artifactsMaxFileBytes,
                     "Refuse an artifact file larger than this")
        ->capture_default_str();
    command->add_option("-o,--output", options->output,
                        "json: the --report fields plus {stdout, stderr}; the command's output is "
                        "captured (up to --output-max-bytes each), not streamed");
    command->add_option("--report", options->report,
                        "Write the run report (JSON for CI: exitCode, ended, image, imageID, node, "
                        "runtimeClass, start (warm or cold) and coldStartReason, durations in ms, "
                        "artifacts with bytes and sha256) to this file (0644, replaced "
                        "atomically); the output still streams");
    command->add_option("command", options->command, "The command and its arguments, after --");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox run -n team1 --file main.py -- python3 main.py\n"
        "  echo 'print(6 * 7)' | rossoctl sandbox run -n team1 --stdin -- python3 -\n"
        "  rossoctl sandbox run -n team1 --file job/ --artifacts ./results -o json -- sh "
        "job/run.sh\n"
        "  rossoctl sandbox run -n team1 --file job/ --artifacts ./results --report run.json -- "
        "sh job/run.sh\n"
        "  rossoctl sandbox run -n team1 --pool=py -- python3 -c 'print(1)'\n\n"
        "Output is streamed as it arrives (stdout is the command's own); with -o json it is\n"
        "captured into one JSON object instead, up to --output-max-bytes of each stream: the\n"
        "command is stopped when either reaches it. --report FILE keeps the output streaming\n"
        "and writes the report (the -o json fields but stdout and stderr) to FILE; either asks\n"
        "for the image digest and node, which a run from a SandboxClaim reads with one GET.\n"
        "Artifacts are collected after a --timeout or a kill too (what the code wrote by then,\n"
        "once what it left running is stopped); whenever they are not all the run meant to\n"
        "leave (timed out, killed, a cap reached) the files that arrived stay in the directory\n"
        "and stderr and -o json (artifactsPartial, artifactsPartialReason) say they are partial.\n"
        "Exit codes: each says why the run ended, as stderr does in one line and \"ended\" in\n"
        "-o json and --report:\n"
        "  the command's own status  Exited: the command ended on its own\n"
        "  124  TimedOut: it ran longer than --timeout\n"
        "  137  OOMKilled: it ran out of memory (the limit is --memory)\n"
        "  137  DeadlineExceeded: the pod's activeDeadlineSeconds or its claim's shutdownTime "
        "passed\n"
        "  137  Evicted: the node evicted the pod\n"
        "  137  Killed: SIGKILL from elsewhere (the pod deleted, its node lost, kill -9)\n"
        "  125  OutputCapReached: with -o json, stdout or stderr reached --output-max-bytes\n"
        "  125  rossoctl itself failed (bad flags included, as docker run does), an artifacts\n"
        "       cap reached by a command that ended on its own included\n"
        "  130  Interrupted: Ctrl-C\n"
        "The pod is deleted in every case unless --keep (through a short API outage too); the\n"
        "pod of a run that was killed (kill -9) is deleted by the next run in the namespace.");
    command->callback([&host, options, failureCode = command->failureCode()] {
        auto& context = host.context();
        options->typed = host.arguments();
        bool ranCode = false;  // an exit status from the code, not from rossoctl
        const int code = app::runCommand(context, [&](app::Context& c) {
            const int status = runSandboxRun(c, *options);
            ranCode = true;
            return status;
        });
        // runCommand made an error under Ctrl-C the interrupt (130): that is no failure of ours.
        const bool interrupted = code == kExitCancelled && context.cancelled();
        host.setExitCode(ranCode || interrupted ? code : failureCode);
    });
}

}  // namespace rossoctl::commands
