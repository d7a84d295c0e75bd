// sandbox run --pool: which pool the run takes from, and a pool's name read as the command.
#include <fmt/format.h>

#include <algorithm>

#include "conventions.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/model/validation.hpp"
#include "sandbox_run_internal.hpp"

namespace rossoctl::commands {

// --pool: the shape's own pool (a SandboxWarmPool named after it, else bare warm pods), or with
// a NAME that SandboxWarmPool, whatever made it; the shape flags not given become its pods'.
void choosePool(app::Context& context, const RunOptions& options, app::run::RunRequest& request) {
    const bool served = context.discovery().isServed(app::run::kExtensionsGroup);
    if (options.pool->empty()) {
        const auto pool =
            app::run::findWarmPool(context.client(), served, request.namespaceName, request.shape);
        request.claimFromWarmPool = pool.has_value();
        request.warmPoolIsOurs = pool && app::run::warmPoolWrittenByRossoctl(*pool, request.shape);
        request.warmPoolAsFound = pool;
        // A pool under the shape's name that `sandbox pool` did not write may run anything:
        // its template must run this shape, every flag as if given.
        if (pool && !request.warmPoolIsOurs)
            request.container =
                app::run::resolveWarmPool(context.client(), request.namespaceName,
                                          app::run::warmPoolName(request.shape), *pool,
                                          request.shape, {true, true, true, true, true})
                    .container;
        return;
    }
    if (!served)
        throw Error(fmt::format(
            "--pool={} takes from a SandboxWarmPool, which this cluster does not serve ({}); "
            "--pool without a name takes rossoctl's bare warm pods",
            *options.pool, app::run::kExtensionsGroup));
    const auto named = app::run::resolveNamedWarmPool(context.client(), request.namespaceName,
                                                      *options.pool, request.shape, options.given);
    request.shape = named.shape;
    request.container = named.container;
    request.warmPool = *options.pool;
    request.claimFromWarmPool = true;
    request.warmPoolIsOurs = named.ours;
    request.warmPoolAsFound = named.pool;
}

// `--pool py echo hi`: without "--" the word after a bare --pool is the command's (pflag's
// reading). When it names a SandboxWarmPool it was meant as its name: said, nothing run. One
// GET, only for a bare --pool with no "--".
void refusePoolNameAsCommand(app::Context& context, const RunOptions& options,
                             const std::string& ns) {
    const auto& typed = options.typed;
    if (!options.pool || !options.pool->empty() || options.command.empty() ||
        std::find(typed.begin(), typed.end(), "--") != typed.end())
        return;
    const std::string& word = options.command.front();
    if (!model::isDnsSubdomain(word)) return;
    // The line as typed, the name joined to --pool and the command after "--".
    std::vector<std::string> line, command;
    size_t next = 1;  // the command's words after the pool's name, met in order
    bool named = false;
    for (size_t i = 0; i < typed.size(); ++i) {
        if (!named && typed[i] == "--pool" && i + 1 < typed.size() && typed[i + 1] == word) {
            line.push_back("--pool=" + word);
            named = true;
            ++i;
        } else if (named && next < options.command.size() && typed[i] == options.command[next]) {
            command.push_back(typed[i]);
            ++next;
        } else {
            line.push_back(typed[i]);
        }
    }
    if (!named || next != options.command.size()) return;  // not the line this reading is about
    if (!context.discovery().isServed(app::run::kExtensionsGroup) ||
        !context.client().getIfExists(app::run::sandboxWarmPools(), ns, word))
        return;
    line.push_back("--");
    if (command.empty()) command.push_back("COMMAND");  // `--pool py` named no command at all
    line.insert(line.end(), command.begin(), command.end());
    throw UsageError(fmt::format(
        "\"{}\" after --pool is read as the command to run, but it names a SandboxWarmPool in "
        "namespace {}; nothing ran: a name follows --pool with \"=\" or when the command comes "
        "after \"--\": {}",
        word, ns, shellLine(line.begin(), line.end())));
}

}  // namespace rossoctl::commands
