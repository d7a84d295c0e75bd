// sandbox cp with '-' on one side: one file of the pod to stdout, or stdin to one file in it.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "copy_internal.hpp"
#include "rossoctl/errors.hpp"

namespace rossoctl::app::copy {
namespace {

constexpr size_t kMaxStderr = 4096;
constexpr const char* kCatOutScript = "cd \"$1\" && exec cat \"$2\"";
constexpr const char* kCatInScript = "cd \"$1\" && exec cat > \"$2\"";

void keepStderr(std::string& text, std::string_view bytes) {
    text.append(bytes.substr(0, kMaxStderr - std::min(kMaxStderr, text.size())));
}

struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
};

}  // namespace

CopyStats copyFileToSink(kube::Client& client, const PodTarget& target,
                         const std::string& remotePath, const ExtractLimits& limits,
                         const std::function<void(std::string_view)>& sink) {
    // Staged whole before the sink sees a byte: a pipe reader never gets a cut file.
    std::unique_ptr<std::FILE, FileCloser> staged(std::tmpfile());
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
                     kube::ExecIo input) {
    std::string errors;
    input.onStdout = [](std::string_view) {};
    input.onStderr = [&](std::string_view bytes) { keepStderr(errors, bytes); };
    const auto result = kube::execInPod(
        client,
        execRequest(
            client.clock(), target,
            shCommand(kCatInScript, {remoteParent(remoteTarget), remoteBase(remoteTarget)})),
        input);
    checkExit(result, errors, "cat > " + remoteBase(remoteTarget));
}

}  // namespace rossoctl::app::copy
