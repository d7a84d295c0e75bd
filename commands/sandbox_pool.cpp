// rossoctl sandbox pool [NAME]: keep N warm hardened sandboxes that `sandbox run --pool` takes,
// so a run skips pod start-up. Where the agent-sandbox extensions are served: a SandboxTemplate
// and SandboxWarmPool (named NAME, else after the shape); elsewhere (the fallback) bare pods of
// rossoctl's own.
#include <fmt/format.h>

#include "registry.hpp"
#include "rossoctl/app/run/named_pool.hpp"
#include "rossoctl/app/run/pool_wait.hpp"
#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/model/validation.hpp"

namespace rossoctl::commands {
namespace {

using nlohmann::json;

struct PoolOptions {
    std::string name;  // empty: named after the shape, as before NAME existed
    int size = -1;
    bool sizeGiven = false;
    std::string image = app::run::kDefaultRunImage;
    std::string workdir = "/workspace";
    std::string cpu = "500m";
    std::string memory = "512Mi";
    std::string runtimeClass;
    std::string lifetime = "1h";
    bool wait = false;
    std::string timeout = "2m";
    bool barePods = false;
    app::run::ShapeFlags given;  // the shape flags on the command line
};

int runWarmPool(app::Context& context, const PoolOptions& options, app::run::RunPodShape shape,
                const std::string& ns, std::chrono::milliseconds timeout, long lifetimeSeconds) {
    const std::string name = options.name.empty() ? app::run::warmPoolName(shape) : options.name;
    // The shape's own pool is named after every flag: one of that name keeps all of them.
    const app::run::ShapeFlags given =
        options.name.empty() ? app::run::ShapeFlags{true, true, true, true, true} : options.given;
    const auto named = app::run::reconcileNamedWarmPool(context.client(), ns, name, shape, given,
                                                        options.size, lifetimeSeconds);
    if (!named) {
        context.out() << fmt::format("SandboxWarmPool {} in {}: not there, nothing to delete\n",
                                     name, ns);
        return 0;
    }
    const app::run::WarmPoolStatus status = *named;
    if (options.size == 0) {
        context.out() << fmt::format("SandboxWarmPool {} in {}: deleted (with its template)\n",
                                     name, ns);
        return 0;
    }
    context.out() << fmt::format("SandboxWarmPool {} in {}: {} wanted, {} ready\n", name, ns,
                                 options.size, status.ready);
    if (!options.wait) return 0;
    app::run::waitForWarmPool(context.client(), context.clock(), context.cancelFlag(), ns, name,
                              options.size, timeout, options.timeout);
    context.out() << fmt::format("SandboxWarmPool {} in {}: {} ready\n", name, ns, options.size);
    return 0;
}

int runSandboxPool(app::Context& context, PoolOptions& options) {
    // validate
    if (!options.name.empty()) {
        model::validateDnsSubdomain(options.name, "pool name");
        if (options.barePods)
            throw UsageError(
                "a pool of --bare-pods has no name (its pods are found by their shape): drop "
                "NAME or --bare-pods");
    }
    if (!options.sizeGiven)
        throw UsageError(
            "--size is required: the number of warm pods to keep (0 empties the pool); to list "
            "the pools: rossoctl sandbox pool list");
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
    } else if (!options.name.empty()) {
        throw Error(fmt::format(
            "a named pool is a SandboxWarmPool, which this cluster does not serve "
            "(extensions.agents.x-k8s.io); drop NAME to keep bare warm pods of rossoctl's own"));
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
    auto* command = sandbox.add_subcommand(
        "pool", "Keep N warm hardened pods ready for 'sandbox run --pool'; 'pool list' lists them");
    command->add_option("name", options->name,
                        "The pool's name (its SandboxWarmPool and SandboxTemplate); without it, "
                        "one named after the image, cpu, memory and workdir");
    noteGiven(command->add_option("--size", options->size,
                                  "Number of warm pods to keep, required (0 empties the pool)"),
              options->sizeGiven);
    auto& given = options->given;
    noteGiven(
        command->add_option("--image", options->image, "Container image")->capture_default_str(),
        given.image);
    noteGiven(command->add_option("--workdir", options->workdir, "Working directory")
                  ->capture_default_str(),
              given.workdir);
    noteGiven(command->add_option("--cpu", options->cpu, "CPU limit")->capture_default_str(),
              given.cpu);
    noteGiven(
        command->add_option("--memory", options->memory, "Memory limit")->capture_default_str(),
        given.memory);
    noteGiven(command->add_option(
                  "--runtime-class", options->runtimeClass,
                  "RuntimeClass of the pods (sandbox run --pool --runtime-class takes them)"),
              given.runtimeClass);
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
        "  rossoctl sandbox pool py -n team1 --size 2 --image python:3.12-slim --memory 1Gi\n"
        "  rossoctl sandbox run -n team1 --pool=py -- python3 -c 'print(1)'\n"
        "  rossoctl sandbox pool list -n team1\n"
        "  rossoctl sandbox pool -n team1 --size 0\n"
        "  rossoctl sandbox pool delete py -n team1\n\n"
        "Where the agent-sandbox extensions are served, the pool is a SandboxTemplate and a\n"
        "SandboxWarmPool, both named NAME or, without one, after the image, cpu, memory and\n"
        "workdir; a run takes one of its Sandboxes with a SandboxClaim (which expires with the\n"
        "run's timeout), and the warm pool refills itself; a warm pod unclaimed after --lifetime\n"
        "ends and is replaced. A named pool keeps its shape: re-run with NAME and --size to\n"
        "resize it (the shape flags not given are its own; one given that differs is an error,\n"
        "--size 0 empties it, as \"sandbox pool delete NAME\" does). A pool or template of that\n"
        "name that rossoctl did not make is left alone. Elsewhere (the fallback) the pool is\n"
        "bare pods, which have no name: a run claims one of the same shape atomically, uses it\n"
        "once, deletes it and starts a replacement. Re-run this command to top the pool up.\n"
        "Exit codes: 0 done, 1 API error or a pool that cannot be changed or fill in --timeout,\n"
        "2 invalid arguments (nothing sent).");
    auto* list = registerSandboxPoolList(*command, host);
    auto* remove = registerSandboxPoolDelete(*command, host);
    command->callback([&host, options, list, remove] {
        // `sandbox pool list` or `sandbox pool delete` ran instead
        if (list->parsed() || remove->parsed()) return;
        host.setExitCode(app::runCommand(
            host.context(), [&](app::Context& c) { return runSandboxPool(c, *options); }));
    });
}

}  // namespace rossoctl::commands
