#include "rossoctl/app/run/kept.hpp"

#include <fmt/format.h>

#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "rossoctl/model/pod.hpp"
#include "rossoctl/ui/printer.hpp"

namespace rossoctl::app::run {

using nlohmann::json;

namespace {

const json& field(const json& object, const char* key) {
    static const json empty = json::object();
    return object.is_object() && object.contains(key) && object[key].is_object() ? object[key]
                                                                                 : empty;
}

std::string stringField(const json& object, const char* key) {
    return object.is_object() && object.contains(key) && object[key].is_string()
               ? object[key].get<std::string>()
               : std::string{};
}

// The Sandbox that controls `pod`, "" when none does.
std::string controllingSandbox(const json& pod) {
    const json& metadata = field(pod, "metadata");
    const auto owners = metadata.find("ownerReferences");
    if (owners == metadata.end() || !owners->is_array()) return {};
    for (const auto& owner : *owners)
        if (owner.is_object() && owner.value("controller", false) == true &&
            stringField(owner, "kind") == "Sandbox")
            return stringField(owner, "name");
    return {};
}

// The rossoctl line that does what `verb` meant to a sandbox's own pod.
std::string sandboxLine(const std::string& verb, const std::string& ns,
                        const std::string& sandbox) {
    if (verb == "exec")
        return fmt::format("rossoctl sandbox exec {} -n {} -- COMMAND", sandbox, ns);
    if (verb == "cp") return fmt::format("rossoctl sandbox cp {}:PATH ./PATH -n {}", sandbox, ns);
    if (verb == "delete")
        return fmt::format(
            "rossoctl sandbox restart {} -n {}\" replaces it; \"rossoctl agents "
            "delete {} -n {}",
            sandbox, ns, sandbox, ns);
    return fmt::format("rossoctl sandbox {} {} -n {}", verb, sandbox, ns);
}

json getRunPod(kube::Client& client, const std::string& ns, const std::string& name,
               const std::string& verb) {
    auto pod = client.getIfExists(kube::resources::pods(), ns, name);
    if (!pod)
        throw Error(fmt::format(
            "pod/{} not found in namespace {}; pod/NAME names a pod \"rossoctl sandbox run "
            "--keep\" kept (it is gone once its deadline has passed and it was deleted); a "
            "sandbox is named without pod/",
            name, ns));
    if (const std::string sandbox = controllingSandbox(*pod);
        !madeBySandboxRun(*pod) && !sandbox.empty())
        throw Error(
            fmt::format("pod/{} is the pod of sandbox {}: name the sandbox, not its pod: \"{}\"",
                        name, sandbox, sandboxLine(verb, ns, sandbox)));
    if (!madeBySandboxRun(*pod))
        throw Error(fmt::format(
            "pod/{} in namespace {} was not created by \"rossoctl sandbox run\" (it lacks the "
            "labels {}=true and {}={}); rossoctl reaches only sandboxes and the pods its runs "
            "kept: use kubectl for other pods",
            name, ns, kRunLabel, model::kManagedByLabel, model::kManagedByValue));
    return *pod;
}

std::string phaseOf(const json& pod) {
    return stringField(field(pod, "status"), "phase");
}

}  // namespace

bool madeBySandboxRun(const json& pod) {
    const json& labels = field(field(pod, "metadata"), "labels");
    return stringField(labels, kRunLabel) == "true" &&
           stringField(labels, model::kManagedByLabel) == model::kManagedByValue;
}

bool keptRunPod(const json& pod) {
    return madeBySandboxRun(pod) &&
           stringField(field(field(pod, "metadata"), "annotations"), kKeptAnnotation) == "true";
}

std::optional<std::chrono::system_clock::time_point> podEndsAt(const json& pod) {
    const json& spec = field(pod, "spec");
    if (!spec.contains("activeDeadlineSeconds") ||
        !spec["activeDeadlineSeconds"].is_number_integer())
        return std::nullopt;
    std::string start = stringField(field(pod, "status"), "startTime");
    if (start.empty()) start = stringField(field(pod, "metadata"), "creationTimestamp");
    const auto started = kube::parseTimestamp(start);
    if (!started) return std::nullopt;
    return *started + std::chrono::seconds(spec["activeDeadlineSeconds"].get<int64_t>());
}

json reachableRunPod(kube::Client& client, const std::string& ns, const std::string& name,
                     bool running, const std::string& verb) {
    json pod = getRunPod(client, ns, name, verb);
    if (!running) return pod;
    const std::string phase = phaseOf(pod);
    if (phase == "Succeeded" || phase == "Failed") {
        const std::string reason = stringField(field(pod, "status"), "reason");
        throw Error(fmt::format(
            "pod/{} has ended ({}{}): a kept run pod lives --timeout plus 60s; delete it with "
            "\"rossoctl sandbox delete pod/{} -n {}\" or \"rossoctl gc -n {}\"",
            name, phase, reason.empty() ? "" : ": " + reason, name, ns, ns));
    }
    if (phase != "Running")
        throw Error(fmt::format("pod/{} is {}, not Running; try again once it runs", name,
                                phase.empty() ? std::string("Pending") : phase));
    return pod;
}

std::vector<std::string> keptPodLines(const std::string& ns, const std::string& pod,
                                      const std::string& workdir,
                                      std::optional<std::chrono::system_clock::time_point> endsAt,
                                      std::chrono::system_clock::time_point now) {
    std::vector<std::string> lines;
    if (endsAt) {
        const auto left = std::chrono::duration_cast<std::chrono::seconds>(*endsAt - now);
        lines.push_back(fmt::format(
            "kept pod {}; it ends by itself at {} (in {}: --timeout plus 60s), then \"rossoctl "
            "gc -n {}\" deletes it",
            pod, kube::formatTimestamp(*endsAt),
            ui::formatAge(std::max(left, std::chrono::seconds{0})), ns));
    } else {
        lines.push_back(
            fmt::format("kept pod {}; it ends by itself --timeout plus 60s after it started, then "
                        "\"rossoctl gc -n {}\" deletes it",
                        pod, ns));
    }
    lines.push_back(fmt::format("  rossoctl sandbox exec pod/{} -n {} -- sh", pod, ns));
    lines.push_back(
        fmt::format("  rossoctl sandbox cp pod/{}:{}/out ./out -n {}", pod, workdir, ns));
    lines.push_back(fmt::format("  rossoctl sandbox delete pod/{} -n {}", pod, ns));
    return lines;
}

std::string runPodAdvice(kube::Client& client, const std::string& ns, const std::string& name) {
    if (name.rfind(kRunPodNamePrefix, 0) != 0) return {};
    try {
        const auto pod = client.getIfExists(kube::resources::pods(), ns, name);
        if (!pod || !madeBySandboxRun(*pod)) return {};
    } catch (const std::exception&) {
        return {};  // the sandbox's own advice follows
    }
    return fmt::format("did you mean pod/{}? (a pod \"sandbox run --keep\" kept is named pod/NAME)",
                       name);
}

std::string runOutputNotInLog(const std::string& ns, const std::string& pod) {
    return fmt::format(
        "pod/{} only sleeps: sandbox run ran its command through exec, so the command's output "
        "is not in this log (the run printed it); look inside with \"rossoctl sandbox exec "
        "pod/{} -n {} -- sh\"",
        pod, pod, ns);
}

void deleteRunPod(kube::Client& client, const std::string& ns, const std::string& name,
                  const OwnerAlive& ownerAlive) {
    const json pod = getRunPod(client, ns, name, "delete");
    const json& annotations = field(field(pod, "metadata"), "annotations");
    const bool owned = !stringField(annotations, kRunOwnerAnnotation).empty() ||
                       !stringField(annotations, kClaimedByAnnotation).empty();
    // A run in progress names its process: its pod is that run's, deleted when it ends.
    if (!keptRunPod(pod) && owned && !isLeftoverRunPod(pod, ownerAlive))
        throw Error(fmt::format(
            "pod/{} is the pod of a \"rossoctl sandbox run\" still in progress, not one it kept; "
            "that run deletes it when it ends (Ctrl-C it to end it sooner)",
            name));
    kube::DeleteOptions options;
    options.gracePeriodSeconds = 0;  // nothing in it is worth waiting for
    options.preconditionUid = stringField(field(pod, "metadata"), "uid");
    try {
        client.remove(kube::resources::pods(), ns, name, options);
    } catch (const kube::ApiError& error) {
        if (error.isNotFound()) return;  // gone meanwhile: what was asked
        if (error.code() == 409)
            throw Error(fmt::format(
                "pod/{} was replaced by another pod of that name meanwhile; nothing deleted",
                name));
        throw;
    }
}

}  // namespace rossoctl::app::run
