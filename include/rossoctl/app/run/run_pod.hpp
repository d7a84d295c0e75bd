#pragma once
// The pods `sandbox run` uses: an ephemeral hardened pod that only waits (the code arrives
// over exec), warm pool pods of the same shape, the claim that takes one atomically, and the
// command lines run inside them.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/model/validation.hpp"

namespace rossoctl::app::run {

inline constexpr const char* kRunLabel = "rossoctl.dev/run";
inline constexpr const char* kPoolLabel = "rossoctl.dev/pool";
inline constexpr const char* kPoolWarm = "warm";
inline constexpr const char* kPoolClaimed = "claimed";
inline constexpr const char* kClaimedByAnnotation = "rossoctl.dev/claimed-by";
inline constexpr const char* kPoolShapeAnnotation = "rossoctl.dev/pool-shape";
inline constexpr const char* kContainerName = "run";
inline constexpr const char* kDefaultRunImage = "docker.io/library/python:3.12-slim";
// Upload and artifact collection happen inside the pod's deadline too.
inline constexpr long kDeadlineMarginSeconds = 60;

// What a pod must have for a run to use it.
struct RunPodShape {
    std::string image = kDefaultRunImage;
    std::string cpu = "500m";
    std::string memory = "512Mi";
    std::string workdir = "/workspace";
    std::string runtimeClass = {};  // spec.runtimeClassName (gvisor, kata); empty: the node's
};

// One string naming the shape, stored on warm pods so a run only claims a matching one.
std::string shapeKey(const RunPodShape& shape);

// A pod named `name` that sleeps until activeDeadlineSeconds = timeout + margin.
nlohmann::json runPodManifest(const std::string& name, const RunPodShape& shape,
                              long timeoutSeconds);
// A warm pool pod (generateName) that sleeps for `lifetimeSeconds`.
nlohmann::json warmPodManifest(const RunPodShape& shape, long lifetimeSeconds);

// JSON patch that claims a warm pod only while it is still warm (the `test` op makes a
// concurrent claimer fail with 422), marks it as a run and shortens its deadline; a kept one
// (run --keep) is marked kept instead of naming its claimer.
std::string claimPatch(const std::string& claimer, std::optional<long> activeDeadlineSeconds,
                       bool kept = false);

// sh -c wrapper: cd WORKDIR, mkdir out, with `envFile` source and remove the uploaded env file,
// with `stdinFile` make the uploaded stdin file the command's stdin and remove it, exec CMD.
// Without them a file of either name is the user's: neither read nor removed.
std::vector<std::string> runCommandLine(const std::string& workdir,
                                        const std::vector<std::string>& command,
                                        bool stdinFile = false, bool envFile = false);
// An upload: `bytes` of tar whose last entry is the empty file `endMarker` (a random name). tar
// takes an archive cut at a header as whole, so the marker, not tar's exit, says it all arrived.
struct UploadShape {
    size_t bytes = 0;
    std::string endMarker;
    // rossoctl's own files in it (the env and stdin files): removed when the upload fails.
    std::vector<std::string> ownFiles;
};
// A random end marker's name (".rossoctl-uploaded-" and 16 hex digits).
std::string uploadEndMarker(uint32_t high, uint32_t low);
class TarWriter;
// Ends the upload `writer` writes into `archive`: the marker (an empty 0600 file), tar's end.
UploadShape endUpload(TarWriter& writer, const std::string& archive, std::string endMarker);
// runCommandLine that first unpacks the upload on its stdin into WORKDIR (exit 125 when that
// fails or the marker is missing) and gives the command /dev/null as stdin: upload and run in
// one exec session. The length is read, never an end of input: stdin is not half-closed
// (containerd can drop bytes in flight when it is, containerd#12734).
std::vector<std::string> uploadAndRunCommandLine(const std::string& workdir,
                                                 const std::vector<std::string>& command,
                                                 const UploadShape& upload, bool stdinFile = false,
                                                 bool envFile = false);
// Files and env up to this size travel in the command's own exec session (it is short next to
// --timeout); a larger upload gets an exec of its own, timed by --start-timeout.
inline constexpr size_t kUploadWithCommandMaxBytes = 1 << 20;
// The env file's text: one `export K='V'` line per variable (names are shell names).
inline constexpr const char* kEnvFileName = ".rossoctl-env";
// --stdin's bytes travel in the upload as this 0600 file, not as the exec's stdin, whose end
// containerd may deliver before its last bytes (containerd#12734).
inline constexpr const char* kStdinFileName = ".rossoctl-stdin";
std::string envFileContent(const std::vector<model::EnvVar>& env);
// Exit 0 once WORKDIR is a mount point in the container.
std::vector<std::string> mountedCommandLine(const std::string& workdir);
// Unpacks the upload on stdin into WORKDIR and checks its end marker (as above).
std::vector<std::string> uploadCommandLine(const std::string& workdir, const UploadShape& upload);
// Tar of WORKDIR/out on stdout; nothing when the directory does not exist.
std::vector<std::string> collectCommandLine(const std::string& workdir);
// SIGKILL to every process in the container but its pid 1 (the sleep that keeps the pod) and
// itself: what a timed-out command left running writes nothing more while out/ is collected.
std::vector<std::string> stopCommandLine();
// The container's cgroup memory events (v2; v1's oom_control otherwise), and the OOM kills
// they count (0 when none or unreadable).
std::vector<std::string> oomEventsCommandLine();
long oomKillCount(const std::string& events);

// --env names must be shell variable names, since the wrapper exports them.
void validateRunEnvName(const std::string& name);
// --workdir: absolute, normalized, not "/".
void validateWorkdir(const std::string& workdir);
// --image, --cpu, --memory and --workdir of a run or pool pod (UsageError naming the flag).
void validateRunPodShape(const RunPodShape& shape);

}  // namespace rossoctl::app::run
