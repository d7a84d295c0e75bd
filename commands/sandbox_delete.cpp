// rossoctl sandbox delete pod/NAME: deletes a pod `sandbox run --keep` kept, and nothing else.
#include <fmt/format.h>

#include <algorithm>

#include "conventions.hpp"
#include "registry.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "run_pod_target.hpp"

namespace rossoctl::commands {
namespace {

struct SandboxDeleteOptions {
    std::vector<std::string> names;
};

int runSandboxDelete(app::Context& context, SandboxDeleteOptions& options) {
    // validate
    std::vector<std::string> pods;
    for (const auto& argument : options.names) {
        const auto target = sandboxOrRunPod(argument);
        if (!target.runPod)
            throw UsageError(fmt::format(
                "sandbox delete takes a pod \"sandbox run --keep\" kept, as pod/NAME; a sandbox "
                "goes with its agent: rossoctl agents delete {} -n {}",
                target.name, context.namespaceName()));
        model::validateDnsSubdomain(target.name, "pod name");
        if (std::find(pods.begin(), pods.end(), target.name) == pods.end())
            pods.push_back(target.name);
    }

    // complete
    const std::string ns = context.namespaceName();

    // run: each pod on its own; one that cannot be deleted does not keep the others
    int exitCode = kExitOk;
    for (const auto& name : pods) {
        try {
            app::run::deleteRunPod(context.client(), ns, name);
            context.out() << "pod/" << name << " deleted\n";
        } catch (const Error& error) {
            context.err() << "error: " << ui::escapeErrorLine(error.what(), context.utf8Terminal())
                          << '\n';
            exitCode = kExitError;
        }
    }
    return exitCode;
}

}  // namespace

void registerSandboxDelete(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<SandboxDeleteOptions>();
    auto* command = sandbox.add_subcommand(
        "delete", "Delete a pod that \"sandbox run --keep\" kept (pod/NAME); nothing else");
    command->add_option("pods", options->names, "pod/NAME, as sandbox run --keep printed it")
        ->required();
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox delete pod/rossoctl-run-d6382408 -n team1\n\n"
        "Only a pod that sandbox run created (labels rossoctl.dev/run=true and\n"
        "app.kubernetes.io/managed-by=rossoctl) and kept, or whose run is over, is deleted;\n"
        "the pod of a run in progress is left to that run. A kept pod ends by itself at its\n"
        "deadline (--timeout plus 60s), after which \"rossoctl gc\" deletes it too. A sandbox\n"
        "is deleted with its agent: rossoctl agents delete NAME.\n"
        "Exit codes: 0 deleted, 1 not found, not a kept run pod, or the delete failed, 2\n"
        "invalid arguments.");
    onRun(command, host, options, &runSandboxDelete);
}

}  // namespace rossoctl::commands
