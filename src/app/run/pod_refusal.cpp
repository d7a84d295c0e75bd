#include "rossoctl/app/run/pod_refusal.hpp"

#include <fmt/format.h>

#include <vector>

#include "rossoctl/app/namespace_hint.hpp"
#include "rossoctl/kube/resource.hpp"
#include "rossoctl/model/quota.hpp"
#include "rossoctl/ui/nearest_word.hpp"

namespace rossoctl::app::run {

using nlohmann::json;

namespace {

std::string textField(const json& object, const char* key) {
    if (!object.is_object()) return {};
    const auto found = object.find(key);
    return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

// The apiserver's 404 for a missing namespace names it in details (kind "namespaces").
bool namespaceMissing(const kube::ApiError& error) {
    if (!error.isNotFound()) return false;
    if (textField(error.details(), "kind") == "namespaces") return true;
    return error.statusMessage().rfind("namespaces \"", 0) == 0;
}

// The flags that ask for less of what a quota refused.
std::string lessWith(const std::string& message) {
    const bool cpu = message.find("cpu=") != std::string::npos;
    const bool memory = message.find("memory=") != std::string::npos;
    if (cpu && memory) return "ask for less with --cpu or --memory, or ";
    if (cpu) return "ask for less with --cpu, or ";
    if (memory) return "ask for less with --memory, or ";
    return "";
}

std::string quotaRefusalText(const std::string& message, const std::string& ns) {
    const std::string quota = model::refusingQuotaName(message);
    if (quota.empty()) return {};
    const std::string left = model::quotaRoomLeft(message);
    return fmt::format(
        "ResourceQuota {} of namespace {} has no room for the run's pod{}; nothing ran: {}wait "
        "for other pods to end (\"rossoctl project describe {}\" shows what is used; warm-pool "
        "spares count too: \"rossoctl sandbox pool list -n {}\")",
        quota, ns, left.empty() ? "" : " (" + left + ")", lessWith(message), ns, ns);
}

// RuntimeClass admission: `pod rejected: RuntimeClass "gvsior" not found`.
std::string runtimeClassText(kube::Client& client, const std::string& message,
                             const RunPodShape& shape) {
    if (shape.runtimeClass.empty() ||
        message.find("RuntimeClass \"" + shape.runtimeClass + "\" not found") == std::string::npos)
        return {};
    std::vector<std::string> names;
    try {
        for (const auto& item :
             client.list(kube::resources::runtimeClasses(), "").value("items", json::array()))
            names.push_back(textField(item.value("metadata", json::object()), "name"));
    } catch (const std::exception&) {
        names.clear();  // not allowed to list them: the message without a suggestion
    }
    const std::string nearest = ui::nearestWord(shape.runtimeClass, names);
    std::string known;
    for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
    return fmt::format(
        "--runtime-class {}: the cluster has no RuntimeClass of that name{}; nothing ran",
        shape.runtimeClass,
        !nearest.empty() ? fmt::format(" (did you mean \"{}\"?)", nearest)
        : known.empty()  ? ""
                         : fmt::format(" (it has: {})", known));
}

// The newest Warning event about the pod: "REASON: MESSAGE".
std::string newestWarning(kube::Client& client, const std::string& ns, const json& pod) {
    const std::string uid = textField(pod.value("metadata", json::object()), "uid");
    if (uid.empty()) return {};
    kube::ListOptions options;
    options.fieldSelector = "involvedObject.uid=" + uid + ",type=Warning";
    json events;
    try {
        events = client.list(kube::resources::events(), ns, options);
    } catch (const kube::ApiError&) {
        return {};  // events only sharpen the message
    }
    std::string newestAt, said;
    for (const auto& event : events.value("items", json::array())) {
        std::string at = textField(event, "lastTimestamp");
        if (at.empty()) at = textField(event, "eventTime");
        if (!said.empty() && at < newestAt) continue;
        newestAt = at;
        said = textField(event, "reason") + ": " + textField(event, "message");
    }
    return said;
}

}  // namespace

std::string explainRunPodRefusal(kube::Client& client, const kube::ApiError& error,
                                 const std::string& ns, const RunPodShape& shape) {
    if (namespaceMissing(error)) return "nothing ran: " + missingNamespaceMessage(client, ns);
    if (!error.isForbidden()) return {};
    const std::string& message = error.statusMessage();
    if (std::string quota = quotaRefusalText(message, ns); !quota.empty()) return quota;
    return runtimeClassText(client, message, shape);
}

std::string runPodEndDetail(kube::Client& client, const std::string& ns, const json& pod) {
    std::string said;
    const json status = pod.value("status", json::object());
    for (const auto& container : status.value("containerStatuses", json::array())) {
        const json ended =
            container.value("state", json::object()).value("terminated", json::object());
        const std::string reason = textField(ended, "reason"),
                          message = textField(ended, "message");
        if (message.empty()) continue;
        const auto code = ended.find("exitCode");
        said = fmt::format("container {}: {}{}: {}", textField(container, "name"), reason,
                           code != ended.end() && code->is_number_integer()
                               ? fmt::format(" (exit {})", code->get<long>())
                               : "",
                           message);
        break;
    }
    if (said.empty()) said = newestWarning(client, ns, pod);
    if (said.empty()) said = textField(status, "message");
    return kube::boundedServerMessage(said, 400);
}

}  // namespace rossoctl::app::run
