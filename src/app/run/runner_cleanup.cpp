// The run's pod deleted (or its claim released) on every way out, or with --keep kept and
// said how to reach.
#include <fmt/format.h>

#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/wait.hpp"
#include "runner_internal.hpp"

namespace rossoctl::app::run {

using std::chrono::milliseconds;

namespace {

// How long cleanup keeps retrying a DELETE the API server cannot take (an outage), so a pod
// is not left behind by a short restart of the server.
constexpr milliseconds kCleanupGrace{30'000};

std::string leftBehind(const RunRequest& request, const RunOutcome& outcome,
                       const std::string& why) {
    return fmt::format(
        "could not delete pod {} ({}); it is left in namespace {}: delete it with \"kubectl -n "
        "{} delete pod {}\" (the next sandbox run in {} also removes it)",
        outcome.pod, why, request.namespaceName, request.namespaceName, outcome.pod,
        request.namespaceName);
}

// The claim's Sandbox and pod go with it (owner references).
void releaseClaimOf(const ClientFactory& cleanupClient, const RunRequest& request,
                    RunOutcome& outcome, RunCallbacks& callbacks) {
    if (request.keep) {
        if (callbacks.note)
            callbacks.note(fmt::format(
                "kept SandboxClaim {} (sandbox and pod {}): reach it with \"rossoctl sandbox exec "
                "{} -n {} -- sh\"; it ends by itself at its shutdownTime (in {}s: --timeout plus "
                "{}s), then \"rossoctl gc -n {}\" deletes it; to delete it sooner: kubectl -n {} "
                "delete sandboxclaim {}",
                outcome.claim, outcome.pod, outcome.pod, request.namespaceName,
                request.timeout.count() / 1000 + kDeadlineMarginSeconds, kDeadlineMarginSeconds,
                request.namespaceName, request.namespaceName, outcome.claim));
        return;
    }
    releaseClaim(*cleanupClient(), request.namespaceName, outcome.claim);
    outcome.deleted = true;
}

}  // namespace

void deletePod(const ClientFactory& cleanupClient, const Clock& clock, const RunRequest& request,
               RunOutcome& outcome, RunCallbacks& callbacks) {
    if (!outcome.claim.empty()) {
        releaseClaimOf(cleanupClient, request, outcome, callbacks);
        return;
    }
    if (outcome.pod.empty()) return;
    if (request.keep) {
        if (callbacks.note)
            for (const auto& line :
                 keptPodLines(request.namespaceName, outcome.pod, request.shape.workdir,
                              outcome.podEndsAt, clock.now()))
                callbacks.note(line);
        return;
    }
    auto client = cleanupClient();
    kube::DeleteOptions options;
    options.gracePeriodSeconds = 0;  // nothing in it is worth waiting for
    try {
        // No cancel flag: cleanup is what Ctrl-C asked for, and it must not be cut short.
        kube::rideOutOutage(clock, kCleanupGrace, nullptr, [&] {
            try {
                client->remove(kube::resources::pods(), request.namespaceName, outcome.pod,
                               options);
            } catch (const kube::ApiError& error) {
                if (!error.isNotFound()) throw;
            }
        });
    } catch (const std::exception& error) {
        throw Error(leftBehind(request, outcome, error.what()), kExitRunFailed);
    }
    outcome.deleted = true;
}

// Runs cleanup on a path that already has an error to report: a failed cleanup is said too.
void deletePodAfterFailure(const ClientFactory& cleanupClient, const Clock& clock,
                           const RunRequest& request, RunOutcome& outcome,
                           RunCallbacks& callbacks) {
    try {
        deletePod(cleanupClient, clock, request, outcome, callbacks);
    } catch (const Error& error) {
        if (callbacks.note) callbacks.note(std::string("error: ") + error.what());
    }
}

}  // namespace rossoctl::app::run
