#include "rossoctl/app/sandbox_logs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/app/sandbox_restart.hpp"
#include "rossoctl/kube/wait.hpp"

namespace rossoctl::app {

using nlohmann::json;

namespace {

// While following, the sandbox itself is read again this often (a deleted or suspended
// sandbox gets no new pod, which the pod watch alone would wait for forever).
constexpr std::chrono::seconds kSandboxRecheck{30};
// How long one read of the sandbox rides out an apiserver outage while following.
constexpr std::chrono::minutes kLogsOutageBudget{10};

const json& containerStatus(const json& pod, const std::string& container) {
    static const json none = json::object();
    if (!pod.contains("status") || !pod["status"].is_object()) return none;
    const json& statuses =
        pod["status"].contains("containerStatuses") ? pod["status"]["containerStatuses"] : none;
    if (!statuses.is_array()) return none;
    for (const auto& status : statuses)
        if (status.is_object() && status.value("name", "") == container) return status;
    return none;
}

int restartsOf(const json& pod, const std::string& container) {
    const json& status = containerStatus(pod, container);
    return status.contains("restartCount") && status["restartCount"].is_number_integer()
               ? status["restartCount"].get<int>()
               : 0;
}

// "running", "terminated", "waiting" or "" (no status yet).
std::string stateOf(const json& pod, const std::string& container) {
    const json& status = containerStatus(pod, container);
    if (!status.contains("state") || !status["state"].is_object()) return {};
    for (const char* state : {"running", "terminated", "waiting"})
        if (status["state"].contains(state)) return state;
    return {};
}

std::string resourceVersionOf(const json& object) {
    return object.value("metadata", json::object()).value("resourceVersion", "");
}

std::vector<std::string> containerNames(const json& pod) {
    return podContainerNames(pod);
}

// What the stream does next, once the one before it has ended.
struct Next {
    enum Kind { NewPod, Restarted, Resume, Ended } kind = Ended;
    json pod;
    std::string why;  // for Ended
};

class LogFollower {
  public:
    LogFollower(kube::Client& client, const Clock& clock, const kube::ResourceRef& sandboxes,
                std::string ns, std::string name, const SandboxLogOptions& options)
        : client_(client),
          clock_(clock),
          sandboxes_(sandboxes),
          ns_(std::move(ns)),
          name_(std::move(name)),
          options_(options) {}

    bool run() {
        json sandbox = getSandbox(false).value();
        sandboxUid_ = uidOf(sandbox);
        auto pod = sandboxPod(sandbox, findSandboxPods(client_, sandbox).owned);
        if (!pod) {
            const auto why = sandboxNotRunningReason(sandbox, clock_.now());
            fail(why.empty()
                     ? fmt::format("has no pod; the Sandbox says {}", describeConditions(sandbox))
                     : why + "; it has no pod to read logs from" +
                           resumeAdvice(sandbox, ns_, name_));
        }
        container_ = pickContainer(*pod);
        const bool follow = options_.follow && !options_.previous;
        std::string path = podLogPath(ns_, podName(*pod), container_, follow, options_);
        for (json current = *pod;;) {
            lastUid_ = uidOf(current);
            lastRestarts_ = restartsOf(current, container_);
            lastVersion_ = resourceVersionOf(current);
            cut_ = false;
            if (!stream(path, follow) || cancelled()) return false;
            if (limitReached()) {
                note(fmt::format("output cut at {} bytes (--limit-bytes); the log goes on",
                                 options_.limitBytes));
                return true;
            }
            if (!follow) return true;
            Next next = waitForNext();
            if (cancelled()) return false;
            if (next.kind == Next::Ended) {
                note(next.why + "; no more logs to follow");
                return true;
            }
            const std::string oldUid = lastUid_;
            current = next.pod;
            if (next.kind == Next::NewPod) {
                container_ = containerIn(current);
                note(fmt::format("pod {} was replaced (uid {} → {}); following the new pod",
                                 podName(current), shortUid(oldUid), shortUid(uidOf(current))));
            } else if (next.kind == Next::Restarted) {
                note(fmt::format("container {} in pod {} restarted (restart {}); following it",
                                 container_, podName(current), restartsOf(current, container_)));
            } else {
                note(
                    fmt::format("the log stream of pod {} was cut; continuing from now (lines "
                                "written meanwhile may be missing)",
                                podName(current)));
            }
            SandboxLogOptions from = options_;
            from.sinceSeconds.reset();
            from.tailLines.reset();
            if (next.kind == Next::Resume) from.tailLines = 0;
            path = podLogPath(ns_, podName(current), container_, true, from);
        }
    }

    // A run pod's log (pod/NAME): read, or followed until its stream ends; never replaced.
    bool runOnPod(const json& pod) {
        runPod_ = true;
        container_ = pickContainer(pod);
        const bool follow = options_.follow && !options_.previous;
        if (!stream(podLogPath(ns_, podName(pod), container_, follow, options_), follow) ||
            cancelled())
            return false;
        if (limitReached())
            note(fmt::format("output cut at {} bytes (--limit-bytes); the log goes on",
                             options_.limitBytes));
        return true;
    }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(fmt::format("sandbox/{} {}", name_, what));
    }
    // "sandbox/S pod P has no ...", or for a run pod "pod/P has no ...".
    [[noreturn]] void failAbout(const json& pod, const std::string& what) const {
        if (runPod_) throw Error(fmt::format("pod/{} {}", podName(pod), what));
        fail(fmt::format("pod {} {}", podName(pod), what));
    }
    bool cancelled() const { return options_.cancel && options_.cancel->cancelled(); }
    bool limitReached() const { return options_.limitBytes > 0 && shown_ >= options_.limitBytes; }
    void note(const std::string& text) const {
        if (options_.onNote) options_.onNote(text);
    }
    static std::string podName(const json& pod) {
        return pod.value("metadata", json::object()).value("name", "");
    }

    // nullopt when it is gone (only when `missingOk`).
    std::optional<json> getSandbox(bool missingOk) {
        std::optional<json> sandbox;
        auto read = [&] { sandbox = client_.getIfExists(sandboxes_, ns_, name_); };
        if (missingOk)
            kube::rideOutOutage(clock_, kLogsOutageBudget, options_.cancel, read);
        else
            read();
        if (!sandbox && !missingOk) {
            fail(fmt::format("not found in namespace {}; {}", ns_,
                             sandboxNotFoundAdvice(client_, sandboxes_, ns_, name_)));
        }
        return sandbox;
    }

    std::string pickContainer(const json& pod) const {
        const auto names = containerNames(pod);
        if (!options_.container.empty()) {
            if (const auto missing = missingContainer(pod, options_.container, /*initToo=*/true);
                !missing.empty())
                failAbout(pod, missing);
            return options_.container;
        }
        if (names.empty()) failAbout(pod, "has no containers");
        if (names.size() > 1)
            note(fmt::format("showing container \"{}\" of {} (choose with -c)", names.front(),
                             fmt::join(names, ", ")));
        return names.front();
    }

    // False when Ctrl-C ended it. While following, a stream that cannot start (the container is
    // not running yet, the pod just went) or is lost to an outage ends like a closed one.
    bool stream(const std::string& path, bool follow) {
        bool gotBytes = false;
        // Only a follow may stay open as long as the server keeps it so.
        const auto requested = client_.config().requestTimeout;
        const std::chrono::milliseconds bound = follow ? std::chrono::milliseconds{0}
                                                : requested.count() > 0 ? requested
                                                                        : kOneShotLogTimeout;
        try {
            client_.streamGet(
                path,
                [&](std::string_view bytes) {
                    gotBytes = true;
                    // The cap holds on this side too: a server may ignore limitBytes.
                    if (options_.limitBytes > 0)
                        bytes = bytes.substr(0, static_cast<size_t>(std::min<int64_t>(
                                                    static_cast<int64_t>(bytes.size()),
                                                    options_.limitBytes - shown_)));
                    shown_ += static_cast<int64_t>(bytes.size());
                    if (!bytes.empty()) options_.onLog(bytes);
                    return !cancelled() && !limitReached();
                },
                bound);
        } catch (const kube::TransportError& error) {
            if (error.kind() == kube::TransportError::Kind::Cancelled || cancelled()) return false;
            if (!follow && error.kind() == kube::TransportError::Kind::Timeout)
                fail(fmt::format(
                    "log did not end within {}s: the server kept the read open; follow it with "
                    "-f, or give it longer with --request-timeout",
                    std::chrono::duration_cast<std::chrono::seconds>(bound).count()));
            if (!follow) throw;
            cut_ = true;
        } catch (const kube::ApiError& error) {
            const bool passing =
                error.code() == 400 || error.code() == 404 || kube::isOutage(error);
            if (!follow || !passing) throw;
            cut_ = kube::isOutage(error);
        }
        cut_ = cut_ || gotBytes;
        return !cancelled();
    }

    Next waitForNext() {
        for (;;) {
            auto sandbox = getSandbox(true);
            if (!sandbox) return {Next::Ended, {}, fmt::format("sandbox/{} was deleted", name_)};
            if (uidOf(*sandbox) != sandboxUid_)
                return {Next::Ended,
                        {},
                        fmt::format("sandbox/{} was deleted and created again", name_)};
            const auto why = sandboxNotRunningReason(*sandbox, clock_.now());
            if (!why.empty() && why.rfind("has finished", 0) != 0)
                return {Next::Ended, {}, fmt::format("sandbox/{} {}", name_, why)};
            const PodSelector selector = sandboxPodSelector(*sandbox);
            kube::WaitOptions wait;
            wait.labelSelector = selector.labelSelector;
            wait.fieldSelector = selector.fieldSelector;
            wait.timeout = kSandboxRecheck;
            wait.cancel = options_.cancel;
            Next next;
            auto outcome =
                kube::waitForSet(client_, clock_, kube::resources::pods(), ns_, wait,
                                 [&](const kube::ObjectSet& set) { return choose(set, next); });
            if (outcome.outcome == kube::WaitOutcome::Satisfied) return next;
            if (outcome.outcome == kube::WaitOutcome::Cancelled) return {};
        }
    }

    // The container followed so far, or the first one of a new pod whose template renamed it.
    std::string containerIn(const json& pod) const {
        const auto names = containerNames(pod);
        if (names.empty() || std::find(names.begin(), names.end(), container_) != names.end())
            return container_;
        return names.front();
    }

    // The pod (or container instance) to read next, if the set has one.
    bool choose(const kube::ObjectSet& set, Next& next) const {
        for (const auto& [podName, pod] : set) {
            if (!controlledBy(pod, sandboxUid_) || terminating(pod)) continue;
            const std::string state = stateOf(pod, containerIn(pod));
            const bool started = state == "running" || state == "terminated";
            if (uidOf(pod) != lastUid_) {
                // The controller makes a new pod under the Sandbox's name; a pod of another
                // name with the Sandbox as controller is someone else's (review 49 finding 1).
                if (!started || podName != name_) continue;
                next = {Next::NewPod, pod, {}};
                return true;
            }
            if (restartsOf(pod, container_) != lastRestarts_) {
                if (!started) continue;
                next = {Next::Restarted, pod, {}};
                return true;
            }
            if (podFinished(pod) && state != "running") {
                next = {Next::Ended, pod,
                        fmt::format("pod {} ended (phase {}) and is not recreated", podName,
                                    pod.value("status", json::object()).value("phase", ""))};
                return true;
            }
            // Still running: a cut stream goes on; a stream that ended quietly waits for the
            // pod's status to move (the container's end is reported just after its stream).
            if (state == "running" && (cut_ || resourceVersionOf(pod) != lastVersion_)) {
                next = {Next::Resume, pod, {}};
                return true;
            }
        }
        return false;
    }

    kube::Client& client_;
    const Clock& clock_;
    const kube::ResourceRef& sandboxes_;
    std::string ns_;
    std::string name_;
    const SandboxLogOptions& options_;
    std::string sandboxUid_;
    std::string container_;
    std::string lastUid_;
    int lastRestarts_ = 0;
    std::string lastVersion_;
    bool cut_ = false;
    int64_t shown_ = 0;  // bytes handed to onLog, across every stream
    bool runPod_ = false;
};

}  // namespace

std::string podLogPath(const std::string& ns, const std::string& pod, const std::string& container,
                       bool follow, const SandboxLogOptions& options) {
    std::string path = kube::objectPath(kube::resources::pods(), ns, pod, "log");
    path.append("?container=").append(kube::urlEncode(container));
    if (follow) path.append("&follow=true");
    if (options.previous) path.append("&previous=true");
    if (options.sinceSeconds)
        path.append("&sinceSeconds=").append(std::to_string(*options.sinceSeconds));
    if (options.tailLines) path.append("&tailLines=").append(std::to_string(*options.tailLines));
    if (options.timestamps) path.append("&timestamps=true");
    if (options.limitBytes > 0)
        path.append("&limitBytes=").append(std::to_string(options.limitBytes));
    return path;
}

bool streamSandboxLogs(kube::Client& client, const Clock& clock, const kube::ResourceRef& sandboxes,
                       const std::string& ns, const std::string& name,
                       const SandboxLogOptions& options) {
    return LogFollower(client, clock, sandboxes, ns, name, options).run();
}

bool streamPodLogs(kube::Client& client, const Clock& clock, const std::string& ns,
                   const nlohmann::json& pod, const SandboxLogOptions& options) {
    static const kube::ResourceRef noSandboxes;  // a run pod has no sandbox to read again
    const std::string name = pod.value("metadata", json::object()).value("name", "");
    return LogFollower(client, clock, noSandboxes, ns, name, options).runOnPod(pod);
}

}  // namespace rossoctl::app
