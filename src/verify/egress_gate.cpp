#include "rossoctl/verify/egress_gate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "json_access.hpp"
#include "rossoctl/model/egress_gate.hpp"
#include "rossoctl/verify/image_provenance.hpp"

namespace rossoctl::verify {

using json_access::at;
using json_access::stringAt;
using nlohmann::json;

namespace {

constexpr const char* kStartWindow =
    "the pod's containers may send in their first milliseconds, before the network engine "
    "enforces its policies, and leave no socket to read";

// "rossoctl-egress-gate: policies held after N tries" (one line, as the gate writes it): N.
std::string heldTries(const std::string& message) {
    const std::string prefix = model::kGateHeldPrefix;
    std::string text = message;
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (text.compare(0, prefix.size(), prefix) != 0) return "";
    std::string rest = text.substr(prefix.size());
    const std::string suffix = " tries";
    if (rest.size() <= suffix.size() ||
        rest.compare(rest.size() - suffix.size(), suffix.size(), suffix) != 0)
        return "";
    rest.resize(rest.size() - suffix.size());
    if (rest.size() > 6) return "";
    for (char c : rest)
        if (!std::isdigit(static_cast<unsigned char>(c))) return "";
    return rest;
}

// At most 160 bytes of what a server wrote, for the evidence.
std::string clipped(std::string text) {
    text = text.substr(0, text.find('\n'));
    return text.size() > 160 ? text.substr(0, 160) + "..." : text;
}

// What the kubelet says the gate ran: an image edited into the pod after the gate ended
// changes the spec, not what ran (review 58 G4). "" when it ran the gate image.
std::string ranImageMismatch(const json& status, const std::string& gateImage) {
    const std::string ran = stringAt(status, "image");
    if (ran.empty()) return "the kubelet did not say which image it ran";
    const ImageReference want = parseImageReference(gateImage);
    const ImageReference got = parseImageReference(ran);
    if (want.registry == got.registry && want.repository == got.repository && want.tag == got.tag &&
        want.digest == got.digest)
        return "";
    return fmt::format("the kubelet says it ran {}, not the project's gate image {}", clipped(ran),
                       gateImage);
}

Finding gateDoubt(const std::string& why) {
    return Finding{Verdict::Unproven, {fmt::format("{}; {}", kStartWindow, why)}, ""};
}

// A Sandbox from another tool, an older rossoctl or a plain namespace: how to get the gate.
constexpr const char* kGetAGate =
    "rossoctl writes the gate into a Sandbox `agents import` makes in a namespace `project "
    "create` made (run it again on a project an older rossoctl made): import it again there";

}  // namespace

Finding egressGateLive(const json& pod, const std::string& gateImage) {
    const std::string mismatch = model::egressGateMismatch(at(pod, "spec"), gateImage);
    if (!mismatch.empty())
        return gateDoubt(
            fmt::format("this pod has no rossoctl egress gate ({}); {}", mismatch, kGetAGate));
    const json* status = nullptr;
    const json& statuses = at(at(pod, "status"), "initContainerStatuses");
    if (statuses.is_array())
        for (const auto& one : statuses)
            if (at(one, "name") == model::kEgressGateName) status = &one;
    static const json kNoState;
    const json& terminated = status ? at(at(*status, "state"), "terminated") : kNoState;
    if (!terminated.is_object())
        return gateDoubt("the rossoctl egress gate did not confirm: it has not finished");
    const json& code = at(terminated, "exitCode");
    if (!code.is_number_integer() || code.get<long>() != 0)
        return gateDoubt(fmt::format("the rossoctl egress gate did not confirm: it ended with {}",
                                     code.is_number_integer()
                                         ? fmt::format("exit code {}", code.get<long>())
                                         : std::string("no exit code")));
    const std::string text = stringAt(terminated, "message");
    const std::string tries = heldTries(text);
    if (tries.empty())
        return gateDoubt(fmt::format("the rossoctl egress gate did not confirm (it said: {})",
                                     text.empty() ? "nothing" : clipped(text)));
    if (const std::string ran = ranImageMismatch(*status, gateImage); !ran.empty())
        return gateDoubt(fmt::format("the rossoctl egress gate's word does not count: {}", ran));
    // The kubelet starts an ephemeral container whenever it is added, gate or not (review 58
    // G3): one that started before the gate ended sent in the window the gate speaks for.
    const std::string gateEnd = stringAt(terminated, "finishedAt");
    const json& ephemeral = at(at(pod, "status"), "ephemeralContainerStatuses");
    if (ephemeral.is_array())
        for (const auto& one : ephemeral) {
            const json& state = at(one, "state");
            if (at(state, "running").is_null() && at(state, "terminated").is_null())
                continue;  // never started
            const std::string started = stringAt(
                at(state, at(state, "running").is_null() ? "terminated" : "running"), "startedAt");
            // RFC 3339 in UTC, as the kubelet writes it, to the second: text order is time
            // order. Verify's own probe may start in the gate's last second; any other may not.
            const std::string name = stringAt(one, "name");
            const bool ours = name.rfind("rossoctl-probe-", 0) == 0;
            if (gateEnd.empty() || started.empty() || started < gateEnd ||
                (!ours && started == gateEnd))
                return gateDoubt(fmt::format(
                    "ephemeral container {} started before the rossoctl egress gate ended (or "
                    "when is not known), so it ran in the window the gate speaks for",
                    name));
        }
    return Finding{Verdict::Pass,
                   {fmt::format("no container started before the policies held: rossoctl's "
                                "egress gate saw them enforced ({} {})",
                                tries, tries == "1" ? "try" : "tries")},
                   ""};
}

Finding egressGateTargetClaims(const ExternalNames& services,
                               const std::vector<std::string>& gateTargets) {
    // Services not read leave the Service checks unproven already; not said twice.
    for (const auto& service : services.names)
        for (const auto& address : service.claimedAddresses) {
            if (gateTargets.empty())  // the `kubernetes` Service was not read (forbidden)
                return gateDoubt(fmt::format(
                    "Service {}/{} claims {} as an external IP, and the API server's address "
                    "the gate connects to was not read, so it may be that one: its pods may "
                    "refuse the gate's connect before the pod's policies hold",
                    service.ns, service.name, clipped(address)));
            if (std::find(gateTargets.begin(), gateTargets.end(), address) != gateTargets.end())
                return gateDoubt(fmt::format(
                    "Service {}/{} claims {}, the API server's address the gate connects to, "
                    "as an external IP: its pods may refuse the gate's connect before the "
                    "pod's policies hold",
                    service.ns, service.name, address));
        }
    return Finding{Verdict::Pass, {}, ""};
}

Finding egressGateStatic(const json& pod, const std::string& gateImage) {
    const std::string mismatch = model::egressGateMismatch(at(pod, "spec"), gateImage);
    if (!mismatch.empty())
        return gateDoubt(
            fmt::format("its pods have no rossoctl egress gate ({}); {}", mismatch, kGetAGate));
    return Finding{Verdict::Pass, {}, ""};
}

}  // namespace rossoctl::verify
