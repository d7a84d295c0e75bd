#pragma once
// A Sandbox's pod logs (GET pods/NAME/log), streamed as they arrive, never held whole. With
// follow, across the pod being replaced (`sandbox restart`, a crash, a cut connection): the
// sandbox's pods are watched and the stream goes on with the new pod or container.
#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::app {

// A one-shot read (no follow) ends within this unless --request-timeout sets another bound: a
// server that keeps the stream open must not hold it forever.
inline constexpr std::chrono::minutes kOneShotLogTimeout{5};
// A one-shot read shows at most this unless --limit-bytes says otherwise: more than the kubelet
// keeps of a container's log (5 files of 10 MiB by default), and a server streaming forever
// fills no disk (24.5 GB in 20 s without it).
inline constexpr int64_t kDefaultLogLimitBytes = 64LL << 20;

struct SandboxLogOptions {
    std::string container;  // empty: the pod's first container
    bool follow = false;
    bool previous = false;
    bool timestamps = false;
    std::optional<int64_t> sinceSeconds;  // the first pod only: a later one is read whole
    std::optional<int64_t> tailLines;
    // Bytes shown in all, whatever the server sends (it is also asked with limitBytes); 0 = no
    // cap. A note says when the output was cut there.
    int64_t limitBytes = 0;
    const kube::CancelFlag* cancel = nullptr;
    // The pod's bytes, exactly as they came (the caller makes them safe for a terminal).
    std::function<void(std::string_view bytes)> onLog;
    // One line for stderr: the pod was replaced, the stream was cut, the sandbox went away.
    std::function<void(const std::string& note)> onNote;
};

// "/api/v1/namespaces/NS/pods/POD/log?container=C&follow=true...", from the options' fields.
std::string podLogPath(const std::string& ns, const std::string& pod, const std::string& container,
                       bool follow, const SandboxLogOptions& options);

// Returns false when Ctrl-C ended it. Throws Error for a missing sandbox, one without a pod and
// a container the pod does not have, and a one-shot read that outlives its bound; ApiError as the
// server sends it (403, a container that is not running without follow). With follow it returns
// when there is nothing left to follow: the sandbox was deleted or suspended, or its pod ended and
// is not recreated.
bool streamSandboxLogs(kube::Client& client, const Clock& clock, const kube::ResourceRef& sandboxes,
                       const std::string& ns, const std::string& name,
                       const SandboxLogOptions& options);

// The log of one pod already read (a pod `sandbox run --keep` kept): with follow, until its
// stream ends; no other pod follows it. Throws and returns as streamSandboxLogs.
bool streamPodLogs(kube::Client& client, const Clock& clock, const std::string& ns,
                   const nlohmann::json& pod, const SandboxLogOptions& options);

}  // namespace rossoctl::app
