#pragma once
// Where a request's credentials come from: static token, token file (re-read when it
// changes), basic auth, client certificate, or an exec credential plugin.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/config.hpp"
#include "rossoctl/kube/transport.hpp"

namespace rossoctl::kube {

// The reply of an exec plugin (client.authentication.k8s.io ExecCredential status).
struct ExecCredential {
    std::string token;
    std::string clientCertificateData;
    std::string clientKeyData;
    std::optional<std::chrono::system_clock::time_point> expiration;
};

// Parses an ExecCredential JSON reply; throws ConfigError without echoing secret content.
ExecCredential parseExecCredential(const std::string& json, const std::string& expectedApiVersion);

// Runs a plugin: the command with args, env added to the environment, KUBERNETES_EXEC_INFO.
class ExecPluginRunner {
  public:
    virtual ~ExecPluginRunner() = default;
    virtual std::string run(const ExecConfig& config, const std::string& execInfo) = 0;
};
// fork/exec with stdin from /dev/null, stdout captured, stderr passed through; the plugin is
// killed after timeout.
std::unique_ptr<ExecPluginRunner> makeProcessExecPluginRunner(
    std::chrono::milliseconds timeout = std::chrono::minutes(2));

class Authenticator {
  public:
    Authenticator(const RestConfig& config, const Clock& clock,
                  std::unique_ptr<ExecPluginRunner> runner = makeProcessExecPluginRunner());
    // The Authorization header value for the next request, if any.
    std::optional<std::string> authorization();
    // A client certificate supplied by an exec plugin (cached with it).
    std::optional<ClientCertificate> pluginCertificate();
    // After a 401: drop cached credentials; true when retrying once may succeed.
    bool invalidate();

  private:
    void refreshPluginIfNeeded();
    bool usesPlugin() const;
    // Re-reads tokenFile when it changed (or a minute passed); returns the current token.
    const std::string& currentFileToken(bool force);
    const RestConfig& config_;
    const Clock& clock_;
    std::unique_ptr<ExecPluginRunner> runner_;
    std::optional<ExecCredential> pluginCredential_;
    std::string fileToken_;
    std::chrono::system_clock::time_point fileTokenReadAt_{};
    long long fileTokenMtime_ = -1;
    long long fileTokenSize_ = -1;
    unsigned long long fileTokenInode_ = 0;
};

}  // namespace rossoctl::kube
