#pragma once
// Which API versions a server serves: one GET /apis/GROUP per group, cached on disk per
// server for ten minutes (mode 0600 files in a 0700 directory).
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::kube {

struct ApiGroupInfo {
    std::string preferredVersion;
    std::vector<std::string> versions;
};

class Discovery {
  public:
    // cacheDir empty = no disk cache.
    Discovery(Client& client, const Clock& clock, std::string cacheDir);
    // nullopt when the group is not served at all. `fresh`: asked of the server, not the cache
    // (which it then updates).
    std::optional<ApiGroupInfo> group(const std::string& name, bool fresh = false);
    // The group's preferred version among `wanted` (in order of preference), if served.
    std::optional<std::string> pickVersion(const std::string& group,
                                           const std::vector<std::string>& wanted);
    // The Sandbox API: v1beta1 preferred, v1alpha1 fallback; throws Error when neither.
    ResourceRef sandboxes();
    bool isServed(const std::string& name) { return group(name).has_value(); }

  private:
    std::optional<std::string> readCache(const std::string& group) const;
    void writeCache(const std::string& group, const std::string& body) const;
    Client& client_;
    const Clock& clock_;
    std::string cacheDir_;
    std::map<std::string, std::optional<ApiGroupInfo>> memo_;
};

// ~/.cache/rossoctl/discovery/<host_port> (XDG_CACHE_HOME honoured).
std::string defaultDiscoveryCacheDir(const Environment& env, const std::string& server);

}  // namespace rossoctl::kube
