#pragma once
// The process holds bearer tokens and client keys once a kubeconfig is read: a crash must not
// write them to a core file, and other processes of the same user must not read its memory.

namespace rossoctl::app {

// RLIMIT_CORE 0 and PR_SET_DUMPABLE 0 (also denies ptrace and /proc/PID/mem to others).
void disableCoreDumps();

}  // namespace rossoctl::app
