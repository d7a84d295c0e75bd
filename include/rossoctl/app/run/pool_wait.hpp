#pragma once
// `sandbox pool --wait`: until the pool of one shape is full, naming what keeps it from filling
// (quota, LimitRange, an image that cannot be pulled) as soon as it shows instead of the time-out.
#include <chrono>
#include <string>

#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/clock.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"

namespace rossoctl::app::run {

// The SandboxWarmPool `name` has `size` ready sandboxes. Throws Error naming the blocker or,
// after `timeout` (`timeoutText` as the user wrote it), how far it got.
void waitForWarmPool(kube::Client& client, const Clock& clock, const kube::CancelFlag* cancel,
                     const std::string& ns, const std::string& name, int size,
                     std::chrono::milliseconds timeout, const std::string& timeoutText);

// The fallback pool of bare pods of `shape` has `size` running pods; throws as above.
void waitForBarePool(kube::Client& client, const Clock& clock, const kube::CancelFlag* cancel,
                     const std::string& ns, const RunPodShape& shape, int size,
                     std::chrono::milliseconds timeout, const std::string& timeoutText);

}  // namespace rossoctl::app::run
