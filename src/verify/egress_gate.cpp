#include "rossoctl/verify/egress_gate.hpp"

#include <fmt/format.h>

#include <cctype>

#include "rossoctl/model/egress_gate.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

constexpr const char* kStartWindow =
    "the pod's containers may send in their first milliseconds, before the network engine "
    "enforces its policies, and leave no socket to read";

const json& gateMember(const json& object, const char* name) {
    static const json kNone;
    if (!object.is_object()) return kNone;
    const auto it = object.find(name);
    return it == object.end() ? kNone : *it;
}

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

std::string stringOf(const json& value) {
    return value.is_string() ? value.get<std::string>() : "";
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
    const std::string mismatch = model::egressGateMismatch(gateMember(pod, "spec"), gateImage);
    if (!mismatch.empty())
        return gateDoubt(
            fmt::format("this pod has no rossoctl egress gate ({}); {}", mismatch, kGetAGate));
    const json* status = nullptr;
    const json& statuses = gateMember(gateMember(pod, "status"), "initContainerStatuses");
    if (statuses.is_array())
        for (const auto& one : statuses)
            if (gateMember(one, "name") == model::kEgressGateName) status = &one;
    static const json kNoState;
    const json& terminated =
        status ? gateMember(gateMember(*status, "state"), "terminated") : kNoState;
    if (!terminated.is_object())
        return gateDoubt("the rossoctl egress gate did not confirm: it has not finished");
    const json& code = gateMember(terminated, "exitCode");
    if (!code.is_number_integer() || code.get<long>() != 0)
        return gateDoubt(fmt::format("the rossoctl egress gate did not confirm: it ended with {}",
                                     code.is_number_integer()
                                         ? fmt::format("exit code {}", code.get<long>())
                                         : std::string("no exit code")));
    const json& message = gateMember(terminated, "message");
    const std::string text = message.is_string() ? message.get<std::string>() : "";
    const std::string tries = heldTries(text);
    if (tries.empty()) {
        std::string said = text.substr(0, text.find('\n'));
        if (said.size() > 160) said = said.substr(0, 160) + "...";
        return gateDoubt(fmt::format("the rossoctl egress gate did not confirm (it said: {})",
                                     said.empty() ? "nothing" : said));
    }
    // The kubelet starts an ephemeral container whenever it is added, gate or not (review 58
    // G3): one that started before the gate ended sent in the window the gate speaks for.
    const std::string gateEnd = stringOf(gateMember(terminated, "finishedAt"));
    const json& ephemeral = gateMember(gateMember(pod, "status"), "ephemeralContainerStatuses");
    if (ephemeral.is_array())
        for (const auto& one : ephemeral) {
            const json& state = gateMember(one, "state");
            const json& started = gateMember(gateMember(state, "running"), "startedAt").is_null()
                                      ? gateMember(gateMember(state, "terminated"), "startedAt")
                                      : gateMember(gateMember(state, "running"), "startedAt");
            if (gateMember(state, "running").is_null() && gateMember(state, "terminated").is_null())
                continue;  // never started
            // RFC 3339 in UTC, as the kubelet writes it, to the second: text order is time
            // order. Verify's own probe may start in the gate's last second; any other may not.
            const std::string name = stringOf(gateMember(one, "name"));
            const bool ours = name.rfind("rossoctl-probe-", 0) == 0;
            if (gateEnd.empty() || stringOf(started).empty() || stringOf(started) < gateEnd ||
                (!ours && stringOf(started) == gateEnd))
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

Finding egressGateStatic(const json& pod, const std::string& gateImage) {
    const std::string mismatch = model::egressGateMismatch(gateMember(pod, "spec"), gateImage);
    if (!mismatch.empty())
        return gateDoubt(
            fmt::format("its pods have no rossoctl egress gate ({}); {}", mismatch, kGetAGate));
    return Finding{Verdict::Pass, {}, ""};
}

}  // namespace rossoctl::verify
