#include "rossoctl/app/run/run_pod.hpp"

#include <fmt/format.h>

#include <sstream>

#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/model/pod.hpp"

namespace rossoctl::app::run {

using nlohmann::json;

namespace {

constexpr const char* kRunName = "sandbox-run";

json shapedPod(const RunPodShape& shape, long deadlineSeconds) {
    model::HardenedPodOptions options;
    options.containerName = kContainerName;
    options.image = shape.image;
    options.command = {"sleep", std::to_string(deadlineSeconds)};
    options.cpu = shape.cpu;
    options.memory = shape.memory;
    options.workdir = shape.workdir;
    options.runtimeClass = shape.runtimeClass;
    options.activeDeadlineSeconds = deadlineSeconds;
    options.restartPolicy = "Never";
    json spec = model::hardenedPodSpec(options);
    spec["terminationGracePeriodSeconds"] = 1;  // the pod is thrown away; nothing to flush
    json pod = json::object();  // built by key: a one-entry brace list would become an array
    pod["apiVersion"] = "v1";
    pod["kind"] = "Pod";
    pod["metadata"]["labels"] = model::managedLabels(kRunName);
    pod["spec"] = spec;
    return pod;
}

std::string escapePointer(const std::string& key) {
    std::string out;
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

}  // namespace

std::string shapeKey(const RunPodShape& shape) {
    json key = {{"image", shape.image},
                {"cpu", shape.cpu},
                {"memory", shape.memory},
                {"workdir", shape.workdir}};
    // Only when set: the pools made before the flag keep their key.
    if (!shape.runtimeClass.empty()) key["runtimeClass"] = shape.runtimeClass;
    return key.dump();
}

json runPodManifest(const std::string& name, const RunPodShape& shape, long timeoutSeconds) {
    json pod = shapedPod(shape, timeoutSeconds + kDeadlineMarginSeconds);
    pod["metadata"]["name"] = name;
    pod["metadata"]["labels"][kRunLabel] = "true";
    return pod;
}

json warmPodManifest(const RunPodShape& shape, long lifetimeSeconds) {
    json pod = shapedPod(shape, lifetimeSeconds);
    pod["metadata"]["generateName"] = "rossoctl-pool-";
    pod["metadata"]["labels"][kPoolLabel] = kPoolWarm;
    pod["metadata"]["annotations"] = {{kPoolShapeAnnotation, shapeKey(shape)}};
    return pod;
}

std::string claimPatch(const std::string& claimer, std::optional<long> activeDeadlineSeconds,
                       bool kept) {
    const std::string pool = "/metadata/labels/" + escapePointer(kPoolLabel);
    json patch = json::array({
        {{"op", "test"}, {"path", pool}, {"value", kPoolWarm}},
        {{"op", "replace"}, {"path", pool}, {"value", kPoolClaimed}},
        {{"op", "add"},
         {"path", "/metadata/labels/" + escapePointer(kRunLabel)},
         {"value", "true"}},
        // A pod kept on purpose (run --keep) has no process to outlive: the next run's reaper
        // must not take it for a leftover once its claimer exits.
        kept ? json{{"op", "add"},
                    {"path", "/metadata/annotations/" + escapePointer(kKeptAnnotation)},
                    {"value", "true"}}
             : json{{"op", "add"},
                    {"path", "/metadata/annotations/" + escapePointer(kClaimedByAnnotation)},
                    {"value", claimer}},
    });
    // The apiserver lets a pod's deadline shrink, never grow.
    if (activeDeadlineSeconds)
        patch.push_back({{"op", "replace"},
                         {"path", "/spec/activeDeadlineSeconds"},
                         {"value", *activeDeadlineSeconds}});
    return patch.dump();
}

namespace {

// `head -c N | tar -x`: tar reads an end of input that head makes, not the exec's. Without
// head, tar would read an empty stream and exit 0, so its absence is an error of its own. Run in
// the directory unpacked into; exit 125 unless the archive's last entry, the marker, arrived.
std::string unpackExactly(const UploadShape& upload) {
    // A failed upload leaves none of rossoctl's files (the env file holds --env's values).
    std::string cleanup = "rm -f";
    for (const auto& name : upload.ownFiles) cleanup += " " + name;
    cleanup += " " + upload.endMarker;
    return fmt::format(
        "command -v head >/dev/null || {{ echo 'rossoctl: unpacking the uploaded files needs "
        "head and tar in the image' >&2; exit 125; }}; head -c {} | tar -x -m -f - || {{ {}; echo "
        "'rossoctl: unpacking the uploaded files failed; does the image have tar?' >&2; exit "
        "125; }}; [ -f {} ] || {{ {}; echo 'rossoctl: the uploaded files arrived cut short' >&2; "
        "exit 125; }}; rm -f {}; ",
        upload.bytes, cleanup, upload.endMarker, cleanup, upload.endMarker);
}

}  // namespace

std::vector<std::string> runCommandLine(const std::string& workdir,
                                        const std::vector<std::string>& command, bool stdinFile,
                                        bool envFile) {
    // Arguments travel as positional parameters, so no value is ever parsed by the shell; the
    // env file (uploaded, 0600) is read and removed before the code starts, and so is the
    // stdin file once it is open as the code's stdin.
    const std::string env = kEnvFileName;
    const std::string in = kStdinFileName;
    const std::string script =
        "cd \"$1\" || exit 125; shift; mkdir -p out 2>/dev/null; " +
        (envFile ? ". ./" + env + " || exit 125; rm -f " + env + "; " : std::string()) +
        (stdinFile ? "exec 0<" + in + " || exit 125; rm -f " + in + "; " : std::string()) +
        "exec \"$@\"";
    std::vector<std::string> argv = {"sh", "-c", script, "sh", workdir};
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
}

std::string uploadEndMarker(uint32_t high, uint32_t low) {
    return fmt::format(".rossoctl-uploaded-{:08x}{:08x}", high, low);
}

UploadShape endUpload(TarWriter& writer, const std::string& archive, std::string endMarker) {
    writer.addFile(endMarker, "", 0600);
    writer.finish();
    return {archive.size(), std::move(endMarker), {}};
}

std::vector<std::string> uploadAndRunCommandLine(const std::string& workdir,
                                                 const std::vector<std::string>& command,
                                                 const UploadShape& upload, bool stdinFile,
                                                 bool envFile) {
    std::vector<std::string> argv = runCommandLine(workdir, command, stdinFile, envFile);
    std::string& script = argv[2];
    script.insert(script.find("mkdir -p out"), unpackExactly(upload) + "exec 0</dev/null; ");
    return argv;
}

std::string envFileContent(const std::vector<model::EnvVar>& env) {
    // Single quotes keep every byte literal; a quote inside becomes '\''.
    std::string text;
    for (const auto& var : env) {
        std::string quoted;
        for (char c : var.value) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        text += "export " + var.name + "='" + quoted + "'\n";
    }
    return text;
}

std::vector<std::string> mountedCommandLine(const std::string& workdir) {
    return {"sh", "-c", "grep -q \" $1 \" /proc/self/mountinfo", "sh", workdir};
}

std::vector<std::string> uploadCommandLine(const std::string& workdir, const UploadShape& upload) {
    return {"sh", "-c", "cd \"$1\" || exit 125; " + unpackExactly(upload) + "exit 0", "sh",
            workdir};
}

std::vector<std::string> collectCommandLine(const std::string& workdir) {
    return {"sh", "-c", "cd \"$1\"/out 2>/dev/null || exit 0; exec tar -c -f - .", "sh", workdir};
}

std::vector<std::string> stopCommandLine() {
    // kill(-1) spares the caller and the namespace's init; `kill` is a builtin of every sh.
    return {"sh", "-c", "kill -KILL -1 2>/dev/null; exit 0"};
}

std::vector<std::string> oomEventsCommandLine() {
    return {"sh", "-c",
            "cat /sys/fs/cgroup/memory.events 2>/dev/null || "
            "cat /sys/fs/cgroup/memory/memory.oom_control"};
}

long oomKillCount(const std::string& events) {
    std::istringstream lines(events);
    for (std::string key; lines >> key;) {
        long value = 0;
        if (!(lines >> value)) return 0;
        if (key == "oom_kill") return value;
    }
    return 0;
}

void validateRunEnvName(const std::string& name) {
    bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok)
        throw UsageError(fmt::format(
            "invalid --env name \"{}\": use letters, digits and '_' (a shell variable name)",
            name));
}

void validateWorkdir(const std::string& workdir) {
    bool ok = workdir.size() > 1 && workdir.front() == '/' && workdir.back() != '/' &&
              workdir.find("//") == std::string::npos && workdir.find(':') == std::string::npos &&
              workdir.find(' ') == std::string::npos;
    for (const char* bad : {"/./", "/../"})
        ok = ok && (workdir + "/").find(bad) == std::string::npos;
    if (!ok)
        throw UsageError(fmt::format(
            "invalid --workdir \"{}\": want an absolute path such as /workspace (not /)", workdir));
}

void validateRunPodShape(const RunPodShape& shape) {
    model::validateImageReference(shape.image, "--image");
    if (model::parseQuantity(shape.cpu, "--cpu") <= 0)
        throw UsageError("--cpu must be more than 0");
    if (model::parseQuantity(shape.memory, "--memory") <= 0)
        throw UsageError("--memory must be more than 0");
    validateWorkdir(shape.workdir);
    if (!shape.runtimeClass.empty())
        model::validateDnsSubdomain(shape.runtimeClass, "--runtime-class");
}

}  // namespace rossoctl::app::run
