// One sandbox verified: the inputs read once, the independent checks on threads of their own,
// then the destructive one and the replacement pod it made.
#include "rossoctl/verify/runner.hpp"

#include <algorithm>
#include <thread>

#include "credential_places.hpp"
#include "json_access.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "verification.hpp"

namespace rossoctl::verify {

using nlohmann::json;

SandboxReport Verification::run() {
    const auto started = clock_.monotonic();
    read();
    SandboxReport report;
    report.name = name_;
    report.namespaceName = ns_;
    report.pod = podName_;
    report.podUid = app::uidOf(inputs_.pod);
    report.container = inputs_.container.value("name", "");
    report.checks.resize(7);
    // Independent checks in parallel, each on its own connection.
    std::vector<std::thread> threads;
    report.checks[0].kind = CheckKind::ServiceAccountToken;
    report.checks[1].kind = CheckKind::Egress;
    report.checks[2].kind = CheckKind::Limits;
    report.checks[3].kind = CheckKind::NothingSurvives;
    threads.emplace_back([&] {
        report.checks[0] = timed(&Verification::tokenCheck, CheckKind::ServiceAccountToken);
    });
    threads.emplace_back(
        [&] { report.checks[1] = timed(&Verification::egressCheck, CheckKind::Egress); });
    threads.emplace_back(
        [&] { report.checks[2] = timed(&Verification::limitsCheck, CheckKind::Limits); });
    report.checks[4].kind = CheckKind::HostIsolation;
    report.checks[5].kind = CheckKind::KernelIsolation;
    threads.emplace_back([&] {
        report.checks[4] = timed(&Verification::hostIsolationCheck, CheckKind::HostIsolation);
    });
    threads.emplace_back([&] {
        report.checks[5] = timed(&Verification::kernelIsolationCheck, CheckKind::KernelIsolation);
    });
    // No probe: the spec and the kubelet's status alone.
    report.checks[6] = timed(&Verification::imageProvenanceCheck, CheckKind::ImageProvenance);
    for (auto& thread : threads) thread.join();
    if (trustedProbeRefused_) throw Error(trustedProbeProblem_);
    // Destructive: deletes the pod, so it runs after the others are done with it.
    report.checks[3] = timed(&Verification::nothingSurvivesCheck, CheckKind::NothingSurvives);
    // A verdict is about the sandbox: the pod verify's own restart made is judged too.
    if (replacementPod_.is_object()) judgeReplacement(report.checks);
    // Not replaced (--no-restart): the pod keeps running, its probe must not (a later verify
    // without this image would find an unbounded container in it).
    else
        endTrustedProbe(client_, ns_, podName_, egressSite_);
    // Interrupted, the report is partial already: nothing more is asked of the server.
    if (!(options_.cancel && options_.cancel->cancelled())) recheckAtEnd(report.checks);
    // A pod verify did not judge leaves every boundary of the sandbox unproven.
    for (const auto& other : inputs_.otherPods)
        for (auto& check : report.checks)
            absorb(check.staticPart,
                   Finding{Verdict::Unproven,
                           {fmt::format("pod {} is also owned by or selected for sandbox {}; "
                                        "verify judged pod {} (the Sandbox's record), not it",
                                        other, name_, podName_)},
                           ""});
    // Whatever check built a line, a string of the pod's that looks like a credential (a token
    // in a mount path, attack 54 X1) is never printed: not in the table, JSON, JUnit or SARIF.
    const auto printed = printedStrings();
    for (auto& check : report.checks)
        for (Finding* part : {&check.staticPart, &check.livePart})
            for (auto& line : part->evidence) line = redactedWithin(std::move(line), printed);
    for (auto& problem : runProblems_) problem = redactedWithin(std::move(problem), printed);
    for (auto& note : notes_) note = redactedWithin(std::move(note), printed);
    runError_ = redactedWithin(std::move(runError_), printed);
    report.runProblems = runProblems_;
    report.notes = notes_;
    report.took = since(started);
    report.runError = runError_;
    return report;
}

std::vector<std::string> Verification::printedStrings() const {
    std::vector<std::string> strings;
    for (const auto* pod : {&inputs_.pod, &inputs_.templatePod, &replacementPod_})
        if (pod->is_object()) {
            for (auto& value : specStrings(*pod, inputs_.credentialSources))
                strings.push_back(std::move(value.value));
            // The images the kubelet says ran (the gate's is named in egress's evidence).
            if (const auto status = pod->find("status");
                status != pod->end() && status->is_object())
                for (const char* field :
                     {"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"})
                    if (const auto list = status->find(field);
                        list != status->end() && list->is_array())
                        for (const auto& one : *list)
                            if (one.is_object() && one.contains("image") &&
                                one["image"].is_string())
                                strings.push_back(one["image"].get<std::string>());
            // Annotations a check names (AppArmor's, seccomp's) and labels.
            const auto metadata = pod->find("metadata");
            if (metadata == pod->end() || !metadata->is_object()) continue;
            for (const char* field : {"annotations", "labels"})
                if (const auto map = metadata->find(field);
                    map != metadata->end() && map->is_object())
                    for (const auto& [key, value] : map->items()) {
                        strings.push_back(key);
                        if (value.is_string()) strings.push_back(value.get<std::string>());
                    }
        }
    for (auto& text : externalNameStrings(inputs_.externalNames))
        strings.push_back(std::move(text));
    // The names the end's replay read (Services, pods' hostnames): what a line may quote.
    for (const auto& text : replayedNames_) strings.push_back(text);
    for (const auto& published : inputs_.egress.podHostnames) {
        strings.push_back(published.hostname);
        strings.push_back(published.pod);
    }
    std::sort(strings.begin(), strings.end());
    strings.erase(std::unique(strings.begin(), strings.end()), strings.end());
    return strings;
}

CheckResult Verification::timed(CheckResult (Verification::*check)(), CheckKind kind) {
    const auto started = clock_.monotonic();
    CheckResult result;
    result.kind = kind;
    try {
        result = (this->*check)();
    } catch (const std::exception& error) {
        noteIfOutage(error);
        // A thread must not throw; what broke becomes the live part's evidence, and a
        // problem of the run (not of the sandbox).
        result.livePart = Finding{Verdict::Unproven, {std::string("error: ") + error.what()}, ""};
        std::lock_guard lock(mutex_);
        runProblems_.push_back(checkId(kind) + ": " + error.what());
    }
    result.took = since(started);
    return result;
}

SandboxReport verifySandbox(kube::Client& client, const ClientFactory& newClient,
                            const Clock& clock, const kube::ResourceRef& sandboxes,
                            const std::string& ns, const std::string& name,
                            const VerifyOptions& options) {
    Verification first(client, newClient, clock, sandboxes, ns, name, options);
    SandboxReport report = first.run();
    // The server's record of changes was gone at the end (410: an API server restarted while
    // verify ran starts its cache anew, or it was compacted): nothing written and undone is
    // ruled out, so the whole run is made once more, as a restart is ridden out elsewhere.
    if (!first.recordExpired() || (options.cancel && options.cancel->cancelled())) return report;
    return Verification(client, newClient, clock, sandboxes, ns, name, options).run();
}

}  // namespace rossoctl::verify
