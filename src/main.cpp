// rossoctl: builds the command tree, parses the command line, runs one command.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/context.hpp"
#include "rossoctl/app/interrupt_note.hpp"
#include "rossoctl/app/process_hardening.hpp"
#include "rossoctl/kube/transport.hpp"

namespace {

using namespace rossoctl;

// Blocks SIGINT/SIGTERM in every thread and turns them into the CancelFlag from a thread of
// its own, so no signal handler (and no global) is needed; a second signal exits at once,
// after one line on stderr: what the running operation registered it leaves, else a fallback.
class SignalWatcher {
  public:
    SignalWatcher(kube::CancelFlag& cancel, const app::InterruptNote& note) {
        sigemptyset(&set_);
        sigaddset(&set_, SIGINT);
        sigaddset(&set_, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &set_, nullptr);
        thread_ = std::thread([this, &cancel, &note] {
            for (;;) {
                int signal = 0;
                if (sigwait(&set_, &signal) != 0) continue;
                if (stopping_) return;
                if (cancel.cancelled()) {
                    note.writeTo(STDERR_FILENO, app::kSecondInterruptFallback);
                    _exit(128 + signal);
                }
                cancel.cancel();
            }
        });
    }
    // Wakes the thread with a signal only it waits for, so it ends (and is joined) before
    // main returns: nothing is left running or allocated at exit.
    ~SignalWatcher() {
        stopping_ = true;
        pthread_kill(thread_.native_handle(), SIGTERM);
        thread_.join();
    }
    SignalWatcher(const SignalWatcher&) = delete;
    SignalWatcher& operator=(const SignalWatcher&) = delete;

  private:
    sigset_t set_{};
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

class Host : public commands::CommandHost {
  public:
    Host(CLI::App& root, app::GlobalOptions& globals, const kube::CancelFlag& cancel,
         app::InterruptNote& note)
        : root_(root), globals_(globals), cancel_(cancel), note_(note) {}

    app::Context& context() override {
        if (!context_) {
            app::Streams streams{std::cin,       std::cout,      std::cerr,   isatty(0) == 1,
                                 isatty(1) == 1, isatty(2) == 1, STDIN_FILENO};
            context_ = std::make_unique<app::Context>(
                streams, globals_, clock_, kube::Environment::fromProcess(),
                [](const kube::RestConfig& config, const kube::CancelFlag* cancel) {
                    return kube::makeCurlTransport(config, cancel);
                },
                &cancel_);
            context_->setInterruptNote(&note_);
        }
        return *context_;
    }
    CLI::App& root() override { return root_; }

  private:
    CLI::App& root_;
    app::GlobalOptions& globals_;
    const kube::CancelFlag& cancel_;
    app::InterruptNote& note_;
    SystemClock clock_;
    std::unique_ptr<app::Context> context_;
};

void addGlobalFlags(CLI::App& root, app::GlobalOptions& globals) {
    auto& c = globals.config;
    const char* group = "Global flags";
    root.add_option("--kubeconfig", c.kubeconfig, "Path to the kubeconfig file")->group(group);
    root.add_option("--context", c.context, "The kubeconfig context to use")->group(group);
    root.add_option("--cluster", c.cluster, "The kubeconfig cluster to use")->group(group);
    root.add_option("--user", c.user, "The kubeconfig user to use")->group(group);
    root.add_option("-n,--namespace", c.namespaceName, "The namespace (project) to use")
        ->group(group);
    root.add_option("-s,--server", c.server, "The address of the Kubernetes API server")
        ->group(group);
    root.add_option("--token", c.token, "Bearer token for authentication")->group(group);
    root.add_option("--certificate-authority", c.certificateAuthority,
                    "Path to a CA certificate file")
        ->group(group);
    root.add_flag("--insecure-skip-tls-verify", c.insecureSkipTlsVerify,
                  "Do not verify the server's certificate (insecure)")
        ->group(group);
    root.add_option("--request-timeout", globals.requestTimeout,
                    "How long to wait for one request (30s, 2m; 0: 5m, a stream none)")
        ->capture_default_str()
        ->group(group);
    root.add_option("-v,--v", globals.verbosity,
                    "Log level: 6 requests, 7 +headers, 8 +bodies (secrets masked)")
        ->group(group);
    root.add_flag("--no-color", globals.noColor, "Plain output without color (also NO_COLOR)")
        ->group(group);
}

}  // namespace

int main(int argc, char** argv) {
    app::disableCoreDumps();  // before any kubeconfig, token or key is read
    kube::CancelFlag cancel;
    app::InterruptNote note;
    SignalWatcher signals(cancel, note);

    app::GlobalOptions globals;
    CLI::App root{
        "rossoctl deploys AI agents into hardened Kubernetes sandboxes, changes them safely,\n"
        "and proves that a sandbox is really isolated."};
    root.name("rossoctl");
    root.fallthrough();  // global flags work before and after the subcommand
    root.set_help_all_flag("--help-all", "Help for every command");
    root.footer(commands::rootFooter());
    addGlobalFlags(root, globals);

    Host host(root, globals, cancel, note);
    commands::registerVersion(root, host);
    commands::registerCompletion(root, host);
    commands::registerComplete(root, host);
    commands::registerManpage(root, host);
    commands::registerHelp(root, host);
    commands::registerGroups(root, host);

    host.setArguments(std::vector<std::string>(argv + 1, argv + argc));
    const int parseExit = commands::parseCommandLine(root, host.arguments(), std::cout, std::cerr);
    if (parseExit >= 0) return parseExit;
    if (root.get_subcommands().empty()) {
        std::cout << root.help();
        return 0;
    }
    return host.exitCode();
}
