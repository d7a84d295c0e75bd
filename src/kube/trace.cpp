#include "rossoctl/kube/trace.hpp"

#include <fmt/format.h>

#include <string>

namespace rossoctl::kube {

namespace {

constexpr size_t kMaxTracedBody = 10 * 1024;

// Masked first, then cut: a cut can then never expose half a secret.
std::string tracedBody(std::string_view body) {
    std::string masked = maskSecretsInBody(body);
    if (masked.size() <= kMaxTracedBody) return masked;
    size_t dropped = masked.size() - kMaxTracedBody;
    masked.resize(kMaxTracedBody);
    return masked + fmt::format(" [truncated {} bytes]", dropped);
}

}  // namespace

std::string RequestTracer::shown(std::string_view text) const {
    return escape_ ? escape_(text) : std::string(text);
}

void RequestTracer::request(const HttpRequest& request) const {
    if (verbosity_ < 7) return;
    err_ << request.method << ' ' << maskSecrets(request.url) << '\n';
    err_ << "Request Headers:\n";
    for (const auto& [name, value] : request.headers) {
        err_ << "    " << name << ": " << maskHeaderValue(name, value) << '\n';
    }
    if (verbosity_ >= 8 && !request.body.empty()) {
        err_ << "Request Body: " << shown(tracedBody(request.body)) << '\n';
    }
}

void RequestTracer::response(const HttpRequest& request, long status,
                             std::chrono::milliseconds took, std::string_view body) const {
    if (verbosity_ < 6) return;
    std::string_view phrase = httpReasonPhrase(status);
    err_ << fmt::format("{} {} {}{}{} in {} milliseconds\n", request.method,
                        maskSecrets(request.url), status, phrase.empty() ? "" : " ", phrase,
                        took.count());
    if (verbosity_ >= 8 && !body.empty()) {
        err_ << "Response Body: " << shown(tracedBody(body)) << '\n';
    }
    err_.flush();
}

void RequestTracer::failure(const HttpRequest& request, const std::string& what) const {
    if (verbosity_ < 6) return;
    err_ << request.method << ' ' << maskSecrets(request.url)
         << " failed: " << shown(maskSecrets(what)) << '\n';
    err_.flush();
}

}  // namespace rossoctl::kube
