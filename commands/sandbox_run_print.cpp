// What sandbox run says once its run is over, on stdout, stderr and in --report.
#include <fmt/format.h>

#include "rossoctl/app/piped_stdin.hpp"
#include "rossoctl/app/run/report.hpp"
#include "rossoctl/ui/printer.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "sandbox_run_internal.hpp"

namespace rossoctl::commands {

namespace {

// The end of the stderr line that says why a run ended: what to do about it.
std::string whatNext(const app::run::RunOutcome& outcome, const std::string& pod,
                     const std::string& podState) {
    const std::string& reason = outcome.ended.reason;
    if (reason == app::run::kEndedOOMKilled) return "; give it more with --memory";
    if (reason == app::run::kEndedOutputCapReached)
        return "; raise --output-max-bytes, or leave out -o json to stream the output";
    return fmt::format("; pod {} {}", pod, podState);
}

}  // namespace

bool printRunOutcome(app::Context& context, const RunOptions& options,
                     const app::run::RunRequest& request, const app::run::RunOutcome& outcome,
                     bool json, const app::run::CappedText& stdoutText,
                     const app::run::CappedText& stderrText,
                     const std::function<std::string(const std::string&)>& shown) {
    for (const auto& why : outcome.rejected)
        context.err() << "warning: artifact refused: " << ui::escapeForTerminal(why) << '\n';
    if (json)
        ui::printJson(context.out(), app::run::runResultJson(outcome, stdoutText, stderrText,
                                                             request.namespaceName));
    const std::string podState = outcome.deleted || outcome.releasePending ? "deleted" : "kept";
    if (outcome.cancelled)
        context.err() << fmt::format(
            "interrupted; {}{}\n", shown(app::run::interruptedRunTarget(outcome, podState)),
            !request.collect ? ""
            : outcome.artifacts.empty()
                ? fmt::format("; no artifacts were collected into {}",
                              ui::escapeForTerminal(options.artifacts))
                : fmt::format("; the artifacts in {} are partial ({} file{} kept): interrupted "
                              "while collecting them",
                              ui::escapeForTerminal(options.artifacts), outcome.artifacts.size(),
                              outcome.artifacts.size() == 1 ? "" : "s"));
    else if (outcome.ended.reason != app::run::kEndedExited)
        context.err() << fmt::format(
            "error: the run ended: {} (exit {}): {}{}\n", outcome.ended.reason, outcome.exitCode,
            shown(outcome.ended.message), whatNext(outcome, shown(outcome.pod), podState));
    // A failed collection is rossoctl's failure (125) unless the code's own status already
    // says the run failed (124, 137): a CI step never takes partial artifacts for a success.
    const bool ranThrough = !outcome.timedOut && outcome.exitCode != app::run::kExitKilled;
    const bool failed = outcome.collectFailed && ranThrough;
    if (!outcome.artifactsPartial.empty())
        context.err() << fmt::format(
            "{}: the artifacts in {} are partial ({} file{} kept): {}\n",
            failed ? "error" : "warning", ui::escapeForTerminal(options.artifacts),
            outcome.artifacts.size(), outcome.artifacts.size() == 1 ? "" : "s",
            shown(outcome.artifactsPartial));
    // An empty directory alone does not say whether the code wrote elsewhere (walk5 MINOR 9).
    if (request.collect && !outcome.cancelled && outcome.artifacts.empty() &&
        outcome.artifactsPartial.empty() && outcome.rejected.empty())
        context.err() << fmt::format(
            "note: no files under {}/out/; nothing was collected into {} (artifacts are the files "
            "the code writes under {}/out/)\n",
            ui::escapeForTerminal(options.workdir), ui::escapeForTerminal(options.artifacts),
            ui::escapeForTerminal(options.workdir));
    if (!options.report.empty())
        app::run::writeReportFile(
            options.report,
            // A name the code chose need not be UTF-8: replaced, as every printer does.
            app::run::runReportJson(request.namespaceName, outcome)
                    .dump(4, ' ', false, nlohmann::json::error_handler_t::replace) +
                "\n",
            context.random());
    // `echo code | sandbox run -- python3 -` ran with nothing on stdin: said, not guessed at
    // (docker run drops it too, but says nothing). Looked at once the run is over, so the
    // writer has had its time.
    if (!options.stdinCode && !outcome.cancelled && !context.streams().inIsTty &&
        app::stdinHasPipedBytes(context.streams().inDescriptor))
        context.err() << "note: what was piped to stdin was not passed to the command; add "
                         "--stdin to pass it (e.g. echo 'print(1)' | rossoctl sandbox run --stdin "
                         "-- python3 -)\n";
    return failed;
}

}  // namespace rossoctl::commands
