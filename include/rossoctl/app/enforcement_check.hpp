#pragma once
// The live check at the end of `project create`: NetworkPolicy objects are accepted by every
// cluster, but only a network plugin that enforces them makes default-deny real. Two short-
// lived pods in the project prove it: a client reaches a server once a temporary policy allows
// exactly that (the positive control: the network and the server work, policies are acted
// on), and cannot once that policy is gone (the project's default-deny holds egress).
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rossoctl/app/interrupt_note.hpp"
#include "rossoctl/clock.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/model/egress_gate.hpp"

namespace rossoctl::app {

enum class Enforcement { Enforced, NotEnforced, Unproven };

struct EnforcementResult {
    Enforcement verdict = Enforcement::Unproven;
    std::vector<std::string> evidence;
    std::chrono::milliseconds took{0};
    bool cancelled = false;  // Ctrl-C cut the check short
    // The check's objects that could not be deleted ("pod/rossoctl-check-1a2b3c-client").
    std::vector<std::string> leftBehind;
};

struct EnforcementCheckOptions {
    std::string image = model::kDefaultGateImage;  // needs sh and python3 or nc
    std::string runtimeClass;                      // the project's required RuntimeClass, if any
    std::chrono::milliseconds startTimeout{std::chrono::seconds(60)};
    std::chrono::milliseconds connectTimeout{std::chrono::seconds(1)};
    // How long a rule change may take to reach the network plugin.
    std::chrono::milliseconds settleTimeout{std::chrono::seconds(8)};
    // How long the removal of the allowing policy may take before "not enforced": a plugin
    // that lost its apiserver watch relists on a back-off of up to 30 s. Costs time only
    // when enforcement is missing.
    std::chrono::milliseconds removalTimeout{std::chrono::seconds(30)};
    const kube::CancelFlag* cancel = nullptr;
    // A client that Ctrl-C does not cut, so the check's objects are deleted after it too; the
    // checking client when none is given.
    std::function<std::unique_ptr<kube::Client>()> cleanupClient;
    // Where the check says, while its objects exist, what a second Ctrl-C would leave.
    InterruptNote* interruptNote = nullptr;
};

inline constexpr int kEnforcementCheckPort = 8080;
inline constexpr const char* kEnforcementCheckLabel = "rossoctl.dev/enforcement-check";
// The check's pods end by their activeDeadlineSeconds; no check runs longer than this, so `gc`
// collects a check's objects older than it (and at once those whose process is gone: they
// carry its run::kRunOwnerAnnotation).
inline constexpr int kEnforcementCheckPodSeconds = 120;
inline constexpr std::chrono::minutes kEnforcementCheckLifetime{5};

// The objects the check creates, named after `id`: the server and client pods, the policy that
// opens the server's ingress for the whole check, and the control policy allowing the client's
// egress to it; each annotated with `owner` (the process running the check) when one is given.
struct EnforcementObjects {
    nlohmann::json server;
    nlohmann::json client;
    nlohmann::json serverIngress;
    nlohmann::json control;
};
EnforcementObjects enforcementObjects(const std::string& ns, const std::string& id,
                                      const EnforcementCheckOptions& options,
                                      const std::string& owner = {});

// The command exec'd in the client: connects to HOST PORT within SECONDS and prints
// "rossoctl-connect=connected" or "rossoctl-connect=failed REASON".
std::vector<std::string> connectProbeCommand(const std::string& host, int port, int seconds);

// Runs the check in namespace ns and removes what it created on every path out.
EnforcementResult checkDefaultDenyEnforced(kube::Client& client, const Clock& clock,
                                           const std::string& ns,
                                           const EnforcementCheckOptions& options);

}  // namespace rossoctl::app
