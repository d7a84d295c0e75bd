// sandbox cp: what the pod has at a path, and the path helpers both directions share.
#include <fmt/format.h>

#include <sstream>

#include "copy_internal.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/exec.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::app::copy {

namespace {

// Prints "TYPE EXEC TAR": d|f|n, x|-, tar|none. `command -v` is a shell builtin, so this needs
// nothing but sh.
constexpr const char* kProbeScript =
    "p=$1; x=-; "
    "if [ -d \"$p\" ]; then t=d; elif [ -e \"$p\" ]; then t=f; else t=n; fi; "
    "if [ \"$t\" = f ] && [ -x \"$p\" ]; then x=x; fi; "
    "if command -v tar >/dev/null 2>&1; then a=tar; else a=none; fi; "
    "printf '%s %s %s\\n' \"$t\" \"$x\" \"$a\"";
constexpr kube::CaptureLimits kProbeLimits{4096, std::chrono::seconds(30)};

}  // namespace

kube::ExecRequest execRequest(const Clock& clock, const PodTarget& target,
                              std::vector<std::string> command) {
    kube::ExecRequest request;
    if (target.deadline)
        request.timeout = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       *target.deadline - clock.monotonic()),
                                   std::chrono::milliseconds(1));
    request.namespaceName = target.namespaceName;
    request.pod = target.pod;
    request.container = target.container;
    request.command = std::move(command);
    return request;
}

std::vector<std::string> shCommand(const std::string& script, std::vector<std::string> args) {
    std::vector<std::string> command{"sh", "-c", script, "sh"};
    command.insert(command.end(), args.begin(), args.end());
    return command;
}

std::string writeExactlyScript(const std::string& file, const std::string& size) {
    return fmt::format(
        "head -c {1} > {0} || exit 1; n=$(wc -c < {0}); [ $n -eq {1} ] 2>/dev/null || {{ echo "
        "\"rossoctl: {0} holds $n of {1} bytes: stdin was cut short in the pod\" >&2; exit 1; }}",
        file, size);
}

void checkExit(const kube::ExecResult& result, const std::string& stderrText,
               const std::string& what) {
    if (result.timedOut)
        throw Error(
            fmt::format("{} did not finish within the copy's --timeout; raise it with "
                        "--timeout",
                        what));
    if (!result.message.empty() && result.exitCode == 0)
        throw Error(fmt::format("{}: {}", what, ui::escapeForTerminal(result.message)));
    if (result.exitCode == 0) return;
    // tar's lines ("...: Read-only file system", "tar: Exiting with failure status") joined
    // with "; " into the one error line, each escaped: never a literal \n between them.
    std::string detail;
    std::istringstream lines(stderrText.substr(0, 512));
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) detail += (detail.empty() ? "" : "; ") + ui::escapeForTerminal(line);
    }
    if (detail.empty()) detail = ui::escapeForTerminal(result.message);
    throw Error(fmt::format("{} failed in the pod (exit {}): {}", what, result.exitCode, detail));
}

std::string directoryMustExist(const std::string& dir) {
    return fmt::format("[ -d {0} ] || {{ echo '{1}' >&2; exit 1; }}; ", dir, kNoDirectoryLine);
}

void checkWriteExit(const kube::ExecResult& result, const std::string& stderrText,
                    const std::string& what, const std::string& podDir) {
    if (result.exitCode != 0 && !result.timedOut) {
        const std::string dir = ui::escapeForTerminal(podDir);
        const auto said = [&](const char* words) {
            return stderrText.find(words) != std::string::npos;
        };
        // Where a rossoctl sandbox writes; advice to go there when the copy was there is none.
        const bool writablePlace = podDir.starts_with("/workspace") || podDir.starts_with("/tmp");
        if (said(kNoDirectoryLine))
            throw Error(fmt::format(
                "{} does not exist in the pod; nothing was copied: copy into a directory it has "
                "(e.g. /workspace)",
                dir));
        const std::string instead =
            writablePlace
                ? ""
                : ": copy under /workspace or /tmp (a rossoctl sandbox writes only there)";
        if (said("Read-only file system"))
            throw Error(fmt::format(
                "{} is on a read-only filesystem in the pod; nothing was copied{}", dir, instead));
        if (said("Permission denied"))
            throw Error(fmt::format("the pod's user may not write in {}; nothing was copied{}", dir,
                                    instead));
    }
    checkExit(result, stderrText, what);
}

RemoteInfo probe(kube::Client& client, const PodTarget& target, const std::string& path) {
    // The answer is one short line: a pod that floods or stalls it gets no further.
    const auto captured = kube::execCapture(
        client, execRequest(client.clock(), target, shCommand(kProbeScript, {path})), kProbeLimits);
    if (!captured.complete())
        throw Error(fmt::format("looking at the path in the pod: {}; nothing was copied",
                                captured.whyCut()));
    checkExit(captured.result, captured.stderrText,
              "looking at the path (the image needs sh for sandbox cp)");
    const std::string& text = captured.stdoutText;
    // Exactly "T X A\n"; anything else is not the answer of our script.
    const bool wellFormed = (text == std::string(text.substr(0, 4)) + "tar\n" ||
                             text == std::string(text.substr(0, 4)) + "none\n") &&
                            text.size() >= 8 &&
                            std::string_view("dfn").find(text[0]) != std::string_view::npos &&
                            text[1] == ' ' && (text[2] == 'x' || text[2] == '-') && text[3] == ' ';
    if (!wellFormed)
        throw Error(fmt::format(
            "the pod answered the path probe with \"{}\", not \"TYPE EXEC TAR\"; is sh a POSIX "
            "shell in this image?",
            ui::escapeForTerminal(text.substr(0, 80))));
    RemoteInfo info;
    if (text[0] == 'd') info.type = RemoteType::Directory;
    if (text[0] == 'f') info.type = RemoteType::File;
    info.executable = text[2] == 'x';
    info.hasTar = text.compare(4, 4, "tar\n") == 0;
    return info;
}

std::string remoteParent(const std::string& path) {
    std::string trimmed = path;
    while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
    const auto slash = trimmed.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return trimmed.substr(0, slash);
}

std::string remoteBase(const std::string& path) {
    std::string trimmed = path;
    while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
    const auto slash = trimmed.rfind('/');
    return slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
}

std::string groupThousands(uint64_t value) {
    const std::string digits = std::to_string(value);
    std::string grouped;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) grouped.push_back(',');
        grouped.push_back(digits[i]);
    }
    return grouped;
}

}  // namespace rossoctl::app::copy
