// What a verification reads before any check runs: the Sandbox, its pod and template, and the
// objects around them. A read a project user may be refused narrows what is known, never
// what is judged.
#include <fmt/format.h>

#include <algorithm>

#include "json_access.hpp"
#include "rossoctl/app/agent_wait.hpp"
#include "rossoctl/app/sandbox_pod.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/model/pod_failure.hpp"
#include "rossoctl/model/project.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "rossoctl/model/validation.hpp"
#include "sandbox_inputs.hpp"
#include "verification.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

std::vector<std::string> nodeAddresses(const json& node) {
    std::vector<std::string> addresses;
    if (!node.contains("status")) return addresses;
    for (const auto& address : node["status"].value("addresses", json::array()))
        if (address.value("type", "") == "InternalIP" || address.value("type", "") == "ExternalIP")
            addresses.push_back(address.value("address", ""));
    return addresses;
}

// Gone, going or still starting: the controller is bringing the Sandbox's pod (back) up, as right
// after a restart, whose Sandbox still says Ready. A pod that cannot start is not waited for.
// The server's word for the pod's phase; "Unknown" when it sent none (a const json's [] on a
// missing key is undefined behaviour, and value() on a null throws).
std::string podPhase(const json& pod) {
    return json_access::stringAt(json_access::at(pod, "status"), "phase", "Unknown");
}

bool podOnItsWay(const std::optional<json>& pod) {
    if (!pod || app::terminating(*pod)) return true;
    return podPhase(*pod) == "Pending" && !model::podStartFailure(*pod) &&
           !model::podImageFailure(*pod);
}

}  // namespace

void Verification::waitForPod() {
    step(fmt::format("waiting up to {}s for the pod of sandbox/{} to be ready",
                     std::chrono::duration_cast<std::chrono::seconds>(options_.timeout).count(),
                     name_));
    const app::Agent agent{{model::WorkloadType::Sandbox, sandboxes_}, inputs_.sandbox};
    const auto waited =
        app::waitForAgent(client_, clock_, agent, options_.timeout, options_.cancel);
    if (waited.outcome == app::AgentWaitResult::Outcome::Cancelled) throw Error("cancelled");
    // Whatever the wait saw, what follows judges the Sandbox and pod as they are now.
    inputs_.sandbox = client_.get(sandboxes_, ns_, name_);
}

void Verification::read() {
    try {
        inputs_.sandbox = client_.get(sandboxes_, ns_, name_);
    } catch (const kube::ApiError& error) {
        if (!error.isNotFound()) throw;
        fail(fmt::format("not found in namespace {}; {}", ns_,
                         app::sandboxNotFoundAdvice(client_, sandboxes_, ns_, name_)));
    }
    if (auto why = app::sandboxNotRunningReason(inputs_.sandbox, clock_.now()); !why.empty())
        fail(why + "; verify needs a running pod" + app::resumeAdvice(inputs_.sandbox, ns_, name_));
    // The Sandbox's own record decides, never the newest pod: anyone who may create pods can
    // add one owned by the Sandbox, with its labels, to be judged instead.
    auto pods = app::findSandboxPods(client_, inputs_.sandbox);
    auto pod = app::recordedPod(inputs_.sandbox, pods.owned);
    if (podOnItsWay(pod)) {
        waitForPod();
        if (auto why = app::sandboxNotRunningReason(inputs_.sandbox, clock_.now()); !why.empty())
            fail(why + "; verify needs a running pod" +
                 app::resumeAdvice(inputs_.sandbox, ns_, name_));
        pods = app::findSandboxPods(client_, inputs_.sandbox);
        pod = app::recordedPod(inputs_.sandbox, pods.owned);
    }
    if (!pod)
        fail(fmt::format("has no pod named {} (its record) owned by it; the Sandbox says {}",
                         model::sandboxPodName(inputs_.sandbox),
                         app::describeConditions(inputs_.sandbox)));
    inputs_.otherPods = app::otherLivePods(inputs_.sandbox, pods);
    const std::string phase = podPhase(*pod);
    if (app::terminating(*pod))
        // The wait may also end early (another pod owned by it went Ready): no time is claimed.
        fail(
            fmt::format("has pod {} being deleted, and the Sandbox records no other pod yet; "
                        "verify again once \"rossoctl agents wait {} -n {}\" succeeds",
                        (*pod)["metadata"].value("name", ""), name_, ns_));
    if (phase != "Running")
        fail(fmt::format("has pod {} in phase {}, not Running{}",
                         (*pod)["metadata"].value("name", ""), phase,
                         app::notRunningAdvice(*pod, ns_, name_, "verify again")));
    inputs_.pod = *pod;
    podName_ = inputs_.pod["metadata"].value("name", "");
    const json containers = inputs_.pod["spec"].value("containers", json::array());
    if (containers.empty()) fail("has a pod without containers");
    inputs_.container = containers.front();
    const std::string account = inputs_.pod["spec"].value("serviceAccountName", "default");
    inputs_.serviceAccount = client_.getIfExists(kube::resources::serviceAccounts(), ns_, account);
    const json policies = client_.list(kube::resources::networkPolicies(), ns_);
    inputs_.networkPolicies = policies.value("items", json::array());
    inputs_.policiesVersion =
        json_access::stringAt(json_access::at(policies, "metadata"), "resourceVersion");
    inputs_.resourceQuotas =
        client_.list(kube::resources::resourceQuotas(), ns_).value("items", json::array());
    readTokenSecrets();
    std::vector<std::string> ignored;  // unread StorageClasses leave ephemeral volumes unproven
    inputs_.storageClasses = optionalList(
        client_, {"storage.k8s.io", "v1", "storageclasses", "StorageClass", false}, "", ignored);
    inputs_.templatePod = podFromTemplate(inputs_.sandbox, inputs_.pod);
    readVolumeBindings(client_, ns_, inputs_.pod, inputs_.volumes);
    if (inputs_.templatePod.is_object())
        inputs_.templateVolumes =
            templateBindings(inputs_.templatePod, inputs_.pod, inputs_.volumes);
    inputs_.deadline.now = clock_.now();
    readNode();
    readEgressInputs();
    readPeerPods(inputs_.pod);
    if (inputs_.templatePod.is_object()) readPeerPods(inputs_.templatePod);
    const std::string templateAccount =
        inputs_.templatePod.is_object()
            ? inputs_.templatePod["spec"].value("serviceAccountName", "default")
            : account;
    inputs_.templateServiceAccount =
        templateAccount == account
            ? inputs_.serviceAccount
            : client_.getIfExists(kube::resources::serviceAccounts(), ns_, templateAccount);
    inputs_.judgedAccounts = {{account, inputs_.serviceAccount},
                              {templateAccount, inputs_.templateServiceAccount}};
    readCredentialSources(client_, ns_, inputs_.pod, inputs_.credentialSources);
    if (inputs_.templatePod.is_object())
        readCredentialSources(client_, ns_, inputs_.templatePod, inputs_.credentialSources);
    inputs_.externalNames = readExternalNames(client_, ns_);
    if (holdsPrivateKey(inputs_.pod, inputs_.credentialSources) ||
        (inputs_.templatePod.is_object() &&
         holdsPrivateKey(inputs_.templatePod, inputs_.credentialSources)))
        inputs_.clientAuthorities = readClientAuthorities(client_);
    try {
        inputs_.clusterIssuer =
            client_.getPath("/.well-known/openid-configuration").value("issuer", "");
    } catch (const std::exception&) {
        // Not discoverable with these credentials: tokens are still known by their claims.
    }
    readIsolationInputs();
    if (inputs_.templatePod.is_object())
        inputs_.templateKernel = kernelInputsFor(inputs_.templatePod);
}

void Verification::readRuntimeClass(const std::string& name, KernelInputs& kernel) {
    try {
        const kube::ResourceRef classes{"node.k8s.io", "v1", "runtimeclasses", "RuntimeClass",
                                        false};
        kernel.runtimeClass = client_.getIfExists(classes, "", name);
    } catch (const kube::ApiError& error) {
        kernel.runtimeClassProblem = error.what();
    }
}

KernelInputs Verification::kernelInputsFor(const json& pod) {
    KernelInputs kernel = inputs_.kernel;
    const std::string runtimeClass = pod["spec"].value("runtimeClassName", "");
    if (runtimeClass == inputs_.pod["spec"].value("runtimeClassName", "")) return kernel;
    kernel.runtimeClass.reset();
    kernel.runtimeClassProblem.clear();
    if (runtimeClass.empty()) return kernel;
    readRuntimeClass(runtimeClass, kernel);
    return kernel;
}

// The project's default lifetime bounds a deadline that counts (24h without one).
DeadlineBound Verification::deadlineBound(const json& namespaceObject) const {
    DeadlineBound bound;
    bound.now = clock_.now();
    if (!namespaceObject.is_object()) return bound;
    const std::string lifetime = namespaceObject.value("metadata", json::object())
                                     .value("annotations", json::object())
                                     .value(model::kDefaultLifetimeAnnotation, "");
    if (lifetime.empty()) return bound;
    try {
        bound.longest = model::parseLifetime(lifetime, model::kDefaultLifetimeAnnotation);
        bound.origin = fmt::format("the project's lifetime {}", lifetime);
    } catch (const Error&) {
        bound.origin =
            fmt::format("the default lifetime (the project's {:?} is not one)", lifetime);
    }
    return bound;
}

// A named port is the number the destination pods give it: the pods each such peer selects,
// listed once (what cannot be listed leaves the rule unevaluated).
void Verification::readPeerPods(const json& pod) {
    const auto effective =
        model::effectiveEgress(pod, inputs_.networkPolicies, inputs_.egress.ciliumPolicies);
    for (const auto& grant : effective.grants) {
        if (grant.namedPorts.empty()) continue;
        for (const auto& peer : grant.pods) {
            const std::string key = model::podPeerKey(peer);
            if (!inputs_.egress.peerPods.count(key))
                inputs_.egress.peerPods[key] = podsSelectedBy(client_, ns_, peer);
        }
    }
}

// The pod's node (its capacity, addresses, kernel and boot ID), or why it was not read: a
// project user may be refused it, and what it was needed for is then unproven (attack 56 L2).
void Verification::readNode() {
    std::tie(inputs_.node, inputs_.nodeUnread) =
        nodeNamed(inputs_.pod["spec"].value("nodeName", ""));
    if (inputs_.node.is_object()) inputs_.nodeAddresses = nodeAddresses(inputs_.node);
    inputs_.egress.nodeAddresses = inputs_.nodeAddresses;
    inputs_.egress.nodeUnread = inputs_.nodeUnread;
}

std::pair<json, std::string> Verification::nodeNamed(const std::string& name) {
    if (name.empty()) return {json(), "the pod names no node (spec.nodeName)"};
    try {
        const kube::ResourceRef nodes{"", "v1", "nodes", "Node", false};
        if (auto node = client_.getIfExists(nodes, "", name)) return {std::move(*node), ""};
        return {json(), fmt::format("node {} was not read (not found)", name)};
    } catch (const kube::ApiError& error) {
        return {json(), fmt::format("node {} was not read ({})", name,
                                    error.isForbidden() ? "forbidden" : error.what())};
    }
}

// The namespace (Pod Security level, required runtime class) and the pod's RuntimeClass; each
// may be forbidden to a project user.
void Verification::readIsolationInputs() {
    auto& kernel = inputs_.kernel;
    try {
        // Read with the egress inputs already: the same object for every check (review 66 L3).
        if (!inputs_.namespaceObject)
            inputs_.namespaceObject = client_.getIfExists(kube::resources::namespaces(), "", ns_);
    } catch (const kube::ApiError&) {
    }
    if (!options_.requireRuntimeClass.empty()) {
        kernel.required = options_.requireRuntimeClass;
        kernel.requiredBy = "--require-runtime-class";
    } else if (inputs_.namespaceObject) {
        const json annotations =
            (*inputs_.namespaceObject)["metadata"].value("annotations", json::object());
        kernel.required = annotations.value(kRuntimeClassAnnotation, "");
        kernel.requiredBy =
            fmt::format("the project (namespace {} annotation {})", ns_, kRuntimeClassAnnotation);
    }
    kernel.nodeName = inputs_.pod["spec"].value("nodeName", "");
    // Not read (readNode says why): its kernel is not known, the live part unproven.
    if (inputs_.node.is_object()) {
        const json info =
            inputs_.node.value("status", json::object()).value("nodeInfo", json::object());
        kernel.nodeKernel = info.value("kernelVersion", "");
        kernel.nodeBootId = info.value("bootID", "");
    }
    const std::string runtimeClass = inputs_.pod["spec"].value("runtimeClassName", "");
    if (runtimeClass.empty()) return;
    readRuntimeClass(runtimeClass, kernel);
}

void Verification::readTokenSecrets() {
    kube::ListOptions options;
    options.fieldSelector = "type=kubernetes.io/service-account-token";
    std::vector<std::string> ignored;
    const json items = optionalList(client_, kube::resources::secrets(), ns_, ignored, options);
    if (!items.is_array()) return;
    inputs_.tokenSecrets.emplace();
    for (const auto& secret : items)
        inputs_.tokenSecrets->push_back(secret["metadata"].value("name", ""));
}

}  // namespace rossoctl::verify
