#pragma once
// A misbehaving front for the local cluster's apiserver (servers/fault_apiserver.py), for the
// bad-input and fault tests: it forwards to the real apiserver with admin credentials, or
// answers by the first matching rule ("METHOD PATH_REGEX ACTION [COUNT]", see the script).
#include <sys/types.h>

#include <string>
#include <vector>

namespace harness {

class FaultApiserver {
  public:
    explicit FaultApiserver(const std::vector<std::string>& rules = {});
    ~FaultApiserver();
    FaultApiserver(const FaultApiserver&) = delete;
    FaultApiserver& operator=(const FaultApiserver&) = delete;

    // A kubeconfig like the admin one whose server is this front.
    const std::string& kubeconfig() const { return kubeconfig_; }
    int port() const { return port_; }
    // Every request seen so far, one "METHOD PATH -> ACTION" line each.
    std::string log() const;
    // How many log lines contain all of the given parts.
    size_t count(const std::vector<std::string>& parts) const;

  private:
    std::string dir_;
    std::string kubeconfig_;
    std::string logPath_;
    pid_t pid_ = -1;
    int port_ = 0;
};

// A file with the given bytes in a fresh temporary directory (removed at exit of the test
// process is not needed: /tmp is scratch); returns its path.
std::string writeTempFile(const std::string& name, const std::string& content, int mode = 0600);

}  // namespace harness
