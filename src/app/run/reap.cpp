#include "rossoctl/app/run/reap.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/kube/api_error.hpp"

namespace rossoctl::app::run {

using nlohmann::json;

namespace {

std::string hostName() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return host;
}

// Field 22 of /proc/PID/stat; empty when the process does not exist.
std::string processStartTicks(const std::string& pid) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string text;
    if (!stat || !std::getline(stat, text)) return {};
    // The command name (field 2) may hold spaces and parentheses; fields restart after its ')'.
    const auto close = text.rfind(')');
    if (close == std::string::npos) return {};
    std::istringstream fields(text.substr(close + 1));
    std::string field;
    for (int index = 3; index <= 22 && fields >> field; ++index)
        if (index == 22) return field;
    return {};
}

std::string annotation(const json& pod, const char* key) {
    const json metadata = pod.value("metadata", json::object());
    return metadata.value("annotations", json::object()).value(key, std::string{});
}

}  // namespace

std::string currentRunOwner() {
    const std::string pid = std::to_string(::getpid());
    return fmt::format("{}/{}/{}", hostName(), pid, processStartTicks(pid));
}

bool localOwnerAlive(const std::string& owner) {
    const auto first = owner.find('/');
    const auto second = owner.find('/', first == std::string::npos ? first : first + 1);
    if (first == std::string::npos || second == std::string::npos) return true;
    if (owner.substr(0, first) != hostName()) return true;
    const std::string pid = owner.substr(first + 1, second - first - 1);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) return true;
    const std::string started = processStartTicks(pid);
    return !started.empty() && started == owner.substr(second + 1);
}

bool isLeftoverRunPod(const json& pod, const OwnerAlive& ownerAlive) {
    const json metadata = pod.value("metadata", json::object());
    if (metadata.value("labels", json::object()).value(kRunLabel, "") != "true") return false;
    if (metadata.contains("deletionTimestamp")) return false;  // already on its way out
    const std::string phase = pod.value("status", json::object()).value("phase", "");
    if (phase == "Succeeded" || phase == "Failed") return true;
    // A run pod names its process; a claimed warm pod, the process that claimed it.
    std::string owner = annotation(pod, kRunOwnerAnnotation);
    if (owner.empty()) owner = annotation(pod, kClaimedByAnnotation);
    return !owner.empty() && !ownerAlive(owner);
}

std::vector<std::string> reapLeftoverRunPods(kube::Client& client, const std::string& ns,
                                             const OwnerAlive& ownerAlive) {
    kube::ListOptions options;
    // append, not operator+: GCC 12 -O2 warns falsely (-Warray-bounds) on string + literal.
    options.labelSelector.append(kRunLabel).append("=true");
    const json list = client.list(kube::resources::pods(), ns, options);
    std::vector<std::string> reaped;
    for (const auto& pod : list.value("items", json::array())) {
        if (!isLeftoverRunPod(pod, ownerAlive)) continue;
        const json& metadata = pod["metadata"];
        kube::DeleteOptions remove;
        remove.gracePeriodSeconds = 0;
        remove.preconditionUid = metadata.value("uid", "");
        try {
            client.remove(kube::resources::pods(), ns, metadata.value("name", ""), remove);
            reaped.push_back(metadata.value("name", ""));
        } catch (const kube::ApiError& error) {
            // Gone already, or replaced by a pod of the same name: nothing of ours to reap.
            if (!error.isNotFound() && error.code() != 409) throw;
        }
    }
    return reaped;
}

}  // namespace rossoctl::app::run
