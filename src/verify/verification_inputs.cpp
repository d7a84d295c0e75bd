// What a verification reads before any check runs: the Sandbox, its pod and template, and the
// objects around them. A read a project user may be refused narrows what is known, never
// what is judged.
#include <fmt/format.h>

#include <algorithm>

#include "json_access.hpp"
#include "rossoctl/app/agent_wait.hpp"
#include "rossoctl/app/project_dns.hpp"
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

// A list that may be forbidden or not served: its items, or null with the reason noted.
json optionalList(kube::Client& client, const kube::ResourceRef& ref, const std::string& ns,
                  std::vector<std::string>& problems, const kube::ListOptions& options = {}) {
    try {
        return client.list(ref, ns, options).value("items", json::array());
    } catch (const kube::ApiError& error) {
        if (!error.isNotFound())
            problems.push_back(fmt::format("could not list {}: {}", ref.resource, error.what()));
        return nullptr;
    }
}

std::vector<std::string> endpointAddresses(const json& endpoints) {
    std::vector<std::string> addresses;
    for (const auto& subset : endpoints.value("subsets", json::array()))
        for (const auto& address : subset.value("addresses", json::array()))
            addresses.push_back(address.value("ip", ""));
    return addresses;
}

// The `kubernetes` Service's cluster IPs on its port, then its endpoints' address:port;
// unreadable ones are left out (the live attempt then tries fewer, the static half is unchanged).
void readApiServerTargets(kube::Client& client, EgressInputs& egress) {
    try {
        const kube::ResourceRef services{"", "v1", "services", "Service", true};
        if (auto service = client.getIfExists(services, "default", "kubernetes")) {
            const json spec = service->value("spec", json::object());
            int port = 443;
            for (const auto& entry : spec.value("ports", json::array()))
                if (entry.contains("port") && entry["port"].is_number_integer())
                    port = entry["port"].get<int>();
            std::vector<std::string> ips;
            for (const auto& ip : spec.value("clusterIPs", json::array()))
                if (ip.is_string()) ips.push_back(ip.get<std::string>());
            if (ips.empty() && spec.contains("clusterIP") && spec["clusterIP"].is_string())
                ips.push_back(spec["clusterIP"].get<std::string>());
            for (const auto& ip : ips)
                if (!ip.empty() && ip != "None") egress.apiServerTargets.emplace_back(ip, port);
        }
    } catch (const kube::ApiError&) {
    }
    egress.apiServerServiceCount = egress.apiServerTargets.size();
    try {
        const kube::ResourceRef endpoints{"", "v1", "endpoints", "Endpoints", true};
        if (auto found = client.getIfExists(endpoints, "default", "kubernetes"))
            for (const auto& subset : found->value("subsets", json::array())) {
                std::vector<int> ports;
                for (const auto& entry : subset.value("ports", json::array()))
                    if (entry.contains("port") && entry["port"].is_number_integer())
                        ports.push_back(entry["port"].get<int>());
                for (const auto& address : subset.value("addresses", json::array()))
                    for (int port : ports)
                        egress.apiServerTargets.emplace_back(address.value("ip", ""), port);
            }
    } catch (const kube::ApiError&) {
    }
    // A cluster may publish them in EndpointSlices only (the local cluster's
    // kubernetes-localcluster): each slice labelled for the Service.
    try {
        const kube::ResourceRef slices{"discovery.k8s.io", "v1", "endpointslices", "EndpointSlice",
                                       true};
        kube::ListOptions options;
        options.labelSelector = "kubernetes.io/service-name=kubernetes";
        const json found = client.list(slices, "default", options);
        for (const auto& slice : found.value("items", json::array())) {
            std::vector<int> ports;
            for (const auto& entry : slice.value("ports", json::array()))
                if (entry.contains("port") && entry["port"].is_number_integer())
                    ports.push_back(entry["port"].get<int>());
            for (const auto& endpoint : slice.value("endpoints", json::array()))
                for (const auto& address : endpoint.value("addresses", json::array()))
                    for (int port : ports)
                        if (address.is_string()) {
                            const std::pair<std::string, int> target{address.get<std::string>(),
                                                                     port};
                            if (std::find(egress.apiServerTargets.begin(),
                                          egress.apiServerTargets.end(),
                                          target) == egress.apiServerTargets.end())
                                egress.apiServerTargets.push_back(target);
                        }
        }
    } catch (const kube::ApiError&) {
    }
}

// The addresses of the namespace's pods the pod's own policies let it reach: a connection held
// to one of them is the static half's to judge. A pod of the project the policies do not grant
// is no allowance (a relay with open egress of its own, attack 54 E4).
void readProjectPodAddresses(kube::Client& client, const std::string& ns, const json& pod,
                             const json& networkPolicies, const json& namespaceLabels,
                             EgressInputs& egress) {
    const model::EffectiveEgress granted =
        model::effectiveEgress(pod, networkPolicies, egress.ciliumPolicies);
    const auto grants = [&](const json& other) {
        return model::egressGrantsPod(
            granted, other.value("metadata", json::object()).value("labels", json()),
            namespaceLabels);
    };
    try {
        const json pods = client.list(kube::resources::pods(), ns);
        egress.namespacePods = pods;
        for (const auto& other : pods.value("items", json::array())) {
            if (!grants(other)) continue;
            for (const auto& ip :
                 other.value("status", json::object()).value("podIPs", json::array()))
                if (ip.contains("ip") && ip["ip"].is_string())
                    egress.projectPodAddresses.push_back(ip["ip"].get<std::string>());
        }
    } catch (const kube::ApiError&) {
        // Not read: a connection held to a pod of the project then fails, never passes.
    }
}

// The ports host-network pods on the node declare (containerPort, hostPort; TCP and UDP);
// refused to list pods cluster-wide, they are unknown and egress's live half is unproven.
void readHostListeners(kube::Client& client, const std::string& nodeName, EgressInputs& egress) {
    if (nodeName.empty()) {
        egress.hostListenersUnread = "the pod names no node";
        return;
    }
    try {
        kube::ListOptions options;
        options.fieldSelector = "spec.nodeName=" + nodeName;
        const json pods = client.list(kube::resources::pods(), "", options);
        for (const auto& pod : pods.value("items", json::array())) {
            const json spec = json_access::at(pod, "spec");
            const json metadata = json_access::at(pod, "metadata");
            const std::string podNamespace = json_access::stringAt(metadata, "namespace", "");
            const std::string owner =
                fmt::format("pod {}/{}", podNamespace, json_access::stringAt(metadata, "name", ""));
            // The kubelet probes no pod that has ended (review 60 #7).
            const std::string phase =
                json_access::stringAt(json_access::at(pod, "status"), "phase");
            if (podNamespace != "kube-system" && phase != "Succeeded" && phase != "Failed")
                for (const auto& where : kubeletHostTargets(pod))
                    egress.nodeProbeHosts.push_back(fmt::format("{} ({})", owner, where));
            if (!spec.is_object() || !spec.value("hostNetwork", false)) continue;
            if (podNamespace != "kube-system") egress.hostNetworkPods.push_back(owner);
            // A native sidecar (an init container that keeps running) listens as well (E5e).
            json containers = spec.value("containers", json::array());
            for (const auto& init : spec.value("initContainers", json::array()))
                containers.push_back(init);
            for (const auto& container : containers) {
                if (!container.is_object()) continue;
                for (const auto& port : container.value("ports", json::array())) {
                    if (!port.is_object()) continue;
                    const bool udp = port.value("protocol", "TCP") != "TCP";
                    for (const char* key : {"containerPort", "hostPort"}) {
                        if (!port.contains(key) || !port[key].is_number_integer()) continue;
                        const int number = port[key].get<int>();
                        if (number <= 0 || number > 65535) continue;
                        const bool seen =
                            std::any_of(egress.hostListeners.begin(), egress.hostListeners.end(),
                                        [&](const auto& known) {
                                            return known.port == number && known.udp == udp;
                                        });
                        if (!seen) egress.hostListeners.push_back({number, udp, owner});
                    }
                }
            }
        }
    } catch (const kube::ApiError& error) {
        egress.hostListenersUnread =
            fmt::format("pods on node {} not listed ({})", nodeName, error.what());
    }
}

// Which namespaces admit a pod whose probe names a host, by their Pod Security labels and the
// server's version; refused to list namespaces, it is not known (attack 59 K1).
void readProbeHostNamespaces(kube::Client& client, EgressInputs& egress) {
    json version;
    try {
        version = client.getPath("/version");
    } catch (const kube::ApiError&) {
        // Unknown: no namespace counts as refusing (the rule needs a v1.34 server).
    }
    try {
        const json namespaces = client.list(kube::resources::namespaces(), "");
        egress.probeHostNamespaces = namespacesAdmittingProbeHosts(namespaces, version);
        egress.hostAccessNamespaces = namespacesAdmittingHostAccess(namespaces);
    } catch (const kube::ApiError& error) {
        egress.probeHostNamespacesUnread = fmt::format("namespaces not listed ({})", error.what());
    }
}

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
    inputs_.networkPolicies =
        client_.list(kube::resources::networkPolicies(), ns_).value("items", json::array());
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

// What the project allows and the ranges called out by name; each read may be forbidden
// to a project user, and then only narrows what can be named, never what is judged.
void Verification::readEgressInputs() {
    auto& egress = inputs_.egress;
    egress.probedPort = options_.egressTarget.port;
    // Cilium policies add allowances: unreadable, they leave egress unproven.
    egress.ciliumPolicies =
        optionalList(client_, kube::resources::ciliumNetworkPolicies(), ns_, egress.unreadPolicies);
    for (auto& line : unevaluatedPolicyKinds(client_, ns_))
        egress.unreadPolicies.push_back(std::move(line));
    json firewall;
    try {
        firewall = client_.getIfExists(kube::resources::egressFirewalls(), ns_, "default")
                       .value_or(json());
    } catch (const kube::ApiError&) {
    }
    json namespaceLabels;
    try {
        const auto namespaceObject = client_.getIfExists(kube::resources::namespaces(), "", ns_);
        if (namespaceObject)
            namespaceLabels =
                namespaceObject->value("metadata", json::object()).value("labels", json());
        egress.allowance = model::projectAllowance(namespaceObject.value_or(json()), firewall);
        inputs_.deadline = deadlineBound(namespaceObject.value_or(json()));
    } catch (const kube::ApiError& error) {
        egress.readProblems.push_back(fmt::format(
            "could not read namespace {} ({}): judged against DNS only", ns_, error.what()));
    }
    egress.clusterDns = app::readClusterDns(client_);
    try {
        const kube::ResourceRef endpoints{"", "v1", "endpoints", "Endpoints", true};
        if (auto found = client_.getIfExists(endpoints, "default", "kubernetes"))
            egress.apiServerAddresses = endpointAddresses(*found);
    } catch (const kube::ApiError&) {
        // Not allowed to read them: the public and metadata ranges are still named.
    }
    readApiServerTargets(client_, egress);
    readHostListeners(client_, inputs_.pod["spec"].value("nodeName", ""), egress);
    readProbeHostNamespaces(client_, egress);
    readProjectPodAddresses(client_, ns_, inputs_.pod, inputs_.networkPolicies, namespaceLabels,
                            egress);
}
}  // namespace rossoctl::verify
