// rossoctl sandbox restart: replace sandboxes' pods (exactly theirs, by UID) and wait for the new
// ones.
#include "rossoctl/app/sandbox_restart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

constexpr size_t kMaxWorkers = 16;  // parallel restarts, each with its own connection

struct RestartCommandOptions {
    std::vector<std::string> names;
    std::string selector;
    bool all = false;
    bool wait = true;
    std::string timeout = "2m";
};

// Result lines on stdout; on a terminal one progress line on stderr, redrawn in place.
class RestartReporter {
  public:
    RestartReporter(app::Context& context, size_t total) : context_(context), total_(total) {}

    void step(const std::string& name, const std::string& text) {
        std::lock_guard lock(mutex_);
        if (!context_.streams().errIsTty) return;
        drawProgress(fmt::format("sandbox/{}: {}", name, shown(text)));
    }

    void done(const std::string& line, const std::vector<std::string>& notes, bool failed) {
        std::lock_guard lock(mutex_);
        ++finished_;
        if (failed) ++failed_;
        clearProgress();
        for (const auto& note : notes) context_.err() << "note: " << shown(note) << '\n';
        if (failed)
            context_.err() << "error: " << shown(line) << '\n';
        else
            context_.out() << shown(line) << '\n' << std::flush;
        if (context_.streams().errIsTty && finished_ < total_) drawProgress({});
    }

    // A line of its own while the restarts go on (a pod slow to stop), above the progress line.
    void note(const std::string& line) {
        std::lock_guard lock(mutex_);
        clearProgress();
        context_.err() << shown(line) << '\n' << std::flush;
        if (context_.streams().errIsTty && finished_ < total_) drawProgress({});
    }

    size_t failed() const { return failed_; }

  private:
    // Lines quote the server (pod names, conditions, its errors): none of it steers the terminal.
    std::string shown(const std::string& text) const {
        return ui::escapeErrorLine(text, context_.utf8Terminal());
    }
    void drawProgress(const std::string& latest) {
        context_.err() << "\r\033[K" << fmt::format("restarting: {}/{} done", finished_, total_)
                       << (latest.empty() ? "" : " · " + latest) << std::flush;
        drawn_ = true;
    }
    void clearProgress() {
        if (drawn_) context_.err() << "\r\033[K" << std::flush;
        drawn_ = false;
    }

    app::Context& context_;
    size_t total_;
    std::mutex mutex_;
    size_t finished_ = 0;
    size_t failed_ = 0;
    bool drawn_ = false;
};

struct SelectedSandboxes {
    std::vector<std::string> names;
    std::optional<json> list;  // the LIST they were picked from, for -l and --all
    size_t nameless = 0;       // listed items without a name, which nothing can restart
};

SelectedSandboxes selectSandboxes(app::Context& context, const kube::ResourceRef& ref,
                                  const std::string& ns, const RestartCommandOptions& options) {
    SelectedSandboxes selected;
    if (!options.names.empty()) {
        selected.names = objectNames(options.names, {sandboxType()}, "sandbox");
        return selected;
    }
    kube::ListOptions list;
    list.labelSelector = options.selector;
    selected.list = context.client().list(ref, ns, list);
    std::set<std::string> seen;
    for (const auto& item : selected.list->value("items", json::array())) {
        const json metadata = item.is_object() ? item.value("metadata", json::object()) : json();
        const auto name = metadata.is_object() ? metadata.find("name") : metadata.end();
        // A server's list is not trusted to be a set of named objects: one line per sandbox.
        if (name == metadata.end() || !name->is_string() || name->get<std::string>().empty()) {
            ++selected.nameless;
            continue;
        }
        if (seen.insert(name->get<std::string>()).second) selected.names.push_back(*name);
    }
    return selected;
}

int runRestart(app::Context& context, RestartCommandOptions& options) {
    // validate
    for (const auto& name : objectNames(options.names, {sandboxType()}, "sandbox"))
        model::validateDnsSubdomain(name, "sandbox name");
    const int ways = (options.names.empty() ? 0 : 1) + (options.selector.empty() ? 0 : 1) +
                     (options.all ? 1 : 0);
    if (ways == 0) throw UsageError("name the sandboxes to restart, or use -l SELECTOR or --all");
    if (ways > 1) throw UsageError("give sandbox names, -l SELECTOR or --all, not several");
    const auto timeout = app::parseDuration(options.timeout, "--timeout");

    // complete
    const std::string ns = context.namespaceName();
    const kube::ResourceRef ref = context.discovery().sandboxes();
    auto selected = selectSandboxes(context, ref, ns, options);
    const auto& names = selected.names;
    if (selected.nameless > 0)
        context.err() << "error: the server listed " << selected.nameless
                      << " sandbox(es) without a name; they were not restarted\n";
    if (names.empty()) {
        if (selected.nameless > 0) return kExitError;
        context.err() << "No sandboxes found in namespace " << ns
                      << (options.selector.empty() ? "" : " matching " + options.selector) << ".\n";
        return options.all ? kExitOk : kExitError;
    }

    // run: each worker owns a client (connection); the first worker reuses the context's.
    RestartReporter reporter(context, names.size());
    const size_t workers = std::min(kMaxWorkers, names.size());
    std::vector<std::unique_ptr<kube::Client>> owned;
    std::vector<kube::Client*> clients{&context.client()};
    for (size_t i = 1; i < workers; ++i)
        clients.push_back(owned.emplace_back(context.newClient()).get());
    app::RestartManyOptions restart;
    restart.restart.wait = options.wait;
    restart.restart.timeout = timeout;
    restart.restart.cancel = context.cancelFlag();
    restart.onStep = [&](const std::string& name, const std::string& text) {
        reporter.step(name, text);
    };
    restart.restart.onSlowStop = [&](const std::string& line) { reporter.note(line); };
    restart.onDone = [&](const app::RestartOutcome& outcome) {
        if (outcome.result)
            reporter.done(app::describeRestart(outcome.name, *outcome.result),
                          outcome.result->notes, false);
        else
            reporter.done(outcome.error, outcome.notes, true);  // an interrupted one's files note
    };
    app::restartSandboxes(clients, context.clock(), ref, ns, names, restart,
                          std::move(selected.list));
    return reporter.failed() > 0 || selected.nameless > 0 ? kExitError : kExitOk;
}

}  // namespace

void registerSandboxRestart(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<RestartCommandOptions>();
    auto* command = sandbox.add_subcommand(
        "restart", "Replace sandboxes' pods and wait until the new pods are Ready");
    command->add_option("sandboxes", options->names, "Sandbox names (NAME or sandbox/NAME)");
    command->add_option("-l,--selector", options->selector,
                        "Restart the sandboxes matching this label selector");
    command->add_flag("--all", options->all, "Restart every sandbox in the namespace");
    command
        ->add_flag("--wait", options->wait,
                   "Wait for a new Ready pod and the Sandbox's Ready condition (--wait=false: "
                   "return after the delete)")
        ->capture_default_str();
    command->add_option("--timeout", options->timeout, "How long to wait per sandbox")
        ->capture_default_str();
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox restart orders -n team1\n"
        "  rossoctl sandbox restart -l app.kubernetes.io/managed-by=rossoctl --timeout 5m\n"
        "  rossoctl sandbox restart --all --wait=false\n\n"
        "Only the pod the sandbox owns (ownerReferences UID) is deleted, with a UID\n"
        "precondition, so a pod that was replaced meanwhile is never deleted. What the pod\n"
        "wrote to an emptyDir (/workspace unless the sandbox was imported with --storage) is\n"
        "deleted with it. Of several names, one the namespace does not have restarts none.\n"
        "Exit codes: 0 all restarted, 1 any sandbox failed, 2 invalid arguments.");
    onRun(command, host, options, &runRestart);
}

}  // namespace rossoctl::commands
