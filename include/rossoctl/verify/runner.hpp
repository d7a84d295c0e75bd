#pragma once
// Verifying one sandbox: read its pod and the objects around it, run the three independent
// checks concurrently (each on its own connection), then the destructive one last.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rossoctl/clock.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

struct SandboxReport {
    std::string name;
    std::string namespaceName;
    std::string pod;
    std::string podUid;
    std::string container;
    std::vector<CheckResult> checks;
    std::string error;  // set when verification could not run at all
    // An API outage or broken stream that left a check unproven: an error of the run (exit 1),
    // not a boundary the sandbox leaves open (exit 3).
    std::string runError;
    // The run itself broke (API connection lost, exec stream broken): what is unproven for
    // these reasons is not the sandbox's doing, so it exits 1, not 3.
    std::vector<std::string> runProblems;
    // What the run did to the sandbox that its user should know: the files its restart lost.
    std::vector<std::string> notes;
    // Ctrl-C cut the run short: the checks it stopped are unproven and the report is partial.
    bool interrupted = false;
    std::chrono::milliseconds took{0};
    // fail if any check fails, else unproven if any is, else pass (error: fail).
    Verdict verdict() const;
};

struct VerifyOptions {
    EgressTarget egressTarget;
    bool restart = true;  // false: the nothing-survives live part is skipped (unproven)
    // Non-empty: the egress probe runs in an ephemeral container of this image (see
    // probe_site.hpp), not with the pod's own tools.
    std::string trustedProbeImage;
    // Non-empty: kernel isolation requires this RuntimeClass (beside the project's annotation).
    std::string requireRuntimeClass;
    std::chrono::milliseconds timeout{std::chrono::minutes(2)};  // the restart's wait
    const kube::CancelFlag* cancel = nullptr;
    // Progress ("deleting pod orders to prove nothing survives").
    std::function<void(const std::string&)> onStep;
    // The positive control for the egress probe (connectFromHere with the Context's resolver).
    ControlProbe control;
};

using ClientFactory = std::function<std::unique_ptr<kube::Client>()>;

// Throws Error when the sandbox cannot be verified: not found, not running, no Running pod.
SandboxReport verifySandbox(kube::Client& client, const ClientFactory& newClient,
                            const Clock& clock, const kube::ResourceRef& sandboxes,
                            const std::string& ns, const std::string& name,
                            const VerifyOptions& options);

}  // namespace rossoctl::verify
