#include "rossoctl/verify/egress_gate.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include "json_access.hpp"
#include "rossoctl/model/egress_gate.hpp"
#include "rossoctl/verify/image_provenance.hpp"
#include "rossoctl/verify/probe_site.hpp"

namespace rossoctl::verify {

using json_access::arrayAt;
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
    const ImageReference want = parseImageReference(gateImage);
    if (!want.digest.empty()) {
        // Pinned: the runtime names the image by its config ID or any tag it has on the node;
        // imageID carries the digest it was pulled by (review 59 #7).
        const std::string id = stringAt(status, "imageID");
        const auto at = id.rfind('@');
        if (at != std::string::npos && id.substr(at + 1) == want.digest) return "";
        return fmt::format("the kubelet says it ran the image {}, not the project's gate image {}",
                           id.empty() ? "(no imageID)" : clipped(id), gateImage);
    }
    const std::string ran = stringAt(status, "image");
    if (ran.empty()) return "the kubelet did not say which image it ran";
    const ImageReference got = parseImageReference(ran);
    if (want.registry == got.registry && want.repository == got.repository && want.tag == got.tag &&
        got.digest.empty())
        return "";
    // containerd names an image by the first of its tags on the node (review 59 #8).
    return fmt::format(
        "the kubelet says it ran {}, not the project's gate image {} (a node that holds one "
        "image under several names may say another: pin the gate by digest, `project create "
        "--check-image NAME@sha256:...`)",
        clipped(ran), gateImage);
}

// An address as service proxies read it (Go's ParseIPSloppy: IPv4 octets with leading zeros
// are decimal, an IPv4-mapped IPv6 address is the IPv4 one), in one spelling; nullopt when it
// is none.
std::optional<std::string> canonicalAddress(const std::string& text) {
    std::array<unsigned, 4> octets{};
    size_t part = 0, digits = 0;
    bool v4 = !text.empty();
    for (char c : text) {
        if (c == '.') {
            if (digits == 0 || ++part > 3) v4 = false;
            digits = 0;
        } else if (c >= '0' && c <= '9' && digits < 4) {
            octets[part] = octets[part] * 10 + static_cast<unsigned>(c - '0');
            ++digits;
        } else {
            v4 = false;
        }
        if (!v4) break;
    }
    if (v4 && part == 3 && digits > 0 &&
        std::all_of(octets.begin(), octets.end(), [](unsigned o) { return o < 256; }))
        return fmt::format("{}.{}.{}.{}", octets[0], octets[1], octets[2], octets[3]);
    in6_addr v6{};
    if (::inet_pton(AF_INET6, text.c_str(), &v6) != 1) return std::nullopt;
    if (IN6_IS_ADDR_V4MAPPED(&v6))
        return fmt::format("{}.{}.{}.{}", v6.s6_addr[12], v6.s6_addr[13], v6.s6_addr[14],
                           v6.s6_addr[15]);
    char out[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET6, &v6, out, sizeof out);
    return std::string(out);
}

Finding gateDoubt(const std::string& why) {
    return Finding{Verdict::Unproven, {fmt::format("{}; {}", kStartWindow, why)}, ""};
}

// A Sandbox from another tool, an older rossoctl or a plain namespace: how to get the gate.
constexpr const char* kGetAGate =
    "rossoctl writes the gate into a Sandbox `agents import` makes in a namespace `project "
    "create` made (run it again on a project an older rossoctl made): import it again there";

}  // namespace

Finding egressGateLive(const json& pod, const std::string& gateImage, const ProbeSite& ours) {
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
            // This run's by the name it made and by its spec (attack 59 D2): a lookalike of
            // another's is not (review 61 #8).
            bool isOurs = false;
            if (ours.trusted() && !ours.container.empty() && name == ours.container)
                for (const auto& container : arrayAt(at(pod, "spec"), "ephemeralContainers"))
                    isOurs = isOurs || (at(container, "name") == name &&
                                        isTrustedProbeContainer(container, ours.image));
            if (gateEnd.empty() || started.empty() || started < gateEnd ||
                (!isOurs && started == gateEnd))
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

Finding egressGateTargetClaims(const ExternalNames& services, const EgressInputs& egress) {
    // The pod's namespace is its editors', the likeliest claimants: unread, it is unproven.
    if (services.read && !services.problem.empty())
        return gateDoubt(fmt::format(
            "the Services of namespace {} were not read, so whether one claims the API server's "
            "address the gate connects to as an external IP is not known",
            services.ns));
    std::vector<std::string> targets;
    for (size_t i = 0; i < egress.apiServerTargets.size() && i < egress.apiServerServiceCount; ++i)
        if (auto canonical = canonicalAddress(egress.apiServerTargets[i].first))
            targets.push_back(*canonical);
    for (const auto& service : services.names)
        for (const auto& written : service.claimedAddresses) {
            const auto address = canonicalAddress(written);
            if (!address)  // the API server reads some spellings verify does not
                return gateDoubt(fmt::format(
                    "Service {}/{} claims {:?} as an external IP, an address verify cannot read: "
                    "it may be the API server's the gate connects to",
                    service.ns, service.name, clipped(written)));
            if (targets.empty())  // the `kubernetes` Service was not read (forbidden)
                return gateDoubt(fmt::format(
                    "Service {}/{} claims {} as an external IP, and the API server's address "
                    "the gate connects to was not read, so it may be that one: its pods may "
                    "refuse the gate's connect before the pod's policies hold",
                    service.ns, service.name, *address));
            if (std::find(targets.begin(), targets.end(), *address) != targets.end())
                return gateDoubt(fmt::format(
                    "Service {}/{} claims {}, the API server's address the gate connects to, "
                    "as an external IP: its pods may refuse the gate's connect before the "
                    "pod's policies hold",
                    service.ns, service.name, *address));
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
