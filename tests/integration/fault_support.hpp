#pragma once
// What the fault suite shares: a cluster component stopped for a while (and always started
// again), and rossoctl running in the background so a test can interrupt or kill it.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness.hpp"

namespace harness {

// The local-cluster script that runs the cluster in clusterDir() (its pid checks compare
// binary paths, so a worktree must use the cluster checkout's own script):
// ROSSOCTL_CLUSTER_SCRIPT, else <clusterDir>/../tests/cluster/local-cluster, else this source
// tree's (one checkout, as in CI).
std::string clusterScript();

// `local-cluster stop COMPONENT` now; `start` (and, for the apiserver, ready again) when
// restore() is called or the guard ends, even if a check threw.
class Stopped {
  public:
    explicit Stopped(std::string component);
    ~Stopped();
    Stopped(const Stopped&) = delete;
    Stopped& operator=(const Stopped&) = delete;
    void restore();

  private:
    std::string component_;
    bool restored_ = false;
};

// NetworkPolicy not enforced while the guard lives, by the local cluster's documented switch,
// `local-cluster stop kube-router`: no policy engine in any namespace, so a case that uses it is
// tagged [outage] and runs alone.
class PoliciesUnenforced {
  public:
    PoliciesUnenforced() : engine_("kube-router") {}
    PoliciesUnenforced(const PoliciesUnenforced&) = delete;
    PoliciesUnenforced& operator=(const PoliciesUnenforced&) = delete;

  private:
    Stopped engine_;
};

// An API server outage of `length`, then the server back and answering.
void apiserverOutage(std::chrono::milliseconds length);

// rossoctl ARGS in the background, with the admin kubeconfig; output kept in files.
class Background {
  public:
    explicit Background(const std::vector<std::string>& args);
    ~Background();  // SIGKILLs a process still running
    Background(const Background&) = delete;
    Background& operator=(const Background&) = delete;
    void signal(int number) const;
    bool running();  // false once it has exited (reaped)
    RunResult wait(int timeoutSeconds = 180);
    std::string output() const;  // its stdout so far, for a test that waits on what it printed

  private:
    pid_t pid_ = -1;
    std::optional<int> exitCode_;
    std::string outPath_, errPath_;
};

// A sandbox agent `name` from busybox in ns, Ready.
void importReadyAgent(const std::string& ns, const std::string& name);

// The pod named `name` in ns, if it exists.
std::optional<nlohmann::json> pod(const std::string& ns, const std::string& name);
std::string uidOf(const std::optional<nlohmann::json>& object);
// Pods in ns matching the label selector.
std::vector<nlohmann::json> pods(const std::string& ns, const std::string& selector);

}  // namespace harness
