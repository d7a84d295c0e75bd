#pragma once
// Where a live probe runs. By default in the pod's own container, with tools the agent
// controls; with --trusted-probe IMAGE in an ephemeral container added to the pod
// (pods/ephemeralcontainers) that shares its network namespace but not its filesystem, so
// the agent cannot replace the tools or forge what they print.
#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "rossoctl/clock.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/cancel.hpp"
#include "rossoctl/kube/client.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

struct ProbeSite {
    std::string container;  // what pods/exec targets
    std::string image;      // the trusted probe's image; empty: the pod's own container
    bool trusted() const { return !image.empty(); }
    // "ran in a trusted probe container (IMAGE), ..." or "ran in the pod, ...": the evidence line
    // that says where a probe ran.
    std::string label() const;
};

ProbeSite podProbeSite(const std::string& container);

// Puts site.label() first in the finding's evidence; a finding from the pod is forgeable.
void noteProbeSite(Finding& finding, const ProbeSite& site);

// Egress is proven only live: a forgeable "could not connect" is unproven (a connection the
// pod reports still fails).
Finding withoutForgeableDenial(Finding live);

// The cluster or its node cannot run the trusted probe (no pods/ephemeralcontainers, the
// container never started, the image could not be pulled): the live parts it was to prove
// are unproven; they never fall back to the pod's own tools.
class TrustedProbeUnavailable : public Error {
  public:
    using Error::Error;
};

struct TrustedProbeOptions {
    std::string image;
    std::string name;  // the ephemeral container's name; empty: rossoctl-probe-RANDOM
    // How long the container lives (its command sleeps this long): ephemeral containers
    // cannot be removed from a pod, so the one added by verify ends on its own.
    std::chrono::seconds lifetime{600};
    std::chrono::milliseconds startTimeout{std::chrono::seconds(60)};
    const kube::CancelFlag* cancel = nullptr;
};

// PID 1 of the trusted probe's container: a shell that sleeps for its lifetime, as nobody.
inline constexpr std::string_view kTrustedProbeInit = "sh";
inline constexpr long long kTrustedProbeUser = 65534;

// The ephemeral container added to the pod: PodSecurity "restricted" compliant, sleeping
// for `lifetime` and ending at once on SIGTERM. It shares the pod's network only: in an agent's
// process namespace the agent could write into the probe's output or stop its tools.
nlohmann::json trustedProbeContainer(const std::string& name, const TrustedProbeOptions& options);

// Whether container is one trustedProbeContainer made with this image: its name, command and
// securityContext as verify writes them and nothing of substance beside (the API's defaults).
bool isTrustedProbeContainer(const nlohmann::json& container, const std::string& image);

// Adds the ephemeral container to pod and waits until it runs. Throws Error when RBAC
// forbids pods/ephemeralcontainers, TrustedProbeUnavailable when it cannot run or when the
// container the server stored is not the one written (an admission webhook may add
// targetContainerName, another user or image) or the pod now shares a PID namespace.
ProbeSite startTrustedProbe(kube::Client& client, const Clock& clock, const nlohmann::json& pod,
                            const TrustedProbeOptions& options);

// Ends the trusted probe verify started in pod (SIGTERM to its PID 1), so that the pod does not
// keep an unbounded container a later verify, without this image, must fail limits for. Best
// effort: where the exec fails, the probe's lifetime ends it.
void endTrustedProbe(kube::Client& client, const std::string& namespaceName, const std::string& pod,
                     const ProbeSite& site);

}  // namespace rossoctl::verify
