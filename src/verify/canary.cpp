// The live half of "nothing survives": canaries in every writable mount and in the root
// filesystem, read back after the pod has been replaced.
#include <fmt/format.h>

#include <algorithm>

#include "probe_text.hpp"
#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/pod_checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace probe_text;

namespace {

std::string trimmed(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

std::string volumeType(const json& pod, const std::string& volume) {
    for (const auto& candidate : pod["spec"].value("volumes", json::array()))
        if (candidate.value("name", "") == volume)
            for (const auto& [key, value] : candidate.items())
                if (key != "name") return key;
    return "volume";
}

}  // namespace

std::vector<CanaryPlace> canaryPlaces(const json& pod, const json& container) {
    std::vector<CanaryPlace> places;
    std::vector<std::string> mounted;
    for (const auto& mount : container.value("volumeMounts", json::array())) {
        const std::string path = trimmed(mount.value("mountPath", ""));
        mounted.push_back(path);
        if (path.empty() || mount.value("readOnly", false)) continue;
        const std::string volume = mount.value("name", "");
        const std::string type = volumeType(pod, volume);
        // The kubelet mounts these read-only whatever the mount says.
        if (type == "configMap" || type == "secret" || type == "projected" || type == "downwardAPI")
            continue;
        places.push_back({path, fmt::format("the {} volume {}", type, volume)});
    }
    for (const char* root : {"/tmp", "/var/tmp", "/"}) {
        if (std::find(mounted.begin(), mounted.end(), root) != mounted.end()) continue;
        places.push_back({root, "the root filesystem"});
    }
    // The pod's own tmpfs, or with hostIPC the node's, which outlives the pod.
    if (std::find(mounted.begin(), mounted.end(), "/dev/shm") == mounted.end())
        places.push_back({"/dev/shm", "the IPC namespace's /dev/shm"});
    return places;
}

std::vector<std::string> canaryWriteCommand(const std::vector<std::string>& paths,
                                            const std::string& content) {
    std::vector<std::string> command = {
        "/bin/sh", "-c",
        // Builtins only (printf, read): no tool from a path the pod may have written.
        "c=$1; shift; umask 077\n"
        "for p; do\n"
        "  got=\n"
        "  if printf '%s\\n' \"$c\" > \"$p\" 2>/dev/null && read -r got < \"$p\" && "
        "[ \"$got\" = \"$c\" ]; then\n"
        "    echo \"rossoctl-written=$p\"; else echo \"rossoctl-unwritable=$p\"; fi\n"
        "done\necho rossoctl-done=1",
        kScriptName, content};
    command.insert(command.end(), paths.begin(), paths.end());
    return command;
}

std::vector<std::string> canaryReadCommand(const std::vector<std::string>& paths) {
    std::vector<std::string> command = {
        "/bin/sh", "-c",
        // A canary that survived is removed again: verify leaves nothing in the user's volume.
        "for p; do if [ -e \"$p\" ]; then echo \"rossoctl-present=$p\"; "
        "rm -f -- \"$p\" 2>/dev/null || echo \"rossoctl-left=$p\"; "
        "else echo \"rossoctl-absent=$p\"; fi; done\necho rossoctl-done=1",
        kScriptName};
    command.insert(command.end(), paths.begin(), paths.end());
    return command;
}

namespace {

std::vector<std::string> markedPaths(const std::string& text, const std::string& key) {
    std::vector<std::string> paths;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(key + "=", 0) == 0) paths.push_back(line.substr(key.size() + 1));
    return paths;
}

}  // namespace

std::vector<std::string> canariesWritten(const ProbeOutput& output) {
    if (!output.started || output.timedOut || !marker(output.stdoutText, "rossoctl-done"))
        return {};
    return markedPaths(output.stdoutText, "rossoctl-written");
}

std::string canariesLeftNote(const std::vector<std::string>& paths) {
    std::string list;
    for (const auto& path : paths)
        list += (list.empty() ? "" : ", ") + redactedCredentials(cleanLine(path));
    return fmt::format("verify's canary file{} may remain at {}: remove {} by hand",
                       paths.size() == 1 ? "" : "s", list, paths.size() == 1 ? "it" : "them");
}

Finding canariesAfterRestart(const ProbeOutput& output, const std::vector<std::string>& paths,
                             const std::string& restartSummary) {
    if (!output.started) {
        Finding finding = notStarted(output, "sh");
        finding.evidence.push_back(canariesLeftNote(paths));
        return finding;
    }
    if (output.timedOut || !marker(output.stdoutText, "rossoctl-done"))
        return unproven(fmt::format("reading the canaries back gave no answer (exit {}: {}); {}",
                                    output.exitCode, lastLine(output.stderrText),
                                    canariesLeftNote(paths)));
    const auto present = markedPaths(output.stdoutText, "rossoctl-present");
    const auto absent = markedPaths(output.stdoutText, "rossoctl-absent");
    const auto left = markedPaths(output.stdoutText, "rossoctl-left");
    Finding finding;
    std::vector<std::string> unanswered;
    for (const auto& path : paths) {
        if (std::find(present.begin(), present.end(), path) != present.end()) {
            finding.verdict = Verdict::Fail;
            const bool stays = std::find(left.begin(), left.end(), path) != left.end();
            finding.evidence.push_back(
                fmt::format("canary {} survived the restart ({}): data outlives the pod; {}",
                            redactedCredentials(cleanLine(path)), restartSummary,
                            stays ? "it could not be removed: delete it by hand" : "removed"));
        } else if (std::find(absent.begin(), absent.end(), path) == absent.end()) {
            unanswered.push_back(path);
        }
    }
    if (finding.verdict == Verdict::Fail) return finding;
    if (!unanswered.empty())
        return unproven(fmt::format("no answer for canary {} after the restart; {}",
                                    redactedCredentials(cleanLine(unanswered.front())),
                                    canariesLeftNote(unanswered)));
    finding.verdict = Verdict::Pass;
    std::string list;
    // A mount path is the user's: a token in it is not printed (attack 54, X1).
    for (const auto& path : paths)
        list += (list.empty() ? "" : ", ") + redactedCredentials(cleanLine(path));
    finding.evidence.push_back(fmt::format("all {} canaries are gone after the restart ({}): {}",
                                           paths.size(), restartSummary, list));
    return finding;
}

}  // namespace rossoctl::verify
