// sandbox cp with '-' on one side: one file of the pod to stdout, or stdin to one file in it.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "copy_internal.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/descriptor_read.hpp"
#include "rossoctl/kube/transport.hpp"

namespace rossoctl::app::copy {
namespace {

constexpr size_t kMaxStreamStderr = 4096;
constexpr const char* kCatOutScript = "cd \"$1\" && exec cat \"$2\"";
// Told the length; see writeExactlyScript for why it is neither `exec cat > F` nor an EOF.
std::string headInScript() {
    return directoryMustExist("\"$1\"") + "cd \"$1\" || exit 1; " +
           writeExactlyScript("\"$2\"", "\"$3\"");
}

void keepStderr(std::string& text, std::string_view bytes) {
    text.append(bytes.substr(0, kMaxStreamStderr - std::min(kMaxStreamStderr, text.size())));
}

// What stdin has now: the copy's deadline or Ctrl-C ends the wait. 0 only at the end of input.
size_t readStdinSlice(int descriptor, char* out, size_t size, const Clock& clock,
                      const PodTarget& target, const StdinLimits& limits) {
    return kube::readWhenReady(descriptor, out, size, std::chrono::milliseconds(200), [&] {
        if (limits.cancel && limits.cancel->cancelled())
            throw kube::TransportError(kube::TransportError::Kind::Cancelled, "interrupted");
        if (target.deadline && clock.monotonic() >= *target.deadline)
            throw Error(
                "stdin did not end within the copy's --timeout; nothing was copied (raise it "
                "with --timeout)");
        return false;
    });
}

struct StreamFileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
};

}  // namespace

CopyStats copyFileToSink(kube::Client& client, const PodTarget& target,
                         const std::string& remotePath, const ExtractLimits& limits,
                         const std::function<void(std::string_view)>& sink) {
    // Staged whole before the sink sees a byte: a pipe reader never gets a cut file.
    std::unique_ptr<std::FILE, StreamFileCloser> staged(std::tmpfile());
    if (!staged) throw Error(fmt::format("cannot create a temporary file: {}", strerror(errno)));
    const uint64_t cap = std::min(limits.maxFileBytes, limits.maxBytes);
    const std::string flag = limits.maxFileBytes <= limits.maxBytes ? "file-bytes" : "bytes";
    uint64_t size = 0;
    std::string errors;
    kube::ExecIo io;
    io.onStdout = [&](std::string_view bytes) {
        if ((size += bytes.size()) > cap)
            throw Error(
                fmt::format("{} is over the limit of {} bytes; nothing was written; "
                            "raise it with {}{}",
                            remoteBase(remotePath), cap, limits.flagPrefix, flag));
        if (std::fwrite(bytes.data(), 1, bytes.size(), staged.get()) != bytes.size())
            throw Error(fmt::format("cannot stage the copy: {}", strerror(errno)));
    };
    io.onStderr = [&](std::string_view bytes) { keepStderr(errors, bytes); };
    const auto result = kube::execInPod(
        client,
        execRequest(client.clock(), target,
                    shCommand(kCatOutScript, {remoteParent(remotePath), remoteBase(remotePath)})),
        io);
    checkExit(result, errors, "cat of " + remoteBase(remotePath));
    std::rewind(staged.get());
    std::vector<char> buffer(64 * 1024);
    for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), staged.get())) > 0;)
        sink(std::string_view(buffer.data(), n));
    CopyStats stats;
    stats.files = 1;
    stats.bytes = size;
    return stats;
}

void copySourceToPod(kube::Client& client, const PodTarget& target, const std::string& remoteTarget,
                     kube::ExecIo input, const StdinLimits& limits) {
    // Staged whole first: the command in the pod is told how many bytes to read.
    std::unique_ptr<std::FILE, StreamFileCloser> staged(std::tmpfile());
    if (!staged) throw Error(fmt::format("cannot create a temporary file: {}", strerror(errno)));
    std::vector<char> buffer(64 * 1024);
    uint64_t size = 0;
    for (;;) {
        const size_t n = input.stdinDescriptor >= 0
                             ? readStdinSlice(input.stdinDescriptor, buffer.data(), buffer.size(),
                                              client.clock(), target, limits)
                             : input.readStdin(buffer.data(), buffer.size());
        if (n == 0) break;
        if (n > limits.maxBytes - size)
            throw Error(
                fmt::format("stdin is over the limit of {} bytes; nothing was copied; "
                            "raise it with --max-bytes",
                            limits.maxBytes));
        if (std::fwrite(buffer.data(), 1, n, staged.get()) != n)
            throw Error(fmt::format("cannot stage stdin: {}", strerror(errno)));
        size += n;
    }
    std::rewind(staged.get());
    kube::ExecIo io;
    io.halfCloseStdin = false;
    io.readStdin = [&](char* out, size_t capacity) {
        return std::fread(out, 1, capacity, staged.get());
    };
    std::string errors;
    io.onStdout = [](std::string_view) {};
    io.onStderr = [&](std::string_view bytes) { keepStderr(errors, bytes); };
    const auto result = kube::execInPod(
        client,
        execRequest(client.clock(), target,
                    shCommand(headInScript(), {remoteParent(remoteTarget), remoteBase(remoteTarget),
                                               std::to_string(size)})),
        io);
    checkWriteExit(result, errors,
                   "head -c " + std::to_string(size) + " > " + remoteBase(remoteTarget),
                   remoteParent(remoteTarget));
}

}  // namespace rossoctl::app::copy
