#pragma once
// What the two directions of sandbox cp share (not a public header).
#include <string>
#include <vector>

#include "rossoctl/app/copy.hpp"
#include "rossoctl/kube/exec.hpp"

namespace rossoctl::app::copy {

// The exec of one step of a copy, with what is left of the copy's deadline as its time-out.
kube::ExecRequest execRequest(const Clock& clock, const PodTarget& target,
                              std::vector<std::string> command);
// sh -c SCRIPT sh ARGS...: values travel as positional parameters, never parsed as shell text.
std::vector<std::string> shCommand(const std::string& script, std::vector<std::string> args);
// Shell text that writes exactly the next `size` bytes of stdin ("$K" words) to `file` and
// checks that the file holds them all. No `exec`: the shell keeps the exec's stdout open, since
// the node cuts a command's stdin once its stdout is closed (as `exec cat > F` does); the length
// is read, not an end of input, since containerd can drop bytes in flight when stdin is closed
// (containerd#12734).
std::string writeExactlyScript(const std::string& file, const std::string& size);
// Throws Error naming `what` when the command did not exit 0 (its stderr, escaped, cut short)
// or ran past the copy's deadline.
void checkExit(const kube::ExecResult& result, const std::string& stderrText,
               const std::string& what);
// Shell text that ends the script (exit 1) with kNoDirectoryLine on stderr when the directory
// `dir` ("$1" words) is not there: a shell's own "cd: can't cd to" differs from one to the next.
std::string directoryMustExist(const std::string& dir);
inline constexpr const char* kNoDirectoryLine = "rossoctl: no such directory";
// checkExit for a command that writes into the directory `podDir` of the pod: a directory that
// is missing, read-only or not the pod user's is said plainly, with where to copy instead,
// rather than as the pod's tar or shell words.
void checkWriteExit(const kube::ExecResult& result, const std::string& stderrText,
                    const std::string& what, const std::string& podDir);

}  // namespace rossoctl::app::copy
