#pragma once
// The start window (attack 56 E7): a network engine may enforce a new pod's NetworkPolicies
// some milliseconds after its containers start, and a container that sends in that window and
// keeps no socket leaves nothing for verify to read. rossoctl's own pods start with the egress
// gate (model/egress_gate.hpp), which holds every other container back until a connect to the
// API server fails; only that gate, exactly as rossoctl writes it, closes the window.
#include <nlohmann/json.hpp>
#include <string>

#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/external_names.hpp"
#include "rossoctl/verify/probe_site.hpp"

namespace rossoctl::verify {

// Pass when the pod's first init container is the gate as model::egressGateContainer(gateImage)
// writes it, it ended with exit code 0 and its termination message says the policies held;
// unproven otherwise (no gate, an edited one, one that did not confirm).
// ours: this run's trusted probe in pod, which may start in the gate's last second (by the name
// this run made and its spec, review 61 #8); none when it has no container name.
Finding egressGateLive(const nlohmann::json& pod, const std::string& gateImage,
                       const ProbeSite& ours = {});

// Unproven when a Service read claims an address the gate connects to (the `kubernetes`
// Service's cluster IPs, the first egress.apiServerServiceCount of egress.apiServerTargets) as
// an external or load-balancer IP: a service proxy may send the gate's connect to that
// Service's pods, which can refuse it before the pod's policies hold (review 58 G2), or when
// the pod's namespace's Services were not read. Pass otherwise.
Finding egressGateTargetClaims(const ExternalNames& services, const EgressInputs& egress);

// Unproven when the pod spec the Sandbox's template makes (static) has no gate as rossoctl
// writes it: its pods' first milliseconds are open; pass otherwise.
Finding egressGateStatic(const nlohmann::json& pod, const std::string& gateImage);

}  // namespace rossoctl::verify
