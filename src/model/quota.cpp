#include "rossoctl/model/quota.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "rossoctl/model/validation.hpp"

namespace rossoctl::model {

using nlohmann::json;

namespace {

using Usage = std::map<std::string, double>;

// The resources podUsage counts: what a refusal's "requested" may be weighed in here.
const std::set<std::string> kWeighed = {"pods",
                                        "count/pods",
                                        "cpu",
                                        "memory",
                                        "ephemeral-storage",
                                        "requests.cpu",
                                        "requests.memory",
                                        "requests.ephemeral-storage",
                                        "limits.cpu",
                                        "limits.memory",
                                        "limits.ephemeral-storage"};

json member(const json& object, const char* key, json fallback) {
    if (!object.is_object()) return fallback;
    const auto found = object.find(key);
    return found != object.end() && found->type() == fallback.type() ? *found : fallback;
}

std::optional<double> quantity(const json& object, const std::string& key) {
    if (!object.is_object() || !object.contains(key)) return std::nullopt;
    const json& value = object[key];
    if (value.is_number()) return value.get<double>();
    if (!value.is_string()) return std::nullopt;
    try {
        return parseQuantity(value.get<std::string>(), key);
    } catch (const std::exception&) {
        return std::nullopt;  // a value the server wrote that we cannot read weighs nothing
    }
}

const char* const kComputeResources[] = {"cpu", "memory", "ephemeral-storage"};

void addInto(Usage& into, const Usage& from) {
    for (const auto& [name, value] : from) into[name] += value;
}

void maxInto(Usage& into, const Usage& from) {
    for (const auto& [name, value] : from) into[name] = std::max(into[name], value);
}

// One container's requests (kind "requests", an unset one being its limit, as the apiserver
// defaults it) or limits.
Usage containerUse(const json& container, const std::string& kind) {
    const json resources = member(container, "resources", json::object());
    const json requests = member(resources, "requests", json::object());
    const json limits = member(resources, "limits", json::object());
    Usage use;
    for (const std::string name : kComputeResources) {
        auto value = kind == "limits" ? quantity(limits, name) : quantity(requests, name);
        if (!value && kind != "limits") value = quantity(limits, name);
        if (value) use[name] = *value;
    }
    return use;
}

// What a pod asks for as the apiserver's quota admission adds it up (PodRequests, PodLimits):
// the containers and the sidecars (init containers that restart Always) together; an init
// container runs beside only the sidecars started before it, so the pod asks for at least the
// largest of those; then the overhead (on a limit only where the pod has that limit). Pod-level
// resources, where set, stand for the containers' cpu and memory.
Usage podTotals(const json& spec, const std::string& kind) {
    Usage total, sidecars, initPeak;
    for (const auto& container : member(spec, "containers", json::array()))
        addInto(total, containerUse(container, kind));
    for (const auto& container : member(spec, "initContainers", json::array())) {
        const Usage own = containerUse(container, kind);
        if (member(container, "restartPolicy", std::string()) == "Always") {
            addInto(total, own);
            addInto(sidecars, own);
            maxInto(initPeak, sidecars);
        } else {
            Usage beside = own;
            addInto(beside, sidecars);
            maxInto(initPeak, beside);
        }
    }
    maxInto(total, initPeak);
    const Usage podLevel = containerUse(spec, kind);  // spec.resources, as a container's
    for (const std::string name : {"cpu", "memory"})
        if (const auto found = podLevel.find(name); found != podLevel.end())
            total[name] = found->second;
    const json overhead = member(spec, "overhead", json::object());  // alive while iterated
    for (const auto& [name, value] : overhead.items()) {
        const auto amount = quantity(json{{name, value}}, name);
        if (amount && (kind != "limits" || total.count(name))) total[name] += *amount;
    }
    return total;
}

// What one pod counts against a quota.
Usage podUsage(const json& spec) {
    Usage usage{{"pods", 1}, {"count/pods", 1}};
    for (const auto& [name, value] : podTotals(spec, "requests")) {
        usage["requests." + name] += value;
        usage[name] += value;
    }
    for (const auto& [name, value] : podTotals(spec, "limits")) usage["limits." + name] += value;
    return usage;
}

// What the namespace's live pods use, counted as the quota controller counts them.
Usage namespaceUsage(const json& pods) {
    Usage total;
    for (const auto& pod : member(pods, "items", json::array())) {
        const json metadata = member(pod, "metadata", json::object());
        const std::string phase = member(member(pod, "status", json::object()), "phase", "");
        const bool deleting =
            metadata.contains("deletionTimestamp") && !metadata["deletionTimestamp"].is_null();
        if (deleting || phase == "Succeeded" || phase == "Failed") continue;
        for (const auto& [name, value] : podUsage(member(pod, "spec", json::object())))
            total[name] += value;
    }
    return total;
}

// A quantity as the apiserver prints it: 500m, 2, 512Mi, 1Gi.
std::string formatQuantity(const std::string& resource, double value) {
    const bool bytes = resource.find("memory") != std::string::npos ||
                       resource.find("storage") != std::string::npos;
    if (bytes) {
        static const std::pair<const char*, double> kBinary[] = {
            {"Gi", 1073741824.0}, {"Mi", 1048576.0}, {"Ki", 1024.0}};
        for (const auto& [suffix, scale] : kBinary)
            if (value >= scale && std::fmod(value, scale) == 0)
                return fmt::format("{}{}", static_cast<long long>(value / scale), suffix);
        return fmt::format("{}", static_cast<long long>(std::ceil(value)));
    }
    if (std::fmod(value, 1.0) == 0) return fmt::format("{}", static_cast<long long>(value));
    // 0.4 - 0.3 is 0.10000000000000003: a rounding error is no millicore more.
    return fmt::format("{}m", static_cast<long long>(std::ceil(value * 1000 - 1e-6)));
}

std::string text(const json& object, const std::string& key) {
    return object.contains(key) && object[key].is_string() ? object[key].get<std::string>() : "0";
}

}  // namespace

std::string refusingQuotaName(const std::string& message) {
    static const std::string kMarker = "exceeded quota: ";
    const auto at = message.find(kMarker);
    if (at == std::string::npos) return "";
    const auto start = at + kMarker.size();
    const auto end = message.find(',', start);
    return end == std::string::npos ? "" : message.substr(start, end - start);
}

std::string quotaRoomLeft(const std::string& message) {
    static const std::string kRequested = ", requested: ", kUsed = ", used: ",
                             kLimited = ", limited: ";
    const auto requestedAt = message.find(kRequested);
    const auto usedAt = message.find(kUsed, requestedAt == std::string::npos ? 0 : requestedAt);
    const auto limitedAt = message.find(kLimited, usedAt == std::string::npos ? 0 : usedAt);
    if (requestedAt == std::string::npos || usedAt == std::string::npos ||
        limitedAt == std::string::npos)
        return "";
    // "a=1,b=2" as a map of the quantities as written.
    const auto entries = [](const std::string& text) {
        std::map<std::string, std::string> values;
        size_t start = 0;
        while (start < text.size()) {
            const auto comma = std::min(text.find(',', start), text.size());
            const std::string entry = text.substr(start, comma - start);
            if (const auto equals = entry.find('='); equals != std::string::npos)
                values[entry.substr(0, equals)] = entry.substr(equals + 1);
            start = comma + 1;
        }
        return values;
    };
    std::string limitedText = message.substr(limitedAt + kLimited.size());
    limitedText = limitedText.substr(0, limitedText.find_first_of(" \n;"));
    const auto requested = entries(
        message.substr(requestedAt + kRequested.size(), usedAt - requestedAt - kRequested.size()));
    const auto used =
        entries(message.substr(usedAt + kUsed.size(), limitedAt - usedAt - kUsed.size()));
    const auto limited = entries(limitedText);
    std::string said;
    for (const auto& [resource, asked] : requested) {
        const auto usedText = used.find(resource);
        const auto limitText = limited.find(resource);
        if (usedText == used.end() || limitText == limited.end()) return "";
        const auto inUse = quantity(json{{resource, usedText->second}}, resource);
        const auto limit = quantity(json{{resource, limitText->second}}, resource);
        if (!inUse || !limit) return "";
        said += fmt::format("{}{} {} asked, {} of {} left", said.empty() ? "" : "; ", resource,
                            asked, formatQuantity(resource, std::max(0.0, *limit - *inUse)),
                            limitText->second);
    }
    return said;
}

bool quotaRefusalHolds(const std::string& message, const json& quota, const json& pods) {
    const json spec = member(quota, "spec", json::object());
    if (!member(spec, "scopes", json::array()).empty() || spec.contains("scopeSelector"))
        return true;
    static const std::string kRequested = ", requested: ", kUsed = ", used: ";
    const auto from = message.find(kRequested);
    const auto to = from == std::string::npos ? from : message.find(kUsed, from);
    if (to == std::string::npos) return true;
    const std::string requested =
        message.substr(from + kRequested.size(), to - from - kRequested.size());
    const json status = member(quota, "status", json::object());
    const json hard = member(status, "hard", json::object());
    const json used = member(status, "used", json::object());
    const Usage live = namespaceUsage(pods);
    bool anyWeighed = false;
    size_t start = 0;
    while (start <= requested.size()) {
        const auto comma = std::min(requested.find(',', start), requested.size());
        const std::string entry = requested.substr(start, comma - start);
        start = comma + 1;
        const auto equals = entry.find('=');
        if (equals == std::string::npos) return true;
        const std::string resource = entry.substr(0, equals);
        const auto want = quantity(json{{resource, entry.substr(equals + 1)}}, resource);
        const auto limit = quantity(hard, resource);
        const auto liveUse = live.find(resource);
        if (!want || !limit || (liveUse == live.end() && !kWeighed.count(resource))) return true;
        anyWeighed = true;
        const double inUse = std::min(quantity(used, resource).value_or(0),
                                      liveUse == live.end() ? 0.0 : liveUse->second);
        if (inUse + *want > *limit * (1 + 1e-9)) return true;
    }
    return !anyWeighed;
}

std::optional<std::string> quotaRefusal(const json& podSpec, const json& quotas, const json& pods) {
    const Usage wanted = podUsage(podSpec);
    const Usage live = namespaceUsage(pods);
    for (const auto& quota : member(quotas, "items", json::array())) {
        const json spec = member(quota, "spec", json::object());
        // Scopes select some pods only; which ones is the apiserver's to say.
        if (!member(spec, "scopes", json::array()).empty() || spec.contains("scopeSelector"))
            continue;
        const json status = member(quota, "status", json::object());
        const json hard = member(status, "hard", json::object());
        const json used = member(status, "used", json::object());
        std::string requested, counted, limited;
        for (const auto& entry : hard.items()) {
            const std::string& resource = entry.key();
            const auto want = wanted.find(resource);
            const auto limit = quantity(hard, resource);
            if (want == wanted.end() || want->second <= 0 || !limit) continue;
            const auto liveUse = live.find(resource);
            const double inUse = std::min(quantity(used, resource).value_or(0),
                                          liveUse == live.end() ? 0.0 : liveUse->second);
            if (inUse + want->second <= *limit * (1 + 1e-9)) continue;
            const char* comma = requested.empty() ? "" : ",";
            requested +=
                fmt::format("{}{}={}", comma, resource, formatQuantity(resource, want->second));
            counted += fmt::format("{}{}={}", comma, resource, text(used, resource));
            limited += fmt::format("{}{}={}", comma, resource, text(hard, resource));
        }
        if (requested.empty()) continue;
        return fmt::format("exceeded quota: {}, requested: {}, used: {}, limited: {}",
                           member(member(quota, "metadata", json::object()), "name", ""), requested,
                           counted, limited);
    }
    return std::nullopt;
}

}  // namespace rossoctl::model
