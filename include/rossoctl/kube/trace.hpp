#pragma once
// -v 6/7/8 request tracing to stderr with every secret masked.
#include <chrono>
#include <ostream>
#include <string>
#include <string_view>

#include "rossoctl/kube/transport.hpp"

namespace rossoctl::kube {

class RequestTracer {
  public:
    RequestTracer(std::ostream& err, int verbosity) : err_(err), verbosity_(verbosity) {}
    int verbosity() const { return verbosity_; }
    void request(const HttpRequest& request) const;
    void response(const HttpRequest& request, long status, std::chrono::milliseconds took,
                  std::string_view body) const;
    void failure(const HttpRequest& request, const std::string& what) const;

  private:
    std::ostream& err_;
    int verbosity_;
};

// Replaces bearer tokens, Authorization values, PEM keys and base64 key data with "***".
std::string maskSecrets(std::string_view text);
std::string maskHeaderValue(std::string_view name, std::string_view value);

}  // namespace rossoctl::kube
