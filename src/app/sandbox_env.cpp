#include "rossoctl/app/sandbox_env.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/api_error.hpp"

namespace rossoctl::app {

using nlohmann::json;

namespace {

// GET+PUT rounds before giving up on a busy object: 20 writers at once and the controller's
// status writes made one lose 10 rounds in a row (seen in the suite); the budget below bounds it.
constexpr int kMaxAttempts = 40;
// Nor more than this of rounds: each one may wait out the Client's own retries.
constexpr std::chrono::seconds kConflictBudget{30};

// Jittered exponential backoff so concurrent writers spread out instead of colliding again.
std::chrono::milliseconds conflictBackoff(int attempt, Random& random) {
    const int base = std::min(1000, 25 << std::min(attempt, 6));
    const int spread = base - base / 2 + 1;
    return std::chrono::milliseconds(base / 2 + static_cast<int>(random.next() % spread));
}

}  // namespace

json getSandboxOrHint(kube::Client& client, const kube::ResourceRef& sandboxes,
                      const std::string& ns, const std::string& name) {
    auto sandbox = client.getIfExists(sandboxes, ns, name);
    if (!sandbox) {
        throw Error(fmt::format("sandbox \"{}\" not found in namespace \"{}\"; {}", name, ns,
                                sandboxNotFoundAdvice(client, sandboxes, ns, name)));
    }
    return *sandbox;
}

json& sandboxPodSpec(json& sandbox, const std::string& name) {
    json& spec = sandbox["spec"];
    if (!spec.contains("podTemplate") || !spec["podTemplate"].contains("spec"))
        throw Error(fmt::format("sandbox/{} has no spec.podTemplate.spec", name));
    return spec["podTemplate"]["spec"];
}

SandboxEnvEdit editSandboxEnv(kube::Client& client, const Clock& clock, Random& random,
                              const kube::ResourceRef& sandboxes, const std::string& ns,
                              const std::string& name, const std::string& container,
                              const model::EnvChange& change, EnvWrite mode) {
    kube::WriteOptions write;
    write.dryRun = mode == EnvWrite::ServerDryRun;
    const auto giveUp = clock.monotonic() + kConflictBudget;
    for (int attempt = 1;; ++attempt) {
        json sandbox = getSandboxOrHint(client, sandboxes, ns, name);
        json& edited =
            model::selectContainer(sandboxPodSpec(sandbox, name), container, "sandbox/" + name);
        SandboxEnvEdit result;
        result.edit = model::applyEnvChange(edited, change);
        result.container = edited;
        if (!result.edit.changed() || mode == EnvWrite::ClientDryRun) {
            result.sandbox = std::move(sandbox);
            return result;
        }
        try {
            result.sandbox = client.update(sandboxes, ns, sandbox, write);
            return result;
        } catch (const kube::ApiError& error) {
            // A quota conflict was already sent again by the Client: another round here would
            // multiply its 5 tries by these rounds (50 PUTs in 35 s when they were 10).
            if (!error.isConflict() || error.isQuotaConflict()) throw;
            const auto backoff = conflictBackoff(attempt, random);
            if (attempt >= kMaxAttempts || clock.monotonic() + backoff >= giveUp)
                throw Error(fmt::format(
                    "sandbox/{} kept changing under us ({} attempts); nothing was written, try "
                    "again",
                    name, attempt));
            clock.sleepFor(backoff);
        }
    }
}

}  // namespace rossoctl::app
