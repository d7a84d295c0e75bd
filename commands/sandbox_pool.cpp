// rossoctl sandbox pool: keep N warm hardened sandboxes that `sandbox run --pool` takes, so a
// run skips pod start-up. Where the agent-sandbox extensions are served: a SandboxTemplate and
// SandboxWarmPool; elsewhere (the fallback) bare pods of rossoctl's own.
#include <fmt/format.h>

#include "registry.hpp"
#include "rossoctl/app/run/pool_wait.hpp"
#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/model/validation.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

struct PoolOptions {
    int size = -1;
    std::string image = app::run::kDefaultRunImage;
    std::string workdir = "/workspace";
    std::string cpu = "500m";
    std::string memory = "512Mi";
    std::string runtimeClass;
    std::string lifetime = "1h";
    bool wait = false;
    std::string timeout = "2m";
    bool barePods = false;
};

int runWarmPool(app::Context& context, const PoolOptions& options,
                const app::run::RunPodShape& shape, const std::string& ns,
                std::chrono::milliseconds timeout, long lifetimeSeconds) {
    const std::string name = app::run::warmPoolName(shape);
    const auto status =
        app::run::reconcileWarmPool(context.client(), ns, shape, options.size, lifetimeSeconds);
    if (options.size == 0) {
        context.out() << fmt::format("SandboxWarmPool {} in {}: deleted (with its template)\n",
                                     name, ns);
        return 0;
    }
    context.out() << fmt::format("SandboxWarmPool {} in {}: {} wanted, {} ready\n", name, ns,
                                 options.size, status.ready);
    if (!options.wait) return 0;
    app::run::waitForWarmPool(context.client(), context.clock(), context.cancelFlag(), ns, shape,
                              options.size, timeout, options.timeout);
    context.out() << fmt::format("SandboxWarmPool {} in {}: {} ready\n", name, ns, options.size);
    return 0;
}

int runSandboxPool(app::Context& context, PoolOptions& options) {
    // validate
    if (options.size < 0 || options.size > 100)
        throw UsageError(fmt::format(
            "invalid --size {}: the number of warm pods is 0 to 100 (0 empties the pool)",
            options.size));
    const app::run::RunPodShape shape{options.image, options.cpu, options.memory, options.workdir,
                                      options.runtimeClass};
    app::run::validateRunPodShape(shape);
    const auto lifetime = model::parseLifetime(options.lifetime, "--lifetime");
    const auto timeout = app::parseDuration(options.timeout, "--timeout");

    // complete
    const std::string ns = context.namespaceName();

    // run
    if (context.discovery().isServed(app::run::kExtensionsGroup)) {
        if (!options.barePods)
            return runWarmPool(context, options, shape, ns, timeout,
                               static_cast<long>(lifetime.count()));
    } else if (!options.barePods) {
        context.err() << "note: SandboxWarmPool (extensions.agents.x-k8s.io) is not served here; "
                         "keeping bare warm pods instead (the fallback pool)\n";
    }
    const auto status = app::run::reconcilePool(context.client(), ns, shape, options.size,
                                                static_cast<long>(lifetime.count()));
    context.out() << fmt::format("pool in {}: {} warm, {} starting, {} created, {} deleted\n", ns,
                                 status.warm, status.starting, status.created, status.deleted);
    if (status.skipped > 0)
        context.err() << fmt::format(
            "warning: {} pool pod{} in {} left alone: no valid name to delete or claim by\n",
            status.skipped, status.skipped == 1 ? "" : "s", ns);
    if (!options.wait || options.size == 0) return 0;
    app::run::waitForBarePool(context.client(), context.clock(), context.cancelFlag(), ns, shape,
                              options.size, timeout, options.timeout);
    context.out() << fmt::format("pool in {}: {} warm\n", ns, options.size);
    return 0;
}

}  // namespace

void registerSandboxPool(CLI::App& sandbox, CommandHost& host) {
    auto options = std::make_shared<PoolOptions>();
    auto* command =
        sandbox.add_subcommand("pool", "Keep N warm hardened pods ready for 'sandbox run --pool'");
    command->add_option("--size", options->size, "Number of warm pods to keep (0 empties the pool)")
        ->required();
    command->add_option("--image", options->image, "Container image")->capture_default_str();
    command->add_option("--workdir", options->workdir, "Working directory")->capture_default_str();
    command->add_option("--cpu", options->cpu, "CPU limit")->capture_default_str();
    command->add_option("--memory", options->memory, "Memory limit")->capture_default_str();
    command->add_option("--runtime-class", options->runtimeClass,
                        "RuntimeClass of the pods (sandbox run --pool --runtime-class takes them)");
    command
        ->add_option("--lifetime", options->lifetime,
                     "How long a warm pod lives unclaimed (activeDeadlineSeconds)")
        ->capture_default_str();
    command->add_flag("--wait", options->wait, "Wait until the pool's pods are running");
    command->add_option("--timeout", options->timeout, "Longest to wait with --wait")
        ->capture_default_str();
    command->add_flag("--bare-pods", options->barePods,
                      "Keep bare warm pods (the fallback for clusters without the agent-sandbox "
                      "extensions) even where SandboxWarmPool is served");
    command->footer(
        "Examples:\n"
        "  rossoctl sandbox pool -n team1 --size 3 --wait\n"
        "  rossoctl sandbox run -n team1 --pool -- python3 -c 'print(1)'\n"
        "  rossoctl sandbox pool -n team1 --size 0\n\n"
        "Where the agent-sandbox extensions are served, the pool is a SandboxTemplate and a\n"
        "SandboxWarmPool named after the image, cpu, memory and workdir; a run takes one of its\n"
        "Sandboxes with a SandboxClaim (which expires with the run's timeout), and the warm\n"
        "pool refills itself; a warm pod unclaimed after --lifetime ends and is replaced.\n"
        "Elsewhere (the fallback) the pool is bare pods: a run claims one of the same shape\n"
        "atomically, uses it once, deletes it and starts a replacement. Re-run this command to\n"
        "top the pool up.");
    onRun(command, host, options, &runSandboxPool);
}

}  // namespace rossoctl::commands
