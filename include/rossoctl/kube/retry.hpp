#pragma once
// When a failed request may be sent again, and after how long: pure, so it is unit-tested.
#include <chrono>
#include <optional>
#include <string>

namespace rossoctl::kube {

struct RetryPolicy {
    int maxAttempts = 5;
    std::chrono::milliseconds initialBackoff{200};
    std::chrono::milliseconds maxBackoff{5000};
};

struct AttemptOutcome {
    int attempt = 1;             // 1-based, the attempt that just failed
    bool idempotent = true;      // GET, PUT with resourceVersion, DELETE with precondition...
    long httpStatus = 0;         // 0 when the transport failed
    bool connectFailed = false;  // the request never reached the server
    bool transportFailed = false;
    std::string retryAfter;  // Retry-After header, seconds
    // 409 from the quota admission plugin losing a race on the ResourceQuota's status: the
    // request was refused before anything was stored, so any method may be sent again.
    bool quotaConflict = false;
};

// nullopt = do not retry. 429 honours Retry-After; 5xx and resets only when idempotent;
// a connection that never opened, and a quota conflict, are safe to retry for any method.
std::optional<std::chrono::milliseconds> retryDelay(const RetryPolicy& policy,
                                                    const AttemptOutcome& outcome);

}  // namespace rossoctl::kube
