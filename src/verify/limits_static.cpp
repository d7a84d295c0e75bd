// The static half of "limits enforced": every container's limits above zero, a deadline that
// ends within the project's lifetime, a quota covering the pod that caps cpu and memory.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "json_access.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/model/validation.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

// What the pod's node has of cpu and memory: a limit beyond it bounds nothing there (attack 54
// L1). A resource missing here was not known: whether the limits fit the node is not proven.
struct NodeHas {
    std::string name;
    std::map<std::string, std::pair<double, std::string>> capacity;  // amount, as written
};

// The node's capacity, with a line in `unknown` for each resource it does not give (attack 56
// L2: a user who may not read the node got a silent pass).
NodeHas nodeCapacity(const json& node, const std::string& nodeUnread,
                     std::vector<std::string>& unknown) {
    NodeHas has{stringAt(at(node, "metadata"), "name", "?"), {}};
    if (!node.is_object()) {
        unknown.push_back(
            fmt::format("{}: whether the limits fit it is not known",
                        nodeUnread.empty() ? "the pod's node was not read" : nodeUnread));
        return has;
    }
    for (const char* resource : {"cpu", "memory"}) {
        const json& value = at(at(at(node, "status"), "capacity"), resource);
        double amount = 0;
        try {
            if (value.is_string())
                amount = model::parseQuantity(value.get<std::string>(), resource);
        } catch (const std::exception&) {
        }
        if (amount > 0)
            has.capacity[resource] = {amount, value.get<std::string>()};
        else
            unknown.push_back(fmt::format(
                "node {} gives no {} capacity (status.capacity): whether the limits fit it is "
                "not known",
                has.name, resource));
    }
    return has;
}

// A limit the kubelet enforces: a quantity above zero ("0" sets no CFS quota and no memory
// limit at all) and within the node (when given), as text for evidence; nullopt with `why`
// when there is none.
std::optional<std::string> enforcedLimit(const json& limits, const char* resource,
                                         const NodeHas* node, std::string& why) {
    const json& value = at(limits, resource);
    if (value.is_null()) {
        why = fmt::format("no {} limit", resource);
        return std::nullopt;
    }
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    double amount = 0;
    try {
        amount = value.is_number() ? value.get<double>() : model::parseQuantity(text, resource);
    } catch (const std::exception&) {
        why = fmt::format("{} limit {:?} is not a quantity", resource, text);
        return std::nullopt;
    }
    if (!(amount > 0)) {
        why = fmt::format("{} limit {} is no limit (zero sets none)", resource, text);
        return std::nullopt;
    }
    // A limit beyond what the node has bounds nothing there (attack 54 L1: 1000 CPUs, 1Pi).
    if (node)
        if (const auto has = node->capacity.find(resource);
            has != node->capacity.end() && amount > has->second.first) {
            why = fmt::format("{} limit {} is more than node {} has ({}): it bounds nothing there",
                              resource, text, node->name, has->second.second);
            return std::nullopt;
        }
    return text;
}

// Why a quota's scopes leave this pod out ("" when it covers it); a scope not known, or a
// scopeSelector, is taken as not covering it.
std::string quotaScopeMiss(const json& quota, const json& pod) {
    const json& spec = at(quota, "spec");
    if (!at(spec, "scopeSelector").is_null()) return "a scopeSelector, not evaluated here";
    const bool terminating = at(podSpec(pod), "activeDeadlineSeconds").is_number();
    bool bestEffort = true;
    for (const auto& container : allContainers(pod)) {
        const json& resources = at(container, "resources");
        if (!at(resources, "limits").empty() || !at(resources, "requests").empty())
            bestEffort = false;
    }
    for (const auto& scope : arrayAt(spec, "scopes")) {
        const std::string name = scope.is_string() ? scope.get<std::string>() : "";
        if ((name == "Terminating" && terminating) || (name == "NotTerminating" && !terminating) ||
            (name == "BestEffort" && bestEffort) || (name == "NotBestEffort" && !bestEffort))
            continue;
        return fmt::format("scope {}", name.empty() ? scope.dump() : name);
    }
    return "";
}

// Why the containers that run side by side (containers and native sidecars) limit more cpu or
// memory together than the node has, or "".
std::string beyondNodeTogether(const json& pod, const NodeHas& node) {
    std::vector<json> running;
    for (const auto& container : arrayAt(podSpec(pod), "containers")) running.push_back(container);
    for (const auto& container : arrayAt(podSpec(pod), "initContainers"))
        if (stringAt(container, "restartPolicy") == "Always") running.push_back(container);
    if (running.size() < 2) return "";
    for (const auto& [resource, has] : node.capacity) {
        double sum = 0;
        try {
            for (const auto& container : running) {
                const json& value = at(at(at(container, "resources"), "limits"), resource.c_str());
                if (value.is_string())
                    sum += model::parseQuantity(value.get<std::string>(), resource);
                else if (value.is_number())
                    sum += value.get<double>();
            }
        } catch (const std::exception&) {
            continue;  // a limit that is no quantity fails on its own line
        }
        if (sum > has.first)
            return fmt::format(
                "the pod's {} containers together limit {} {}, more than node {} has ({}): "
                "together they bound nothing there",
                running.size(), resource,
                resource == "cpu" ? fmt::format("{:g}", sum) : fmt::format("{:.0f} bytes", sum),
                node.name, has.second);
    }
    return "";
}

}  // namespace

Finding limitsStatic(const json& pod, const json& sandbox, const json& resourceQuotas,
                     const DeadlineBound& bound, const json& node, const std::string& nodeUnread) {
    Finding finding;
    bool holds = true;
    std::vector<std::string> unknown;
    const NodeHas has = nodeCapacity(node, nodeUnread, unknown);
    for (const auto& container : allContainers(pod)) {
        const json& limits = at(at(container, "resources"), "limits");
        std::vector<std::string> missing;
        std::string cpuWhy, memoryWhy;
        const auto cpu = enforcedLimit(limits, "cpu", &has, cpuWhy);
        const auto memory = enforcedLimit(limits, "memory", &has, memoryWhy);
        const std::string name = stringAt(container, "name", "?");
        if (cpu && memory) {
            finding.evidence.push_back(
                fmt::format("container {}: limits cpu={} memory={}", name, *cpu, *memory));
            continue;
        }
        holds = false;
        if (!cpu && !memory && cpuWhy == "no cpu limit" && memoryWhy == "no memory limit") {
            finding.evidence.push_back(
                fmt::format("container {} has no cpu or memory limit", name));
            continue;
        }
        for (const auto& why : {cpuWhy, memoryWhy})
            if (!why.empty())
                finding.evidence.push_back(fmt::format("container {} has {}", name, why));
    }
    // Each within the node, yet together beyond it: the pod's limits bound nothing there either
    // (attack 55 L1b: three containers of 30 CPUs on a 32-CPU node).
    if (const auto total = beyondNodeTogether(pod, has); !total.empty()) {
        holds = false;
        finding.evidence.push_back(total);
    }
    // Ephemeral containers may declare no resources: one that has not ended is unproven, live
    // (a reading from inside it is its own: attack 60 L1).
    for (const auto& container : arrayAt(podSpec(pod), "ephemeralContainers"))
        finding.evidence.push_back(
            fmt::format("ephemeral container {}: no limits of its own (the API allows none); "
                        "unproven live unless it has ended or is verify's own probe",
                        stringAt(container, "name", "?")));
    const json& deadline = at(podSpec(pod), "activeDeadlineSeconds");
    std::string shutdown = stringAt(at(sandbox, "spec"), "shutdownTime");
    if (shutdown.empty()) shutdown = stringAt(at(at(sandbox, "spec"), "lifecycle"), "shutdownTime");
    const auto hours = [](long long seconds) { return fmt::format("{:.1f}h", seconds / 3600.0); };
    // A deadline counts when it ends within the project's lifetime: one years away is none.
    bool bounded = false;
    if (deadline.is_number()) {
        const long long seconds = deadline.get<long long>();
        const bool within = seconds > 0 && seconds <= bound.longest.count();
        bounded = bounded || within;
        finding.evidence.push_back(
            fmt::format("pod activeDeadlineSeconds: {} ({}){}", deadline.dump(), hours(seconds),
                        within ? ""
                               : fmt::format(", beyond {} ({}): not a deadline that counts",
                                             bound.origin, hours(bound.longest.count()))));
    }
    if (!shutdown.empty()) {
        const auto at = kube::parseTimestamp(shutdown);
        const long long seconds =
            at ? std::chrono::duration_cast<std::chrono::seconds>(*at - bound.now).count() : -1;
        const bool within = at && seconds <= bound.longest.count();
        bounded = bounded || within;
        finding.evidence.push_back(fmt::format(
            "sandbox shutdownTime: {}{}", shutdown,
            !at      ? " (not a timestamp)"
            : within ? fmt::format(" (in {})", hours(seconds))
                     : fmt::format(" (in {}), beyond {} ({}): not a deadline that counts",
                                   hours(seconds), bound.origin, hours(bound.longest.count()))));
    }
    if (!deadline.is_number() && shutdown.empty()) {
        holds = false;
        finding.evidence.push_back(
            "no deadline: neither pod activeDeadlineSeconds nor the Sandbox's shutdownTime is set");
    } else if (!bounded) {
        holds = false;
    }
    bool cpuCapped = false, memoryCapped = false;
    for (const auto& quota : resourceQuotas.is_array() ? resourceQuotas : emptyArray()) {
        const json& hard = at(at(quota, "spec"), "hard");
        if (!hard.is_object() || hard.empty()) continue;
        std::vector<std::string> limits;
        for (const auto& [resource, value] : hard.items())
            limits.push_back(resource + "=" +
                             (value.is_string() ? value.get<std::string>() : value.dump()));
        std::vector<std::string> scopes;
        for (const auto& scope : arrayAt(at(quota, "spec"), "scopes"))
            scopes.push_back(scope.is_string() ? scope.get<std::string>() : scope.dump());
        const std::string name = stringAt(at(quota, "metadata"), "name", "?");
        finding.evidence.push_back(
            fmt::format("resourcequota/{}: {}{}", name, joined(limits),
                        scopes.empty() ? "" : " (scopes " + joined(scopes) + ")"));
        const std::string uncovered = quotaScopeMiss(quota, pod);
        if (!uncovered.empty()) {
            finding.evidence.push_back(
                fmt::format("resourcequota/{} does not cover this pod: {}", name, uncovered));
            continue;
        }
        std::string why;
        cpuCapped = cpuCapped || enforcedLimit(hard, "limits.cpu", nullptr, why);
        memoryCapped = memoryCapped || enforcedLimit(hard, "limits.memory", nullptr, why);
    }
    if (!cpuCapped || !memoryCapped) {
        holds = false;
        std::vector<std::string> uncapped;
        if (!cpuCapped) uncapped.push_back("limits.cpu");
        if (!memoryCapped) uncapped.push_back("limits.memory");
        finding.evidence.push_back(fmt::format(
            "no ResourceQuota covering this pod caps {} in the namespace: its pods together are "
            "not bounded",
            joined(uncapped, " or ")));
    }
    for (auto& line : unknown) finding.evidence.push_back(std::move(line));
    finding.verdict = !holds ? Verdict::Fail : unknown.empty() ? Verdict::Pass : Verdict::Unproven;
    return finding;
}

Finding memoryVolumesStatic(const json& pod, const std::optional<bool>& podCgroups,
                            const std::string& why) {
    std::vector<std::string> volumes;
    for (const auto& volume : arrayAt(at(pod, "spec"), "volumes"))
        // Huge pages too: charged to the pod's hugetlb cgroup, none on such a node (review 68).
        if (const std::string medium = stringAt(at(volume, "emptyDir"), "medium");
            medium == "Memory" || medium.rfind("HugePages", 0) == 0)
            volumes.push_back(json_access::shortened(stringAt(volume, "name", "?"), 63));
    if (volumes.empty() || podCgroups == true) return Finding{Verdict::Pass, {}, ""};
    return Finding{
        Verdict::Unproven,
        {fmt::format("memory-backed emptyDir {} keeps what a container wrote after it ends (an "
                     "init container) or restarts, and {}, so no pod cgroup bounds it: each "
                     "may hold up to the pod's memory limit outside every container's (attack "
                     "67 C2)",
                     json_access::fewOf(volumes),
                     podCgroups == false ? std::string("the node's kubelet runs with cgroupsPerQOS "
                                                       "false")
                                         : "whether the node's kubelet makes pod cgroups is not "
                                           "known (" +
                                               why + ")")},
        ""};
}

}  // namespace rossoctl::verify
