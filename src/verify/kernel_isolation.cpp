// The kernel-isolation boundary: does the pod run on a kernel of its own (gVisor, Kata) or on
// the node's? Static: runtimeClassName, its handler; live: the release and boot ID it sees.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "rossoctl/verify/isolation.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

std::string lowerCase(std::string value) {
    for (auto& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return value;
}

std::string runtimeClassOf(const json& pod) {
    const json spec = pod.is_object() ? pod.value("spec", json::object()) : json::object();
    const auto it = spec.find("runtimeClassName");
    return it != spec.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string handlerOf(const std::optional<json>& runtimeClass) {
    if (!runtimeClass || !runtimeClass->is_object()) return "";
    const auto it = runtimeClass->find("handler");
    return it != runtimeClass->end() && it->is_string() ? it->get<std::string>() : "";
}

// Handlers that start a container as a process of the node's kernel.
bool hostKernelHandler(const std::string& handler) {
    const std::string name = lowerCase(handler);
    return name == "runc" || name == "crun" || name == "youki" || name == "runhcs-wcow-process";
}

// A boot ID as the kernel makes it (a UUID); a node that reports something else gives none.
bool bootIdShape(const std::string& id) {
    if (id.size() != 36) return false;
    for (size_t i = 0; i < id.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash != (id[i] == '-')) return false;
        if (!dash && !std::isxdigit(static_cast<unsigned char>(id[i]))) return false;
    }
    return true;
}

}  // namespace

bool claimsSandboxedRuntime(const std::string& name) {
    const std::string value = lowerCase(name);
    for (const char* word : {"gvisor", "runsc", "kata", "firecracker"})
        if (value.find(word) != std::string::npos) return true;
    return false;
}

bool runsUnderGvisor(const json& pod, const KernelInputs& inputs) {
    for (const std::string& name : {runtimeClassOf(pod), handlerOf(inputs.runtimeClass)}) {
        const std::string value = lowerCase(name);
        if (value.find("gvisor") != std::string::npos || value.find("runsc") != std::string::npos)
            return true;
    }
    return false;
}

bool kernelIsolationRequired(const json& pod, const KernelInputs& inputs) {
    return !inputs.required.empty() || claimsSandboxedRuntime(runtimeClassOf(pod)) ||
           claimsSandboxedRuntime(handlerOf(inputs.runtimeClass));
}

Finding kernelIsolationStatic(const json& pod, const KernelInputs& inputs) {
    Finding finding{Verdict::Pass, {}, ""};
    auto fail = [&](std::string line) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(std::move(line));
    };
    const std::string name = runtimeClassOf(pod);
    const std::string node = inputs.nodeName.empty() ? "the node" : "node " + inputs.nodeName;
    const std::string kernel = inputs.nodeKernel.empty() ? "(not reported)" : inputs.nodeKernel;
    if (!inputs.required.empty() && name != inputs.required)
        fail(fmt::format("pod: spec.runtimeClassName is {}; {} requires {}",
                         name.empty() ? "unset" : name, inputs.requiredBy, inputs.required));
    if (name.empty()) {
        fail(fmt::format(
            "pod: no runtimeClassName: it runs in {}'s default runtime, on the node's kernel {}",
            node, kernel));
    } else if (!inputs.runtimeClassProblem.empty()) {
        if (finding.verdict == Verdict::Pass) finding.verdict = Verdict::Unproven;
        finding.evidence.push_back(fmt::format("runtimeclass/{} could not be read ({})", name,
                                               inputs.runtimeClassProblem));
    } else if (!inputs.runtimeClass) {
        if (finding.verdict == Verdict::Pass) finding.verdict = Verdict::Unproven;
        finding.evidence.push_back(
            fmt::format("runtimeclass/{} does not exist (deleted after the pod started?)", name));
    } else {
        const std::string handler = handlerOf(inputs.runtimeClass);
        if (hostKernelHandler(handler))
            fail(fmt::format(
                "runtimeclass/{} has handler {}: a runtime on the node's kernel {}{}", name,
                handler, kernel,
                claimsSandboxedRuntime(name) ? ", though its name promises a sandbox" : ""));
        else if (claimsSandboxedRuntime(handler))
            finding.evidence.push_back(
                fmt::format("pod: spec.runtimeClassName: {}; runtimeclass/{} has handler {} (a "
                            "sandboxed runtime)",
                            name, name, handler));
        else
            finding.evidence.push_back(fmt::format(
                "pod: spec.runtimeClassName: {}; runtimeclass/{} has handler {}, not one "
                "rossoctl knows: the kernel the pod sees decides",
                name, name, handler.empty() ? "(none)" : handler));
    }
    finding.evidence.push_back(fmt::format("{} runs kernel {}", node, kernel));
    if (inputs.required.empty())
        finding.evidence.push_back(
            claimsSandboxedRuntime(name) || claimsSandboxedRuntime(handlerOf(inputs.runtimeClass))
                ? "required: the pod's runtime class promises a sandboxed kernel"
                : "no runtime class required (project create --runtime-class or verify "
                  "--require-runtime-class make it one): reported, not judged");
    return finding;
}

Finding kernelIsolationLive(const IsolationFacts& facts, bool trusted, const KernelInputs& inputs) {
    Finding finding{Verdict::Unproven, {}, "uname"};
    if (!facts.ran) {
        finding.evidence.push_back(facts.failure +
                                   ": the kernel the pod sees is not read; live "
                                   "part unproven");
        return finding;
    }
    if (facts.kernelRelease.empty() || inputs.nodeKernel.empty()) {
        finding.evidence.push_back(fmt::format(
            "the kernel release is not known (the pod's: {}, the node's: {}): live part unproven",
            facts.kernelRelease.empty() ? "unreadable" : facts.kernelRelease,
            inputs.nodeKernel.empty() ? "not reported" : inputs.nodeKernel));
        return finding;
    }
    const std::string both = fmt::format("the pod sees kernel {}, the node runs {}",
                                         facts.kernelRelease, inputs.nodeKernel);
    const bool bootsKnown = bootIdShape(facts.bootId) && bootIdShape(inputs.nodeBootId);
    if (!facts.bootId.empty() && facts.bootId == inputs.nodeBootId) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(
            fmt::format("{}, with the node's boot ID {}: the node's kernel", both, facts.bootId));
    } else if (facts.kernelRelease == inputs.nodeKernel && !bootsKnown) {
        finding.verdict = Verdict::Fail;
        finding.evidence.push_back(both +
                                   ": the node's kernel (no boot ID to tell a VM of the same "
                                   "release apart)");
    } else if (!trusted) {
        finding.evidence.push_back(both +
                                   " (read with the pod's own tools, which the agent could make "
                                   "print any kernel): not proven its own; verify with "
                                   "--trusted-probe");
    } else {
        finding.verdict = Verdict::Pass;
        finding.evidence.push_back(
            facts.kernelRelease == inputs.nodeKernel
                ? fmt::format("{}, with boot ID {} (the node's is {}): a kernel of its own of the "
                              "same release",
                              both, facts.bootId, inputs.nodeBootId)
                : both + ": a kernel of its own");
    }
    return finding;
}

}  // namespace rossoctl::verify
