// The host-isolation boundary's static part: what the pod spec lets a container do to the node,
// field by field, for every container of the pod (init and ephemeral included).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "rossoctl/verify/isolation.hpp"
#include "rossoctl/verify/volume_claims.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

const json& member(const json& object, const char* key) {
    static const json none;
    if (!object.is_object()) return none;
    const auto it = object.find(key);
    return it == object.end() ? none : *it;
}
std::string text(const json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
}
bool isTrue(const json& value) {
    return value.is_boolean() && value.get<bool>();
}

// Sysctls Pod Security's baseline calls safe (namespaced, no effect on the node).
bool safeSysctl(const std::string& name) {
    static const std::vector<std::string> safe = {"kernel.shm_rmid_forced",
                                                  "net.ipv4.ip_local_port_range",
                                                  "net.ipv4.ip_unprivileged_port_start",
                                                  "net.ipv4.tcp_syncookies",
                                                  "net.ipv4.ping_group_range",
                                                  "net.ipv4.ip_local_reserved_ports",
                                                  "net.ipv4.tcp_keepalive_time",
                                                  "net.ipv4.tcp_fin_timeout",
                                                  "net.ipv4.tcp_keepalive_intvl",
                                                  "net.ipv4.tcp_keepalive_probes"};
    return std::find(safe.begin(), safe.end(), name) != safe.end();
}

// SELinux types container runtimes confine with; anything else (spc_t, unconfined_t) is not.
bool confiningSelinuxType(const std::string& type) {
    return type.empty() || type == "container_t" || type == "container_init_t" ||
           type == "container_kvm_t" || type == "container_engine_t";
}

std::string upper(std::string value) {
    for (auto& c : value) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (value.rfind("CAP_", 0) == 0) value = value.substr(4);
    return value;
}

// Collects the findings of one boundary: a fail outweighs an unproven, which outweighs a pass.
struct Judge {
    Finding finding{Verdict::Pass, {}, ""};
    void fail(std::string line) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(std::move(line));
    }
    void doubt(std::string line) {
        if (finding.verdict == Verdict::Pass) finding.verdict = Verdict::Unproven;
        finding.evidence.push_back(std::move(line));
    }
};

// The pod-level securityContext settings a container inherits unless it sets its own.
const json& effective(const json& container, const json& pod, const char* key) {
    const json& own = member(member(container, "securityContext"), key);
    return own.is_null() ? member(member(member(pod, "spec"), "securityContext"), key) : own;
}

void judgeContainer(Judge& judge, const json& pod, const json& container, const std::string& who) {
    const json& context = member(container, "securityContext");
    if (isTrue(member(context, "privileged")))
        judge.fail(who + ": securityContext.privileged: true (every capability, every device)");
    if (isTrue(member(member(context, "windowsOptions"), "hostProcess")))
        judge.fail(who + ": securityContext.windowsOptions.hostProcess: true");
    for (const auto& port :
         member(container, "ports").is_array() ? member(container, "ports") : json::array())
        if (member(port, "hostPort").is_number() && member(port, "hostPort").get<long>() != 0)
            judge.fail(fmt::format("{}: ports[].hostPort: {} (a port on the node)", who,
                                   member(port, "hostPort").get<long>()));
    const json& capabilities = member(context, "capabilities");
    std::vector<std::string> added;
    for (const auto& cap :
         member(capabilities, "add").is_array() ? member(capabilities, "add") : json::array())
        if (cap.is_string() && upper(cap.get<std::string>()) != "NET_BIND_SERVICE")
            added.push_back(upper(cap.get<std::string>()));
    if (!added.empty()) {
        std::string list;
        for (const auto& cap : added) list += (list.empty() ? "" : ", ") + cap;
        judge.fail(fmt::format(
            "{}: securityContext.capabilities.add: {} (only NET_BIND_SERVICE may be added)", who,
            list));
    }
    bool dropsAll = false;
    for (const auto& cap :
         member(capabilities, "drop").is_array() ? member(capabilities, "drop") : json::array())
        dropsAll = dropsAll || (cap.is_string() && upper(cap.get<std::string>()) == "ALL");
    if (!dropsAll)
        judge.fail(who +
                   ": securityContext.capabilities.drop does not include ALL (the runtime's "
                   "defaults, NET_RAW among them, stay)");
    const json& escalation = member(context, "allowPrivilegeEscalation");
    if (!escalation.is_boolean())
        judge.fail(who +
                   ": securityContext.allowPrivilegeEscalation is unset (it defaults to true: a "
                   "setuid binary gains privileges)");
    else if (escalation.get<bool>())
        judge.fail(who + ": securityContext.allowPrivilegeEscalation: true");
    const json& user = effective(container, pod, "runAsUser");
    const json& nonRoot = effective(container, pod, "runAsNonRoot");
    if (user.is_number() && user.get<long long>() == 0)
        judge.fail(who + ": runAsUser: 0 (root)");
    else if (isTrue(nonRoot) || user.is_number())
        ;  // the kubelet refuses a root user, or the uid is set and not 0
    else if (nonRoot.is_boolean())
        judge.doubt(who +
                    ": runAsNonRoot: false and no runAsUser: the image's user decides, "
                    "which may be root");
    else
        judge.doubt(who +
                    ": neither runAsNonRoot: true nor runAsUser is set: the image's user "
                    "decides, which may be root");
    const std::string seccomp = [&] {
        const json& profile = effective(container, pod, "seccompProfile");
        return profile.is_object() ? member(profile, "type").is_string()
                                         ? member(profile, "type").get<std::string>()
                                         : std::string("?")
                                   : std::string();
    }();
    if (seccomp == "Unconfined")
        judge.fail(who + ": seccompProfile.type: Unconfined (every system call allowed)");
    else if (seccomp.empty())
        judge.doubt(who +
                    ": seccompProfile is unset on the container and the pod (Unconfined unless "
                    "the kubelet runs with --seccomp-default)");
    else if (seccomp == "Localhost")
        // A node file of any content: the live Seccomp: 2 shows a filter, not which one.
        judge.doubt(who + ": seccompProfile.type: Localhost (" +
                    text(member(effective(container, pod, "seccompProfile"), "localhostProfile")) +
                    "): a file on the node, which may allow every system call; only "
                    "RuntimeDefault is known to filter");
    else if (seccomp != "RuntimeDefault")
        judge.doubt(who + ": seccompProfile.type: " + seccomp + " (not known)");
    const json& apparmor = effective(container, pod, "appArmorProfile");
    const std::string apparmorType =
        member(apparmor, "type").is_string() ? member(apparmor, "type").get<std::string>() : "";
    if (apparmorType == "Unconfined")
        judge.fail(who + ": appArmorProfile.type: Unconfined");
    else if (apparmorType == "Localhost")
        // Like a Localhost seccomp profile: a node file, which may be flags=(unconfined).
        judge.doubt(who + ": appArmorProfile.type: Localhost (" +
                    text(member(apparmor, "localhostProfile")) +
                    "): a profile loaded on the node, which may confine nothing; only "
                    "RuntimeDefault is known to confine");
    else if (!apparmorType.empty() && apparmorType != "RuntimeDefault")
        judge.doubt(who + ": appArmorProfile.type: " + apparmorType + " (not known)");
    const std::string annotation =
        "container.apparmor.security.beta.kubernetes.io/" +
        (member(container, "name").is_string() ? member(container, "name").get<std::string>() : "");
    const json& annotated =
        member(member(member(pod, "metadata"), "annotations"), annotation.c_str());
    const std::string annotatedProfile = annotated.is_string() ? annotated.get<std::string>() : "";
    if (annotatedProfile == "unconfined")
        judge.fail(fmt::format("{}: annotation {}: unconfined", who, annotation));
    else if (!annotatedProfile.empty() && annotatedProfile != "runtime/default")
        judge.doubt(
            fmt::format("{}: annotation {}: {} (a profile loaded on the node, which may "
                        "confine nothing; only runtime/default is known to confine)",
                        who, annotation, annotatedProfile));
    if (member(context, "procMount").is_string() &&
        member(context, "procMount").get<std::string>() == "Unmasked")
        judge.fail(who + ": securityContext.procMount: Unmasked (the node's /proc unmasked)");
    const json& selinux = effective(container, pod, "seLinuxOptions");
    if (selinux.is_object()) {
        const std::string type =
            member(selinux, "type").is_string() ? member(selinux, "type").get<std::string>() : "";
        if (!confiningSelinuxType(type))
            judge.fail(who + ": seLinuxOptions.type: " + type + " (not a confined container type)");
        for (const char* key : {"user", "role"})
            if (member(selinux, key).is_string() &&
                !member(selinux, key).get<std::string>().empty())
                judge.fail(fmt::format("{}: seLinuxOptions.{}: {} (a custom SELinux {})", who, key,
                                       member(selinux, key).get<std::string>(), key));
    }
}

}  // namespace

Finding hostIsolationStatic(const json& pod, const std::optional<json>& namespaceObject,
                            const VolumeBindings& volumes) {
    Judge judge;
    const json& spec = member(pod, "spec");
    for (const char* field : {"hostPID", "hostIPC", "hostNetwork"}) {
        if (isTrue(member(spec, field)))
            judge.fail(fmt::format("pod: spec.{}: true (the node's {} namespace)", field,
                                   std::string(field).substr(4)));
    }
    for (const auto& sysctl : member(member(spec, "securityContext"), "sysctls").is_array()
                                  ? member(member(spec, "securityContext"), "sysctls")
                                  : json::array()) {
        const std::string name = text(member(sysctl, "name"));
        if (!safeSysctl(name))
            judge.fail("pod: securityContext.sysctls: " + name + " (not a safe sysctl)");
    }
    for (const auto& volume :
         member(spec, "volumes").is_array() ? member(spec, "volumes") : json::array())
        if (member(volume, "hostPath").is_object())
            judge.fail(fmt::format("pod: volume {} is hostPath {} (the node's filesystem)",
                                   text(member(volume, "name")),
                                   text(member(member(volume, "hostPath"), "path"))));
    // A claim's PersistentVolume may be the node's filesystem as much as a hostPath volume.
    judgeClaimedVolumesOnHost(pod, volumes, judge.finding);
    int containers = 0;
    for (const char* key : {"initContainers", "containers", "ephemeralContainers"}) {
        for (const auto& container :
             member(spec, key).is_array() ? member(spec, key) : json::array()) {
            ++containers;
            const std::string kind = std::string(key) == "containers"       ? "container"
                                     : std::string(key) == "initContainers" ? "init container"
                                                                            : "ephemeral container";
            judgeContainer(judge, pod, container, kind + " " + text(member(container, "name")));
        }
    }
    if (judge.finding.verdict == Verdict::Pass)
        judge.finding.evidence.push_back(fmt::format(
            "{} container{}: not privileged, no host namespaces or ports, ALL capabilities "
            "dropped (NET_BIND_SERVICE at most added), no privilege escalation, not root, a "
            "seccomp profile",
            containers, containers == 1 ? "" : "s"));
    if (!namespaceObject) {
        judge.finding.evidence.push_back(
            "the namespace could not be read: its Pod Security level is not known");
    } else {
        const json& labels = member(member(*namespaceObject, "metadata"), "labels");
        const json& level = member(labels, "pod-security.kubernetes.io/enforce");
        const std::string name = text(member(member(*namespaceObject, "metadata"), "name"));
        if (level.is_string() && level.get<std::string>() == "restricted")
            judge.finding.evidence.push_back(
                fmt::format("namespace {} enforces Pod Security restricted", name));
        else
            judge.finding.evidence.push_back(fmt::format(
                "namespace {} enforces Pod Security {}: it would admit {}; only this pod's own "
                "spec holds the boundary",
                name, level.is_string() ? level.get<std::string>() : "(none set)",
                level.is_string() && level.get<std::string>() == "baseline"
                    ? "root, privilege escalation and unconfined seccomp"
                    : "a privileged pod"));
    }
    return judge.finding;
}

Finding hostIsolationStatic(const json& pod, const std::optional<json>& namespaceObject) {
    return hostIsolationStatic(pod, namespaceObject, VolumeBindings());
}

void failEgressOnHostNetwork(const json& pod, Finding& egressStatic) {
    if (!isTrue(member(member(pod, "spec"), "hostNetwork"))) return;
    egressStatic.verdict = Verdict::Fail;
    // Built first: GCC 12 warns falsely (array-bounds) on a literal inserted into a vector.
    std::vector<std::string> evidence = {
        "pod: spec.hostNetwork: true: no NetworkPolicy selects a host-network pod, its egress "
        "is the node's"};
    evidence.insert(evidence.end(), egressStatic.evidence.begin(), egressStatic.evidence.end());
    egressStatic.evidence = std::move(evidence);
}

}  // namespace rossoctl::verify
