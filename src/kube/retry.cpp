#include "rossoctl/kube/retry.hpp"

#include <algorithm>
#include <cctype>

namespace rossoctl::kube {

namespace {

// Retry-After longer than this is treated as "give up now" rather than a hung command.
constexpr std::chrono::seconds kMaxRetryAfter{60};

// Only the delta-seconds form: the apiserver never sends an HTTP date.
std::optional<std::chrono::milliseconds> parseRetryAfter(const std::string& value) {
    if (value.empty() || value.size() > 9) return std::nullopt;
    if (!std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c); })) {
        return std::nullopt;
    }
    std::chrono::seconds seconds{std::stol(value)};
    if (seconds > kMaxRetryAfter) return std::nullopt;
    return std::chrono::duration_cast<std::chrono::milliseconds>(seconds);
}

std::chrono::milliseconds exponentialBackoff(const RetryPolicy& policy, int attempt) {
    auto delay = policy.initialBackoff;
    for (int i = 1; i < attempt && delay < policy.maxBackoff; ++i) delay *= 2;
    return std::min(delay, policy.maxBackoff);
}

bool isRetryableServerError(long status) {
    // 501 and 505 say the request can never succeed; the rest are transient by nature.
    return status >= 500 && status != 501 && status != 505;
}

}  // namespace

std::optional<std::chrono::milliseconds> retryDelay(const RetryPolicy& policy,
                                                    const AttemptOutcome& outcome) {
    if (outcome.attempt >= policy.maxAttempts) return std::nullopt;
    const auto backoff = exponentialBackoff(policy, outcome.attempt);

    if (outcome.httpStatus == 429) {
        // Throttled requests were not processed, so any method may be sent again.
        if (outcome.retryAfter.empty()) return backoff;
        auto retryAfter = parseRetryAfter(outcome.retryAfter);
        if (!retryAfter) return std::nullopt;
        return std::max(*retryAfter, policy.initialBackoff);
    }
    if (outcome.httpStatus == 409)
        return outcome.quotaConflict ? std::optional(backoff) : std::nullopt;
    if (isRetryableServerError(outcome.httpStatus)) {
        if (!outcome.idempotent) return std::nullopt;
        if (auto retryAfter = parseRetryAfter(outcome.retryAfter)) {
            return std::max(*retryAfter, backoff);
        }
        return backoff;
    }
    if (outcome.httpStatus != 0) return std::nullopt;
    if (outcome.connectFailed) return backoff;
    if (outcome.transportFailed && outcome.idempotent) return backoff;
    return std::nullopt;
}

}  // namespace rossoctl::kube
