// The command in the run's pod: the upload of its files and env, the command with its streams
// passed through live, and the collection of its artifacts.
#include <fmt/format.h>

#include <algorithm>

#include "rossoctl/app/run/tar.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "runner_internal.hpp"

namespace rossoctl::app::run {

using std::chrono::milliseconds;

namespace {

// 60s, 1500ms: a duration as a flag takes it.
std::string durationText(milliseconds duration) {
    return duration.count() % 1000 == 0 ? fmt::format("{}s", duration.count() / 1000)
                                        : fmt::format("{}ms", duration.count());
}

}  // namespace

// --env values travel inside the uploaded tar (a 0600 file the wrapper sources and
// removes), never in the exec URL that audit logs, -v 6 and the pod's process list show.
void Run::upload() {
    if (request_.env.empty() && !request_.stdinData && request_.uploadTar.empty()) return;
    std::string archive;
    TarWriter writer(archive, 0);
    if (!request_.env.empty()) writer.addFile(kEnvFileName, envFileContent(request_.env), 0600);
    // --stdin's bytes as a file the wrapper opens as the code's stdin (see
    // kStdinFileName): the exec's own stdin may lose its last bytes when it closes.
    if (request_.stdinData) writer.addFile(kStdinFileName, *request_.stdinData, 0600);
    archive += request_.uploadTar;  // entries without an end: tar archives concatenate
    const uint32_t high = client_.random().next(), low = client_.random().next();
    upload_ = endUpload(writer, archive, uploadEndMarker(high, low));
    if (!request_.env.empty()) upload_.ownFiles.push_back(kEnvFileName);
    if (request_.stdinData) upload_.ownFiles.push_back(kStdinFileName);
    // The command's stdin carries the files: one exec session uploads and runs (issue 31).
    if (archive.size() <= kUploadWithCommandMaxBytes) {
        uploadWithCommand_ = std::move(archive);
        return;
    }
    auto request = execRequest(uploadCommandLine(request_.shape.workdir, upload_));
    auto captured = kube::execCapture(client_, request, {4096, request_.startTimeout}, archive,
                                      /*halfCloseStdin=*/false);
    if (!captured.complete())
        throw Error(
            fmt::format("uploading files into pod {} failed: {}", outcome_.pod, captured.whyCut()));
    if (captured.result.exitCode != 0 || !captured.result.message.empty())
        throw Error(fmt::format("uploading files into pod {} failed (tar exit {}): {}",
                                outcome_.pod, captured.result.exitCode,
                                firstLine(captured.stderrText + captured.result.message)));
}

void Run::runCommand() {
    const bool upload = !uploadWithCommand_.empty();
    const bool stdinFile = request_.stdinData.has_value(), envFile = !request_.env.empty();
    auto request = execRequest(
        upload ? uploadAndRunCommandLine(request_.shape.workdir, request_.command, upload_,
                                         stdinFile, envFile)
               : runCommandLine(request_.shape.workdir, request_.command, stdinFile, envFile));
    request.timeout = request_.timeout;
    kube::ExecIo io;
    io.onStdout = callbacks_.onStdout;
    io.onStderr = callbacks_.onStderr;
    size_t offset = 0;
    if (upload) {
        const std::string& data = uploadWithCommand_;
        io.halfCloseStdin = false;  // the wrapper reads the archive's length
        io.readStdin = [&](char* buffer, size_t size) {
            const size_t n = std::min(size, data.size() - offset);
            std::copy_n(data.data() + offset, n, buffer);
            offset += n;
            return n;
        };
    }
    kube::ExecResult result;
    try {
        result = kube::execInPod(client_, request, io);
    } catch (const OutputCapReached& cap) {
        // The connection is closed on the way out; the command may still be writing.
        outcome_.exitCode = kExitRunFailed;
        outcome_.ended = {kEndedOutputCapReached,
                          fmt::format("its {} reached --output-max-bytes and the command was "
                                      "stopped",
                                      cap.stream),
                          ""};
        stopLeftovers();
        return;
    }
    outcome_.timedOut = result.timedOut;
    outcome_.exitCode = result.timedOut ? kExitTimedOut : result.exitCode;
    if (result.timedOut)
        outcome_.ended = {kEndedTimedOut,
                          "the command ran longer than --timeout " + durationText(request_.timeout),
                          ""};
    if (outcome_.exitCode == kExitKilled) outcome_.ended = whyKilled();
    // The exec's end stops nothing in the container: what the code left running would go
    // on (writing its files, with --keep until the pod's deadline).
    if (outcome_.timedOut || outcome_.exitCode == kExitKilled) stopLeftovers();
    if (!result.timedOut && !result.message.empty())
        throw Error(fmt::format("the command could not be started in pod {}: {}{}", outcome_.pod,
                                firstLine(result.message),
                                missingTool(result.message) ? imageToolsHint() : ""));
}

// Bounded like the command: what is left of --timeout plus a short margin, whatever the
// pod streams; the extractor's caps bound the bytes. A command that timed out or was
// killed still leaves what it wrote (runCommand stopped what it left running), marked
// partial; a collection that fails keeps what arrived and says why instead of throwing,
// so the code's result is still reported.
void Run::collect(milliseconds ranFor) {
    if (!request_.collect) return;
    std::string cut;
    if (outcome_.ended.reason == kEndedOutputCapReached)
        cut =
            "the command was stopped when its output reached --output-max-bytes; these are "
            "the files it had written by then";
    else if (outcome_.timedOut)
        cut =
            "the command ran longer than --timeout and was killed; these are the files it "
            "had written by then";
    else if (outcome_.exitCode == kExitKilled)
        cut =
            "the command was killed (exit 137) before it finished; these are the files it "
            "had written by then";
    ArtifactCollector collector(request_.artifactsDir, request_.artifactLimits);
    CappedText errors = CappedText::withLimit(4096);
    kube::ExecIo io;
    io.onStdout = [&](std::string_view bytes) { collector.feed(bytes); };
    io.onStderr = [&](std::string_view bytes) { errors.append(bytes); };
    auto request = execRequest(collectCommandLine(request_.shape.workdir));
    request.timeout = std::max(request_.timeout - ranFor, milliseconds(0)) + kCollectMargin;
    try {
        const auto result = kube::execInPod(client_, request, io);
        if (result.timedOut)
            throw Error(fmt::format("collecting them from pod {} took longer than {}s",
                                    outcome_.pod, ceilSeconds(request.timeout)));
        if (result.exitCode != 0 || !result.message.empty())
            throw Error(fmt::format("collecting them from pod {} failed (tar exit {}): {}{}",
                                    outcome_.pod, result.exitCode,
                                    firstLine(errors.text + result.message),
                                    result.exitCode == 127 ? imageToolsHint() : ""));
        collector.finish();
    } catch (const std::exception& error) {
        collector.abandon();
        if (cancel_ && cancel_->cancelled()) {
            outcome_.artifacts = collector.files();  // what arrived before Ctrl-C stays
            throw Cancelled{};
        }
        outcome_.artifacts = collector.files();
        outcome_.rejected = collector.rejected();
        outcome_.collectFailed = true;
        outcome_.artifactsPartial =
            (cut.empty() ? "" : cut + "; ") + ui::escapeErrorText(error.what());
        return;
    }
    outcome_.artifacts = collector.files();
    outcome_.rejected = collector.rejected();
    outcome_.artifactsPartial = cut;
}

// Best effort: a pod that cannot take the exec is found out by the collection after it.
void Run::stopLeftovers() {
    auto request = execRequest(stopCommandLine());
    try {
        kube::execCapture(client_, request, {4096, std::chrono::seconds(10)});
    } catch (const std::exception&) {
        if (cancel_ && cancel_->cancelled()) throw Cancelled{};
    }
}

kube::ExecRequest Run::execRequest(std::vector<std::string> command) const {
    kube::ExecRequest request;
    request.namespaceName = request_.namespaceName;
    request.pod = outcome_.pod;
    request.container = request_.container;
    request.command = std::move(command);
    return request;
}

// The pod wrote it: one line, escaped, before it goes into a message for the terminal.
std::string Run::firstLine(const std::string& text) {
    return ui::escapeForTerminal(text.substr(0, std::min<size_t>(text.find('\n'), 300)));
}

}  // namespace rossoctl::app::run
