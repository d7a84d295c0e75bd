#pragma once
// -v 6/7/8 request tracing to stderr with every secret masked.
#include <chrono>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "rossoctl/kube/transport.hpp"

namespace rossoctl::kube {

// What makes server-written text safe for the stream the trace goes to (a terminal: escape its
// control characters; kube cannot see ui, so the caller hands it in). Unset: unchanged.
using TraceEscaper = std::function<std::string(std::string_view)>;

class RequestTracer {
  public:
    RequestTracer(std::ostream& err, int verbosity, TraceEscaper escape = {})
        : err_(err), verbosity_(verbosity), escape_(std::move(escape)) {}
    int verbosity() const { return verbosity_; }
    void request(const HttpRequest& request) const;
    void response(const HttpRequest& request, long status, std::chrono::milliseconds took,
                  std::string_view body) const;
    void failure(const HttpRequest& request, const std::string& what) const;

  private:
    std::string shown(std::string_view text) const;
    std::ostream& err_;
    int verbosity_;
    TraceEscaper escape_;
};

// Replaces bearer tokens, Authorization values, PEM keys and base64 key data with "***".
std::string maskSecrets(std::string_view text);
// maskSecrets for a request or response body: when it is JSON, also every env[].value, the
// data and stringData of Secrets (in a list or watch event too), ConfigMap entries that read
// like credentials, and strings holding JSON (masked alike) or YAML; then the text masks.
std::string maskSecretsInBody(std::string_view body);
std::string maskHeaderValue(std::string_view name, std::string_view value);

}  // namespace rossoctl::kube
