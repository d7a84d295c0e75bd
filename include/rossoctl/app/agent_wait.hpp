#pragma once
// `agents wait`: follows an agent's workload until it is ready, rides out API outages within
// the time-out (kube::waitForSet), and for a Sandbox does not trust a Ready condition older
// than its pod: right after a restart the status still says Ready while the pod is gone.
#include <chrono>
#include <string>

#include "rossoctl/app/agents.hpp"
#include "rossoctl/clock.hpp"
#include "rossoctl/kube/cancel.hpp"

namespace rossoctl::app {

struct AgentWaitResult {
    enum class Outcome { Ready, Failed, Deleted, TimedOut, Cancelled } outcome = Outcome::TimedOut;
    model::WorkloadStatus status;  // the last one seen
    std::string waitingFor;        // on a time-out: what was still missing
};

AgentWaitResult waitForAgent(kube::Client& client, const Clock& clock, const Agent& agent,
                             std::chrono::milliseconds timeout, const kube::CancelFlag* cancel);

}  // namespace rossoctl::app
