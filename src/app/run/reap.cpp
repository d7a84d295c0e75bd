#include "rossoctl/app/run/reap.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "rossoctl/app/listed_object.hpp"
#include "rossoctl/app/run/kept.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/model/pod.hpp"

namespace rossoctl::app::run {

using nlohmann::json;

namespace {

// The first line of a file, trimmed; empty when it cannot be read.
std::string firstLineOf(const char* path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    return line;
}

// The inode of this process's pid namespace ("pid:[4026531836]" -> "4026531836").
std::string pidNamespace() {
    std::error_code error;
    const std::string link = std::filesystem::read_symlink("/proc/self/ns/pid", error).string();
    const auto open = link.find('['), close = link.find(']');
    if (error || open == std::string::npos || close == std::string::npos || close < open) return {};
    return link.substr(open + 1, close - open - 1);
}

// What names this process's pid space: without all three, no owner can be checked here.
struct PidSpace {
    std::string boot = firstLineOf("/proc/sys/kernel/random/boot_id");
    std::string machine = firstLineOf("/etc/machine-id");
    std::string pidns = pidNamespace();
    bool known() const { return !boot.empty() && !machine.empty() && !pidns.empty(); }
};

// "v2;k=v;..." -> its fields; empty for anything else.
std::map<std::string, std::string> ownerFields(const std::string& owner) {
    std::map<std::string, std::string> fields;
    if (!owner.starts_with("v2;")) return fields;
    std::istringstream parts(owner.substr(3));
    for (std::string part; std::getline(parts, part, ';');) {
        const auto equals = part.find('=');
        if (equals == std::string::npos) return {};
        fields[part.substr(0, equals)] = part.substr(equals + 1);
    }
    return fields;
}

bool allDigits(const std::string& text) {
    return !text.empty() && text.size() <= 19 &&
           text.find_first_not_of("0123456789") == std::string::npos;
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

std::string currentRunOwner(Random& random) {
    const PidSpace space;
    const std::string pid = std::to_string(::getpid());
    const uint32_t high = random.next();
    const uint32_t low = random.next();
    return fmt::format("v2;boot={};machine={};pidns={};pid={};start={};token={:08x}{:08x}",
                       space.boot, space.machine, space.pidns, pid, processStartTicks(pid), high,
                       low);
}

std::string describeRunOwner(const std::string& owner) {
    auto fields = ownerFields(owner);
    if (fields.empty())
        return owner.find("token") == std::string::npos ? owner : "an unreadable owner";
    if (!allDigits(fields["pid"])) return "an unreadable owner";
    const PidSpace here;
    const bool local = here.known() && fields["boot"] == here.boot &&
                       fields["machine"] == here.machine && fields["pidns"] == here.pidns;
    return fmt::format("pid {} {}", fields["pid"],
                       local ? "on this machine" : "on another machine or container");
}

bool localOwnerAlive(const std::string& owner) {
    auto fields = ownerFields(owner);
    const PidSpace here;
    if (!here.known() || fields["boot"] != here.boot || fields["machine"] != here.machine ||
        fields["pidns"] != here.pidns || !allDigits(fields["pid"]) || !allDigits(fields["start"]) ||
        fields["token"].empty())
        return true;  // not checkable from here: it expires by its own deadline
    const std::string started = processStartTicks(fields["pid"]);
    return !started.empty() && started == fields["start"];
}

bool isLeftoverRunPod(const json& pod, const OwnerAlive& ownerAlive) {
    const json metadata = pod.value("metadata", json::object());
    // Both labels, as gc requires: a pod of someone else's that copied the run label is kept.
    const json labels = metadata.value("labels", json::object());
    if (labels.value(kRunLabel, "") != "true" ||
        labels.value(model::kManagedByLabel, "") != model::kManagedByValue)
        return false;
    if (metadata.contains("deletionTimestamp")) return false;  // already on its way out
    const std::string phase = pod.value("status", json::object()).value("phase", "");
    if (phase == "Succeeded" || phase == "Failed") return true;
    // A run pod names its process; a claimed warm pod, the process that claimed it.
    std::string owner = annotation(pod, kRunOwnerAnnotation);
    if (owner.empty()) owner = annotation(pod, kClaimedByAnnotation);
    return !owner.empty() && !ownerAlive(owner);
}

Reaped reapLeftoverRunPods(kube::Client& client, const std::string& ns,
                           const OwnerAlive& ownerAlive) {
    kube::ListOptions options;
    // append, not operator+: GCC 12 -O2 warns falsely (-Warray-bounds) on string + literal.
    options.labelSelector.append(kRunLabel).append("=true");
    const json list = client.list(kube::resources::pods(), ns, options);
    Reaped reaped;
    for (const auto& pod : list.value("items", json::array())) {
        if (!isLeftoverRunPod(pod, ownerAlive)) continue;
        // A nameless pod made DELETE .../pods: every pod of the namespace.
        if (std::string why = unusableListedObject(pod, ns); !why.empty()) {
            reaped.skipped.push_back(std::move(why));
            continue;
        }
        const std::string name = listedName(pod);
        kube::DeleteOptions remove;
        remove.gracePeriodSeconds = 0;
        remove.preconditionUid = pod["metadata"].value("uid", "");
        try {
            client.remove(kube::resources::pods(), ns, name, remove);
            reaped.deleted.push_back(name);
            // A pod --keep kept was not interrupted: it ended at its deadline, as promised.
            const std::string phase = pod.value("status", json::object()).value("phase", "");
            reaped.why.push_back(annotation(pod, kKeptAnnotation) == "true" &&
                                         (phase == "Succeeded" || phase == "Failed")
                                     ? "kept by an earlier \"sandbox run --keep\" until it "
                                       "ended at its deadline"
                                     : "left over by an interrupted run");
        } catch (const kube::ApiError& error) {
            // Gone already, or replaced by a pod of the same name: nothing of ours to reap.
            if (!error.isNotFound() && error.code() != 409) throw;
        }
    }
    return reaped;
}

}  // namespace rossoctl::app::run
