// rossoctl gc: find and delete what leaks in practice (expired sandboxes, run and pool pods of a
// killed rossoctl, run claims, AgentRuntimes whose workload is gone), each with a reason.
#include "rossoctl/app/gc.hpp"

#include <fmt/format.h>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/agents.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

struct GcOptions {
    bool allNamespaces = false;
    std::string dryRun = "none";
    std::string olderThan = "0s";
    bool yes = false;
};

// On a terminal gc shows what it found and asks; --yes, or no terminal on stdin (a script, CI),
// deletes without asking, as kubectl delete does.
bool confirmed(app::Context& context, size_t count) {
    context.err() << fmt::format("Delete {} object{}? [y/N] ", count, count == 1 ? "" : "s");
    std::string answer;
    std::getline(context.in(), answer);
    return answer == "y" || answer == "Y" || answer == "yes";
}

ui::Table garbageTable(const std::vector<app::gc::Garbage>& items, bool allNamespaces) {
    ui::Table table;
    table.headers = {"KIND", "NAME", "AGE", "REASON"};
    if (allNamespaces) table.headers.insert(table.headers.begin(), "NAMESPACE");
    for (const auto& item : items) {
        // The printer escapes each cell: the names are the server's.
        std::vector<std::string> row = {item.ref.kind, item.name, ui::formatAge(item.age),
                                        item.reason};
        if (allNamespaces) row.insert(row.begin(), item.namespaceName);
        table.rows.push_back(std::move(row));
    }
    return table;
}

int runGc(app::Context& context, GcOptions& options) {
    // validate
    const DryRun dryRun = parseDryRun(options.dryRun, context.err());
    app::gc::ScanOptions scanOptions;
    scanOptions.olderThan = std::chrono::duration_cast<std::chrono::seconds>(
        app::parseDuration(options.olderThan, "--older-than"));
    if (scanOptions.olderThan.count() < 0) throw UsageError("--older-than must not be negative");

    // complete
    scanOptions.namespaceName = options.allNamespaces ? "" : context.namespaceName();
    scanOptions.now = context.clock().now();

    // run
    const auto found = app::gc::scan(context.client(), context.discovery(), scanOptions);
    int exitCode = 0;
    for (const auto& error : found.errors) {
        context.err() << "error: " << ui::escapeForTerminal(error) << '\n';
        exitCode = kExitError;
    }
    for (const auto& note : found.kept)
        context.err() << "note: " << ui::escapeForTerminal(note) << '\n';
    const std::string where = options.allNamespaces ? std::string("any namespace")
                                                    : "namespace " + scanOptions.namespaceName;
    if (found.items.empty()) {
        context.err() << "Nothing to collect in " << where << ".\n";
        return exitCode;
    }
    ui::printTable(context.out(), garbageTable(found.items, options.allNamespaces), false, false);
    if (dryRun == DryRun::Client) {
        // kubectl's "pod "x" deleted (dry run)": the mode closes the sentence.
        context.err() << fmt::format("{} object{} would be deleted (dry run)\n", found.items.size(),
                                     found.items.size() == 1 ? "" : "s");
        return exitCode;
    }
    if (dryRun == DryRun::None && !options.yes && context.streams().inIsTty &&
        !confirmed(context, found.items.size())) {
        context.err() << "Nothing deleted.\n";
        return kExitError;
    }
    size_t deleted = 0;
    for (const auto& item : found.items) {
        const std::string shown =
            fmt::format("{}/{}", app::typeName(item.ref), ui::escapeForTerminal(item.name));
        try {
            switch (app::gc::remove(context.client(), item, dryRun == DryRun::Server)) {
                case app::gc::Deleted::Yes:
                case app::gc::Deleted::Gone:
                    ++deleted;
                    break;
                case app::gc::Deleted::Changed:
                    context.err() << fmt::format(
                        "error: {} changed since it was listed and was kept; run gc again to "
                        "look at it anew\n",
                        shown);
                    exitCode = kExitError;
            }
        } catch (const kube::ApiError& error) {
            context.err() << fmt::format("error: cannot delete {}: {}\n", shown,
                                         ui::escapeForTerminal(error.what()));
            exitCode = kExitError;
        }
    }
    context.err() << fmt::format("deleted {} of {} object{}{}\n", deleted, found.items.size(),
                                 found.items.size() == 1 ? "" : "s",
                                 dryRun == DryRun::Server ? " (server dry run)" : "");
    return exitCode;
}

}  // namespace

void registerGc(CLI::App& root, CommandHost& host) {
    auto options = std::make_shared<GcOptions>();
    auto* command = root.add_subcommand(
        "gc",
        "Delete what runs and sandboxes leave behind: expired sandboxes, leftover pods and "
        "claims, orphaned AgentRuntimes");
    command->add_flag("-A,--all-namespaces", options->allNamespaces,
                      "Look in every namespace, not only the current one");
    addDryRunFlag(command, options->dryRun,
                  "List what would be deleted and why; delete nothing (server: let the API "
                  "server check the deletes)");
    command->add_flag("-y,--yes", options->yes,
                      "Delete without asking (gc asks only when stdin is a terminal)");
    command
        ->add_option("--older-than", options->olderThan,
                     "Only objects created at least this long ago, e.g. 1h")
        ->capture_default_str();
    command->footer(
        "Examples:\n"
        "  rossoctl gc -n team1 --dry-run\n"
        "  rossoctl gc -A --older-than 1h\n\n"
        "Collected, and only when labelled app.kubernetes.io/managed-by=rossoctl: Sandboxes\n"
        "past spec.shutdownTime (not those a claim or warm pool owns, nor those whose\n"
        "shutdownPolicy Retain keeps volume claims); sandbox run pods whose run ended or whose\n"
        "process is surely gone (one of another machine or container counts as alive until its\n"
        "deadline), a pod sandbox run --keep kept once its deadline ended it (delete a running\n"
        "one with \"rossoctl sandbox delete pod/NAME\"), ended warm pool pods; run SandboxClaims "
        "past their shutdownTime\n"
        "or whose process is gone (one run --pool --keep kept: past its shutdownTime only);\n"
        "AgentRuntimes whose spec.targetRef is gone. Each delete\n"
        "carries the UID and resourceVersion it was listed with: an object changed since is\n"
        "kept. On a terminal gc lists what it found and asks first; with --yes, or when stdin\n"
        "is not a terminal (scripts, CI), it deletes without asking, as kubectl delete does.\n"
        "Exit codes: 0 nothing is left to collect (or --dry-run listed it); 1 a kind could not\n"
        "be listed (e.g. forbidden; the other kinds still run), an object was not deleted, or\n"
        "the question was answered no; 2 invalid arguments.");
    onRun(command, host, options, &runGc);
}

}  // namespace rossoctl::commands
