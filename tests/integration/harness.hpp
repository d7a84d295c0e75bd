#pragma once
// What every integration test uses: run the real rossoctl binary against the local cluster,
// and read the cluster with the core client to check what changed.
#include <sys/types.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "build_info.hpp"
#include "rossoctl/kube/client.hpp"

namespace harness {

struct RunResult {
    int exitCode = -1;
    std::string out;
    std::string err;
};

// The local cluster's state dir (ROSSOCTL_CLUSTER_DIR, else <repo>/.local-cluster).
std::string clusterDir();
std::string kubeconfigPath();         // admin
std::string limitedKubeconfigPath();  // the non-admin user, namespace "limited"
// outside-url / outside-url-ip files of the cluster.
std::string outsideUrl(bool byAddress = false);

// Runs `rossoctl ARGS` with KUBECONFIG set to the admin kubeconfig (unless env overrides it);
// stdin from `input`; kills it after timeoutSeconds.
RunResult rossoctl(const std::vector<std::string>& args, const std::string& input = {},
                   const std::map<std::string, std::string>& env = {}, int timeoutSeconds = 180);
// Runs any program the same way (kubectl from tests/cluster/bin, sh, ...).
RunResult run(const std::vector<std::string>& argv, const std::string& input = {},
              const std::map<std::string, std::string>& env = {}, int timeoutSeconds = 180);
std::string kubectlPath();

// Starts `rossoctl ARGS` in the background with the admin kubeconfig, each of stdin, stdout and
// stderr from or to the path given ("" leaves the test's own); the caller waits for the pid.
struct SpawnPaths {
    std::string in, out, err;
};
pid_t spawnRossoctl(const std::vector<std::string>& args, const SpawnPaths& paths = {});

// An admin client for reading and arranging cluster state.
rossoctl::kube::Client& admin();
// The Sandbox resource at the version the cluster serves (discovery, as rossoctl does it).
rossoctl::kube::ResourceRef sandboxRef();
// The Sandbox `name` in ns, read as admin.
nlohmann::json getSandbox(const std::string& ns, const std::string& name);
// The egress gate image `agents import` would write into a Sandbox in ns: the project's
// rossoctl.dev/gate-image, "" (no gate) in a namespace that is not a rossoctl project.
std::string projectGateImage(const std::string& ns);
// stderr without the warning `agents import` gives in a namespace that is no project (no gate).
std::string withoutGateWarning(const std::string& err);
// A hardened Sandbox as rossoctl builds it (100m cpu, 64Mi, an hour to live, the gate as
// projectGateImage(ns) says), not created.
nlohmann::json smallSandbox(const std::string& ns, const std::string& name,
                            const std::string& image = "curlimages/curl:8");

// A fresh namespace name for one test ("it-<prefix>-<random>"), created with the given
// labels; deleted when the returned guard goes out of scope.
class TestNamespace {
  public:
    explicit TestNamespace(const std::string& prefix, bool create = true,
                           const nlohmann::json& labels = nlohmann::json::object());
    ~TestNamespace();
    TestNamespace(const TestNamespace&) = delete;
    TestNamespace& operator=(const TestNamespace&) = delete;
    const std::string& name() const { return name_; }

  private:
    std::string name_;
};

// Polls fn every 200 ms until it returns true or timeoutSeconds pass.
bool eventually(const std::function<bool()>& fn, int timeoutSeconds = 60);

// Creates the ResourceQuota and waits until the quota controller has counted every resource it
// limits: before that, admission ignores it (no status.hard) or refuses every pod ("status
// unknown for quota"), and a test of the quota's refusal races the controller.
void createCountedQuota(const std::string& ns, const nlohmann::json& quota);

// A stable snapshot of every object rossoctl may write in ns (kind/name -> resourceVersion),
// to prove a failed command changed nothing.
std::map<std::string, std::string> snapshot(const std::string& ns);
// A snapshot once the controllers and the scheduler stop changing the namespace (the same
// twice, a second apart; at most 30 s), so "nothing changed" sees only the command's writes.
std::map<std::string, std::string> settledSnapshot(const std::string& ns);

}  // namespace harness
