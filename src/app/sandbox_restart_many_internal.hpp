#pragma once
// What the files of a batch restart (sandbox_restart_many.cpp) share: the batches of sandboxes
// and the RestartMany that plans, waits for and reports them, each part in a file of its own.
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rossoctl/app/sandbox_restart.hpp"
#include "rossoctl/kube/wait.hpp"
#include "sandbox_restart_internal.hpp"

namespace rossoctl::app::restart_detail {

using nlohmann::json;

// Reading what the server listed, for the plan and the waits (sandbox_restart_many_plan.cpp).
const json* member(const json& object, const char* key);
std::string stringAt(const json& object, const char* key, const char* inner);
bool labelIs(const json& pod, const std::string& key, const std::string& value);
std::map<std::string, restart_detail::PodView> byController(const kube::ObjectSet& pods);

struct Member {
    std::string name;
    json sandbox;
    std::string uid;
    std::string labelValue;  // of the batch's selector key
    std::set<std::string> oldUids;
    RestartResult result;
    std::string failure;
    std::chrono::system_clock::time_point deleted;  // events before are about the old pod
    bool replacementCreated = false;
    bool oldPodTerminating = false;
    bool sawOldPodLeave = false;  // seen terminating: its going is when a blocker may show
    bool podDecided = false;
    bool reported = false;

    restart_detail::Replacing replacing() const { return {name, uid, oldUids}; }
};

// Sandboxes whose pods share one LIST and one watch: `key in (their values)`.
struct Batch {
    std::string key;
    std::vector<Member> members;
    json podList;
    bool longSpan = false;  // the wait's current span is not cut for blocker reads
    bool recheck = false;   // an old pod went with no replacement during a long span
};

class RestartMany {
  public:
    RestartMany(const std::vector<kube::Client*>& clients, const Clock& clock,
                const kube::ResourceRef& sandboxes, std::string ns,
                const RestartManyOptions& options)
        : clients_(clients),
          clock_(clock),
          sandboxes_(sandboxes),
          ns_(std::move(ns)),
          options_(options),
          started_(clock.monotonic()) {}

    void run(const std::vector<std::string>& names, std::optional<json> sandboxList);

  private:
    // Planning (sandbox_restart_many_plan.cpp).
    void plan(const std::vector<std::string>& names, std::optional<json> sandboxList,
              std::vector<std::string>& alone, std::vector<Batch>& batches);
    void refuseMissing(const std::vector<std::string>& names,
                       const std::map<std::string, json>& byName);
    void listPods(kube::Client& client, Batch& batch, std::vector<std::string>& alone);
    bool runnable(const json& sandbox) const;
    static bool plainState(Member& member, const std::string& key,
                           const restart_detail::PodView& controlled);
    static bool prepare(Member& member, const std::string& key,
                        const restart_detail::PodView& controlled);
    void deleteOldPod(kube::Client& client, Member& member);
    static void filesMaybeLost(Member& member);

    // The waits for the replacements (sandbox_restart_many_wait.cpp).
    void waitForReplacements(kube::Client& client, Batch& batch);
    bool podsDecided(Batch& batch, const kube::ObjectSet& pods);
    void readBlockers(kube::Client& client, Batch& batch);
    void waitForSandboxesReady(kube::Client& client, Batch& batch);
    static std::string valuesOf(const Batch& batch);

    // Reporting (sandbox_restart_many_report.cpp).
    std::string timedOut(kube::Client& client, const std::string& name,
                         const std::string& waitingFor);
    static std::string interrupted(const std::string& waitingFor);
    void finish(Member& member);
    void fail(Member& member, const std::string& why);
    void report(const std::string& name, std::optional<RestartResult> result,
                const std::string& error, std::vector<std::string> notes = {});

    // Running it all (sandbox_restart_many.cpp).
    static std::vector<std::string> namesOf(const Batch& batch);
    bool guarded(const std::vector<std::string>& names, const std::function<void()>& work);
    void restartOne(kube::Client& client, const std::string& name);
    void step(const std::string& name, const std::string& text) const;
    std::chrono::milliseconds elapsed() const;
    std::chrono::milliseconds remaining() const;
    void riddenOut(const std::function<void()>& attempt) const;

    const std::vector<kube::Client*>& clients_;
    const Clock& clock_;
    const kube::ResourceRef& sandboxes_;
    std::string ns_;
    const RestartManyOptions& options_;
    std::chrono::steady_clock::time_point started_;
    bool readOneByOne_ = false;  // the Sandboxes' Ready read by name, not by one list
    std::mutex reportMutex_;
    std::set<std::string> reported_;
};

}  // namespace rossoctl::app::restart_detail
