#pragma once
// `sandbox cp`: files and directories between this machine and a pod, over exec.
//
// With `tar` in the container a copy is one tar stream (`tar cf -` out of the pod, `tar xf -`
// into it). Without it, `sh` and `cat` are enough: out of the pod a small sh script lists the
// tree (NUL-separated records), each file comes over its own `cat` and is staged in a
// temporary file so its size is known; into the pod `mkdir -p` makes the directories and each
// file goes through `cat > NAME` (then `chmod`). Either way what comes out of the pod is a tar
// stream fed to the safe extractor (extract.hpp): the same caps, no path outside the
// destination, no setuid/setgid bits, links checked once all exist.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rossoctl/app/extract.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/kube/exec.hpp"

namespace rossoctl::app::copy {

struct PodTarget {
    std::string namespaceName;
    std::string pod;
    std::string container;
    // When the whole copy must be over (the client's monotonic clock): every exec of it gets
    // what is left, so a pod that stalls or trickles cannot hold the copy forever.
    std::optional<std::chrono::steady_clock::time_point> deadline;
};

enum class RemoteType { Missing, File, Directory };

// What the pod has at a path, and whether it has tar. One exec.
struct RemoteInfo {
    RemoteType type = RemoteType::Missing;
    bool executable = false;
    bool hasTar = false;
};
RemoteInfo probe(kube::Client& client, const PodTarget& target, const std::string& path);

struct CopyStats {
    uint64_t files = 0;
    uint64_t bytes = 0;
    bool usedTar = true;
    // Entries refused (pod-controlled text: escape before printing), the first few of each
    // stage listed (extract.hpp's addRefusal); `refused` counts them all.
    std::vector<std::string> rejected;
    uint64_t refused = 0;
};

// POSIX dirname/basename of a path in the pod ("/a/b/" -> "/a", "b"; "b" -> ".", "b").
std::string remoteParent(const std::string& path);
std::string remoteBase(const std::string& path);

// Copies `remotePath` (described by `info`) to `localTarget`: a directory's contents go into
// the directory `localTarget` (created when missing), a file becomes `localTarget` (staged in
// its parent first, then renamed into place). Throws Error on a cap exceeded, a damaged stream
// or a command that failed in the pod.
CopyStats copyFromPod(kube::Client& client, const PodTarget& target, const std::string& remotePath,
                      const RemoteInfo& info, const std::string& localTarget,
                      const ExtractLimits& limits);

// Copies the local file or directory `localSource` to `remoteTarget` in the pod (its parent
// must exist there). Local symlinks are copied as symlinks; no setuid/setgid/sticky bit goes.
CopyStats copyToPod(kube::Client& client, const PodTarget& target, const std::string& localSource,
                    const std::string& remoteTarget, bool useTar);

// `sandbox cp S:FILE -`: the bytes of the file `remotePath` through `sink`, staged whole first,
// so a cap (the smaller of maxFileBytes and maxBytes), the deadline or a failure in the pod
// sends nothing at all. The sink gets the pod's raw bytes: escape them for a terminal.
CopyStats copyFileToSink(kube::Client& client, const PodTarget& target,
                         const std::string& remotePath, const ExtractLimits& limits,
                         const std::function<void(std::string_view)>& sink);

// What `sandbox cp - S:FILE` reads of stdin before the copy starts: at most maxBytes, and no
// longer than the copy's deadline or until Ctrl-C (a terminal or `tail -f |` never ends).
struct StdinLimits {
    uint64_t maxBytes = uint64_t{1} << 30;
    const kube::CancelFlag* cancel = nullptr;
};
// `sandbox cp - S:FILE`: what `input`'s stdin (readStdin or stdinDescriptor) holds becomes the
// file `remoteTarget` (its parent must exist in the pod; an existing file is replaced).
void copySourceToPod(kube::Client& client, const PodTarget& target, const std::string& remoteTarget,
                     kube::ExecIo input, const StdinLimits& limits = {});

// "312,004"
std::string groupThousands(uint64_t value);

}  // namespace rossoctl::app::copy
