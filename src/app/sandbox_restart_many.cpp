// Restarting several sandboxes of one namespace on shared reads: one LIST of the Sandboxes, one
// LIST of their pods (`KEY in (v1,…)` over the selector the controller writes), a DELETE each,
// then one pod watch on that selector and one Sandbox LIST-and-watch for them all. A sandbox in
// any state but the plain one is restarted on its own (restartSandbox), so every rule of a
// single restart holds for it unchanged; each sees only the pods its own selector selects.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "rossoctl/app/parallel.hpp"
#include "rossoctl/app/sandbox_restart.hpp"
#include "sandbox_restart_many_internal.hpp"

namespace rossoctl::app::restart_detail {

using std::chrono::milliseconds;

void RestartMany::run(const std::vector<std::string>& names, std::optional<json> sandboxList) {
    std::vector<std::string> alone;
    std::vector<Batch> batches;
    if (names.size() == 1) {  // its own reads are fewer than the namespace's lists
        alone = names;
    } else if (!guarded(names, [&] { plan(names, std::move(sandboxList), alone, batches); })) {
        return;  // every sandbox was told what stopped it; nothing more is started
    }
    // Every batch's wait and each sandbox that restarts alone, side by side.
    const size_t waits = options_.restart.wait ? batches.size() : 0;
    const size_t jobs = waits + alone.size();
    forEachInParallel(jobs, std::min(clients_.size(), jobs), [&](size_t index, size_t worker) {
        kube::Client& client = *clients_[worker];
        if (index < waits)
            guarded(namesOf(batches[index]), [&] { waitForReplacements(client, batches[index]); });
        else
            restartOne(client, alone[index - waits]);
    });
    for (const auto& name : names)  // never silent, whatever went wrong
        report(name, {}, fmt::format("sandbox/{} was not restarted", name));
}

std::vector<std::string> RestartMany::namesOf(const Batch& batch) {
    std::vector<std::string> names;
    for (const auto& member : batch.members) names.push_back(member.name);
    return names;
}

// Runs `work`; whatever it throws ends the named sandboxes not yet reported with it (a
// worker of forEachInParallel must not throw).
bool RestartMany::guarded(const std::vector<std::string>& names,
                          const std::function<void()>& work) {
    try {
        work();
        return true;
    } catch (const std::exception& error) {
        for (const auto& name : names)
            report(name, {}, fmt::format("sandbox/{}: {}", name, error.what()));
        return false;
    }
}

void RestartMany::restartOne(kube::Client& client, const std::string& name) {
    RestartOptions restart = options_.restart;
    restart.onStep = [&](const std::string& text) { step(name, text); };
    // A restart that fails once its pod is deleted (Ctrl-C included) still says what went.
    std::string lostFiles;
    restart.onFilesLost = [&](const std::string& note) { lostFiles = note; };
    auto notes = [&](const std::string& error) {
        if (lostFiles.empty() || error.find(lostFiles) != std::string::npos)
            return std::vector<std::string>{};
        return std::vector<std::string>{lostFiles};
    };
    try {
        report(name, restartSandbox(client, clock_, sandboxes_, ns_, name, restart), {});
    } catch (const kube::ApiError& error) {
        report(name, {}, fmt::format("sandbox/{}: {}", name, error.what()), notes(error.what()));
    } catch (const std::exception& error) {
        report(name, {}, error.what(), notes(error.what()));
    }
}

void RestartMany::step(const std::string& name, const std::string& text) const {
    if (options_.onStep) options_.onStep(name, text);
}

milliseconds RestartMany::elapsed() const {
    return std::chrono::duration_cast<milliseconds>(clock_.monotonic() - started_);
}

// What is left of the timeout, shared by every sandbox (they all started together); 0 = none.
milliseconds RestartMany::remaining() const {
    if (options_.restart.timeout.count() == 0) return milliseconds{0};
    return std::max(milliseconds{1}, options_.restart.timeout - elapsed());
}

void RestartMany::riddenOut(const std::function<void()>& attempt) const {
    constexpr milliseconds kNoDeadlineBudget{std::chrono::minutes(5)};
    kube::rideOutOutage(clock_,
                        options_.restart.timeout.count() > 0 ? remaining() : kNoDeadlineBudget,
                        options_.restart.cancel, attempt);
}

}  // namespace rossoctl::app::restart_detail

namespace rossoctl::app {

using nlohmann::json;
using restart_detail::RestartMany;

void restartSandboxes(const std::vector<kube::Client*>& clients, const Clock& clock,
                      const kube::ResourceRef& sandboxes, const std::string& ns,
                      const std::vector<std::string>& names, const RestartManyOptions& options,
                      std::optional<json> sandboxList) {
    if (clients.empty() || names.empty()) return;
    RestartMany(clients, clock, sandboxes, ns, options).run(names, std::move(sandboxList));
}

}  // namespace rossoctl::app
