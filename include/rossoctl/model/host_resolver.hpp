#pragma once
// Name resolution behind an interface, so what `project create` pins can be tested offline.
#include <string>
#include <vector>

namespace rossoctl::model {

class HostResolver {
  public:
    virtual ~HostResolver() = default;
    // The host's IPv4 and IPv6 addresses as text, sorted and unique; throws Error when the
    // name does not resolve.
    virtual std::vector<std::string> resolve(const std::string& host) = 0;
};

// getaddrinfo(3) as the system configures it (/etc/hosts, DNS).
class SystemHostResolver : public HostResolver {
  public:
    std::vector<std::string> resolve(const std::string& host) override;
};

}  // namespace rossoctl::model
