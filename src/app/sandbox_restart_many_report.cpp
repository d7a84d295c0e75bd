// A batch restart's reports: each sandbox ends in one onDone, and what a failed wait says.
#include <fmt/format.h>

#include "rossoctl/app/sandbox_pod.hpp"
#include "sandbox_restart_many_internal.hpp"

namespace rossoctl::app::restart_detail {

// Past the time-out, where the sandbox stands is worth one read, of a second at most.
std::string RestartMany::timedOut(kube::Client& client, const std::string& name,
                                  const std::string& waitingFor) {
    std::string says = "nothing (it could not be read)";
    try {
        kube::Client::DeadlineScope brief(
            client, {clock_.monotonic() + std::chrono::seconds(1), "the time-out's last read"});
        auto sandbox = client.getIfExists(sandboxes_, ns_, name);
        says = sandbox ? describeConditions(*sandbox) : "nothing (it was deleted)";
    } catch (const std::exception&) {
    }
    return fmt::format("timed out after {} waiting for {}; the Sandbox says {}",
                       formatSeconds(options_.restart.timeout), waitingFor, says);
}

std::string RestartMany::interrupted(const std::string& waitingFor) {
    return "restart interrupted while waiting for " + waitingFor +
           "; the old pod is already deleted";
}

void RestartMany::finish(Member& member) {
    member.reported = true;
    if (!member.failure.empty()) {
        // The files its DELETE took are gone whatever failed after it (Ctrl-C, a time-out).
        report(member.name, {}, fmt::format("sandbox/{} {}", member.name, member.failure),
               member.result.notes);
        return;
    }
    if (member.result.took.count() == 0) member.result.took = elapsed();
    report(member.name, member.result, {});
}

void RestartMany::fail(Member& member, const std::string& why) {
    member.failure = why;
    finish(member);
}

// Each sandbox ends in one onDone, the first said; later ones (a fallback) are dropped.
void RestartMany::report(const std::string& name, std::optional<RestartResult> result,
                         const std::string& error, std::vector<std::string> notes) {
    std::lock_guard lock(reportMutex_);
    if (!reported_.insert(name).second) return;
    RestartOutcome outcome;
    outcome.name = name;
    outcome.result = std::move(result);
    outcome.error = error;
    if (!error.empty()) outcome.notes = std::move(notes);
    options_.onDone(outcome);
}

}  // namespace rossoctl::app::restart_detail
