#pragma once
// pods/exec over WebSocket (v5.channel.k8s.io, falling back to v4): stdin, stdout, stderr
// streamed, exit code read from the status channel.
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "rossoctl/kube/client.hpp"

namespace rossoctl::kube {

struct ExecRequest {
    std::string namespaceName;
    std::string pod;
    std::string container;  // empty: the pod's only container
    std::vector<std::string> command;
    bool tty = false;
    std::chrono::milliseconds timeout{0};  // whole exec; 0 = none
};

struct ExecIo {
    // Fills buffer with stdin bytes; returns 0 at end of input. Unset: no stdin.
    std::function<size_t(char* buffer, size_t size)> readStdin;
    // Alternatively a descriptor streamed as stdin (a terminal, a pipe). It is polled, so the
    // exec returns once the command exits even while the descriptor stays open. -1: unused.
    int stdinDescriptor = -1;
    // false: stdin is never half-closed; the command reads the length it was told (head -c N)
    // and exits. containerd's CRI can drop bytes still in flight when stdin closes
    // (containerd#12734), so a command that must get every byte is not sent an end of input.
    bool halfCloseStdin = true;
    std::function<void(std::string_view)> onStdout;
    std::function<void(std::string_view)> onStderr;
};

struct ExecResult {
    int exitCode = 0;
    bool timedOut = false;
    std::string protocol;  // v5.channel.k8s.io or v4.channel.k8s.io
    std::string message;   // the Status message when the command failed to start
};

// Runs a command in a container. Throws ApiError when the upgrade is refused (pod not
// found, forbidden, container not running) and TransportError when the stream breaks.
ExecResult execInPod(Client& client, const ExecRequest& request, ExecIo& io);

// Runs a command and keeps what it prints, within a byte cap and a time-out. The pod decides
// what it prints, so a capture that went past either is cut: its texts are a prefix of what
// the command would have printed, and the caller must treat it as an error or "unproven",
// never parse it.
struct CaptureLimits {
    size_t maxBytes = 64 * 1024;           // stdout and stderr, each
    std::chrono::milliseconds timeout{0};  // the whole exec; must be set, > 0
};

enum class CaptureEnd {
    Complete,   // the command exited; the texts are all it printed
    Truncated,  // a stream went over maxBytes: the exec was stopped there
    TimedOut,   // the time-out passed first
};

struct CapturedExec {
    CaptureEnd end = CaptureEnd::Complete;
    ExecResult result;  // exitCode means something only when end is Complete
    std::string stdoutText;
    std::string stderrText;
    CaptureLimits limits;  // what it was held to
    bool complete() const { return end == CaptureEnd::Complete; }
    // Why it is cut, for a message: "the command printed more than 4096 bytes (cut there)".
    std::string whyCut() const;
};

// request.timeout is replaced by limits.timeout. Throws std::invalid_argument when the
// time-out is 0 (a capture that could run forever is a bug of the caller).
CapturedExec execCapture(Client& client, const ExecRequest& request, const CaptureLimits& limits,
                         const std::string& stdinText = {}, bool halfCloseStdin = true);

}  // namespace rossoctl::kube
