// Attack 54 E5 against the local cluster: kube-router lets a pod reach node-local ports of the
// NodePort range whatever its policies say, so a host-network pod listening there is a relay
// out of every "egress denied" sandbox on the node. verify tries the ports host-network pods
// declare, from the trusted probe, and must fail egress when one answers.
#include <catch2/catch.hpp>
#include <random>
#include <sstream>
#include <string>
#include <utility>

#include "harness.hpp"
#include "verify_report.hpp"

using nlohmann::json;

namespace {

// A PersistentVolume of the node's /tmp, made by hand (no provisioner's annotation); deleted
// when the case ends however it ends, since every sandbox verified meanwhile is unproven.
struct HandMadeVolume {
    const rossoctl::kube::ResourceRef ref{"", "v1", "persistentvolumes", "PersistentVolume", false};
    std::string name;
    explicit HandMadeVolume(std::string made) : name(std::move(made)) {
        harness::admin().create(ref, "",
                                {{"apiVersion", "v1"},
                                 {"kind", "PersistentVolume"},
                                 {"metadata", {{"name", name}}},
                                 {"spec",
                                  {{"capacity", {{"storage", "1Mi"}}},
                                   {"accessModes", {"ReadWriteOnce"}},
                                   {"storageClassName", name},
                                   {"hostPath", {{"path", "/tmp"}, {"type", "Directory"}}}}}});
    }
    void remove() {
        try {
            if (!name.empty()) harness::admin().remove(ref, "", name, {});
        } catch (...) {
        }
        name.clear();
    }
    ~HandMadeVolume() { remove(); }
    HandMadeVolume(const HandMadeVolume&) = delete;
    HandMadeVolume& operator=(const HandMadeVolume&) = delete;
};

}  // namespace

// [outage]: run alone, as the cases that stop a component do: while its listener lives, every
// other sandbox verified on the node fails egress too (rightly).
TEST_CASE("sandbox verify: a host-network listener in the NodePort range fails egress",
          "[verify-host-listener][outage]") {
    harness::TestNamespace relay("verify54-hostnet", true,
                                 {{"pod-security.kubernetes.io/enforce", "privileged"}});
    const int port = 30000 + static_cast<int>(std::random_device{}() % 2700);
    harness::TestNamespace project("verify54-listener", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    harness::admin().create(harness::sandboxRef(), ns, harness::smallSandbox(ns, "agent"));
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "agent"); }, 180));
    // A second listener in a native sidecar, bound to the pod's gateway only (attack 55 E5b,
    // E5e): the default route's next hop, as the pod's /proc/net/route has it.
    const auto route =
        harness::run({harness::kubectlPath(), "--kubeconfig", harness::kubeconfigPath(), "exec",
                      "-n", ns, "agent", "--", "cat", "/proc/net/route"});
    std::string gateway;
    std::istringstream lines(route.out);
    for (std::string iface, destination, hex, rest; lines >> iface >> destination >> hex;) {
        std::getline(lines, rest);
        if (destination != "00000000" || hex.size() != 8) continue;
        const unsigned long value = std::stoul(hex, nullptr, 16);
        gateway = std::to_string(value & 0xff) + "." + std::to_string((value >> 8) & 0xff) + "." +
                  std::to_string((value >> 16) & 0xff) + "." + std::to_string(value >> 24);
    }
    INFO(route.out << route.err);
    REQUIRE(!gateway.empty());
    // Attack 56 E5f-h: a declared port where nothing answers verify's probe (a listener that
    // hides, filters the SYN or binds an address not tried): the refusal proves nothing, since
    // kube-router lets the NodePort range by (and no control tells the two apart).
    const json quiet = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", "quiet"}}},
        {"spec",
         {{"hostNetwork", true},
          {"terminationGracePeriodSeconds", 1},
          {"containers",
           json::array({{{"name", "quiet"},
                         {"image", "busybox:1.36"},
                         {"command", {"sleep", "600"}},
                         {"ports", json::array({{{"containerPort", port + 2}}})}}})}}}};
    // Creates a host-network pod in the relay namespace and waits until it runs.
    const auto startHostPod = [&](const json& hostPod) {
        const std::string name = hostPod["metadata"]["name"].get<std::string>();
        harness::admin().create(rossoctl::kube::resources::pods(), relay.name(), hostPod);
        REQUIRE(harness::eventually(
            [&] {
                auto found = harness::admin().getIfExists(rossoctl::kube::resources::pods(),
                                                          relay.name(), name);
                return found &&
                       found->value("status", json::object()).value("phase", "") == "Running";
            },
            180));
    };
    startHostPod(quiet);
    {
        const auto [hidden, hiddenReport] = harness::verifyTrusted(ns, "agent");
        INFO(hidden.out << hidden.err);
        const json& hiddenEgress = harness::checkNamed(hiddenReport, "egress");
        CHECK(hiddenEgress["live"]["result"] == "unproven");
        CHECK_THAT(harness::evidenceOf(hiddenEgress),
                   Catch::Contains(":" + std::to_string(port + 2) + "/, which proves nothing"));
        CHECK(hidden.exitCode == 3);
        // Attack 56 N2: as a client it connects in past default-deny ingress, whenever.
        CHECK(hiddenEgress["static"]["result"] == "unproven");
        CHECK_THAT(harness::evidenceOf(hiddenEgress),
                   Catch::Contains("pod " + relay.name() +
                                   "/quiet on the node shares its network namespace"));
    }
    const json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", "relay"}}},
        {"spec",
         {{"hostNetwork", true},
          {"terminationGracePeriodSeconds", 1},
          {"initContainers",
           json::array(
               {{{"name", "sidecar"},
                 {"image", "busybox:1.36"},
                 {"restartPolicy", "Always"},
                 {"command", {"httpd", "-f", "-p", gateway + ":" + std::to_string(port + 1)}},
                 {"ports", json::array({{{"containerPort", port + 1}}})}}})},
          {"containers", json::array({{{"name", "relay"},
                                       {"image", "busybox:1.36"},
                                       {"command", {"httpd", "-f", "-p", std::to_string(port)}},
                                       {"ports", json::array({{{"containerPort", port}}})}}})}}}};
    startHostPod(pod);
    const auto [result, report] = harness::verifyTrusted(ns, "agent");
    INFO(result.out << result.err);
    const json& egress = harness::checkNamed(report, "egress");
    CHECK(egress["live"]["result"] == "fail");
    CHECK_THAT(harness::evidenceOf(egress),
               Catch::Contains("a host-network listener (pod " + relay.name() +
                               "/relay) on the node at http://") &&
                   Catch::Contains(":" + std::to_string(port) + "/: ") &&
                   Catch::Contains("/relay) on the node at http://" + gateway + ":" +
                                   std::to_string(port + 1) + "/: "));
    CHECK(result.exitCode == 3);
    // Gone before the shards that verify in parallel start.
    for (const char* name : {"relay", "quiet"}) {
        harness::admin().remove(rossoctl::kube::resources::pods(), relay.name(), name);
        CHECK(harness::eventually(
            [&] {
                return !harness::admin().getIfExists(rossoctl::kube::resources::pods(),
                                                     relay.name(), name);
            },
            60));
    }
}

// Attack 59 K1: a pod of another namespace, on the node, whose readiness probe names the
// sandbox's address; its namespace admits it (Pod Security privileged). The kubelet connects from
// the node, which kube-router lets past the project's default-deny ingress, and what the agent
// answers reaches that pod (its Ready condition, and a redirect's body in its Events). [outage]:
// while it lives, every sandbox verified on the node is unproven (rightly).
TEST_CASE("sandbox verify: another namespace's probe or host-path pod leaves egress unproven",
          "[verify-host-listener][outage]") {
    harness::TestNamespace relay("verify59-prober", true,
                                 {{"pod-security.kubernetes.io/enforce", "privileged"}});
    harness::TestNamespace project("verify59-probed", false);
    const std::string ns = project.name();
    harness::createProject(ns);
    json box = harness::smallSandbox(ns, "agent", "busybox:1.36");
    box["spec"]["podTemplate"]["spec"]["containers"][0]["command"] = {"httpd", "-f", "-p",
                                                                      "8080",  "-h", "/"};
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "agent"); }, 180));
    const auto agentPod =
        harness::admin().getIfExists(rossoctl::kube::resources::pods(), ns, "agent");
    REQUIRE(agentPod);
    const std::string address = (*agentPod)["status"].value("podIP", "");
    REQUIRE(!address.empty());
    const json prober = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", "prober"}}},
        {"spec",
         {{"terminationGracePeriodSeconds", 1},
          {"containers",
           json::array(
               {{{"name", "c"},
                 {"image", "busybox:1.36"},
                 {"command", {"sleep", "600"}},
                 {"readinessProbe",
                  {{"httpGet", {{"host", address}, {"port", 8080}, {"path", "/etc/hostname"}}},
                   {"periodSeconds", 1}}}}})}}}};
    // As in attack 59, the prober comes after verify: the namespace that admits it is enough.
    {
        const auto [before, beforeReport] = harness::verifyTrusted(ns, "agent");
        INFO(before.out << before.err);
        const json& egress = harness::checkNamed(beforeReport, "egress");
        CHECK(egress["static"]["result"] == "unproven");
        CHECK_THAT(harness::evidenceOf(egress),
                   Catch::Contains(relay.name() + " (enforce=privileged)") &&
                       Catch::Contains("pods whose probes or lifecycle hooks name a host"));
        CHECK(before.exitCode == 3);
        // Attack 60 H1: the same namespace admits hostPath, which reaches this pod's volumes.
        for (const char* check : {"service-account-token", "nothing-survives"}) {
            const json& found = harness::checkNamed(beforeReport, check);
            INFO(check);
            CHECK(found["static"]["result"] == "unproven");
            CHECK_THAT(harness::evidenceOf(found),
                       Catch::Contains(relay.name() + " (enforce=privileged)") &&
                           Catch::Contains("pods with the node's files (hostPath)"));
        }
    }
    harness::admin().create(rossoctl::kube::resources::pods(), relay.name(), prober);
    // The control: the prober turns Ready only by the agent's answers, through default-deny.
    CHECK(harness::eventually(
        [&] {
            auto found = harness::admin().getIfExists(rossoctl::kube::resources::pods(),
                                                      relay.name(), "prober");
            if (!found) return false;
            for (const auto& condition :
                 found->value("status", json::object()).value("conditions", json::array()))
                if (condition.value("type", "") == "Ready")
                    return condition.value("status", "") == "True";
            return false;
        },
        120));
    const auto [result, report] = harness::verifyTrusted(ns, "agent");
    INFO(result.out << result.err);
    const json& egress = harness::checkNamed(report, "egress");
    CHECK(egress["static"]["result"] == "unproven");
    CHECK_THAT(
        harness::evidenceOf(egress),
        Catch::Contains("pod " + relay.name() + "/prober (container c readinessProbe: host " +
                        address + ") on the node names a host for the kubelet"));
    CHECK(result.exitCode == 3);
    harness::admin().remove(rossoctl::kube::resources::pods(), relay.name(), "prober");
    CHECK(harness::eventually(
        [&] {
            return !harness::admin().getIfExists(rossoctl::kube::resources::pods(), relay.name(),
                                                 "prober");
        },
        60));
    // A pod with the node's files made while the namespace admitted it keeps running once the
    // namespace enforces baseline: it still reaches this pod's volumes on the node.
    const json reader = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", "reader"}}},
        {"spec",
         {{"terminationGracePeriodSeconds", 1},
          {"nodeName", (*agentPod)["spec"].value("nodeName", "")},
          {"volumes",
           {{{"name", "node"}, {"hostPath", {{"path", "/tmp"}, {"type", "Directory"}}}}}},
          {"containers",
           json::array(
               {{{"name", "c"}, {"image", "busybox:1.36"}, {"command", {"sleep", "600"}}}})}}}};
    harness::admin().create(rossoctl::kube::resources::pods(), relay.name(), reader);
    // Attack 61 H1c: one held by a scheduling gate is on no node while verify reads.
    json gated = reader;
    gated["metadata"]["name"] = "gated";
    gated["spec"].erase("nodeName");
    gated["spec"]["schedulingGates"] = {{{"name", "rossoctl.test/later"}}};
    harness::admin().create(rossoctl::kube::resources::pods(), relay.name(), gated);
    harness::admin().patch(
        rossoctl::kube::resources::namespaces(), "", relay.name(), rossoctl::kube::PatchType::Merge,
        R"({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "baseline"}}})");
    // Review 61 #6: a hand-made hostPath PersistentVolume that any project's claim may bind (a
    // class of its own, so no other case's claim does).
    HandMadeVolume volume(relay.name() + "-node");
    {
        const auto [held, heldReport] = harness::verifyTrusted(ns, "agent");
        INFO(held.out << held.err);
        for (const char* check : {"service-account-token", "egress", "nothing-survives"}) {
            const json& found = harness::checkNamed(heldReport, check);
            INFO(check);
            CHECK(found["static"]["result"] == "unproven");
            // Both named, in the server's order (namespace, then name).
            CHECK_THAT(harness::evidenceOf(found),
                       Catch::Contains("pod " + relay.name() + "/reader (hostPath /tmp)") &&
                           Catch::Contains("pod " + relay.name() +
                                           "/gated, not on a node yet (hostPath /tmp)") &&
                           Catch::Contains(" reach a node's files") &&
                           Catch::Contains("PersistentVolume " + volume.name +
                                           " (hostPath /tmp, Available: any project's claim may "
                                           "bind it): a pod that mounts it has a node's files") &&
                           !Catch::Contains(relay.name() + " (enforce=privileged)"));
        }
        CHECK(held.exitCode == 3);
    }
    volume.remove();
    harness::admin().remove(rossoctl::kube::resources::pods(), relay.name(), "gated");
    // The control: the reader's namespace vouched for by the cluster's admin (review 61 #4),
    // the same three pass their static halves and say why (the agent's listener leaves egress's
    // live half unproven).
    struct Vouch {
        ~Vouch() {
            try {
                harness::admin().remove(rossoctl::kube::resources::configMaps(), "kube-system",
                                        "rossoctl-verify", {});
            } catch (...) {
            }
        }
    } vouch;
    harness::admin().create(rossoctl::kube::resources::configMaps(), "kube-system",
                            {{"apiVersion", "v1"},
                             {"kind", "ConfigMap"},
                             {"metadata", {{"name", "rossoctl-verify"}}},
                             {"data", {{"trusted-namespaces", relay.name()}}}});
    const auto [clean, cleanReport] = harness::verifyTrusted(ns, "agent");
    for (const char* check : {"service-account-token", "egress", "nothing-survives"}) {
        const json& found = harness::checkNamed(cleanReport, check);
        INFO(check << ": " << found.dump());
        CHECK(found["static"]["result"] == "pass");
    }
    CHECK_THAT(harness::evidenceOf(harness::checkNamed(cleanReport, "service-account-token")),
               Catch::Contains("the host access of pods of namespace " + relay.name() +
                               ", which the ConfigMap kube-system/rossoctl-verify vouches for, "
                               "is not counted"));
}

TEST_CASE("sandbox verify: an allowed range that holds the pod network leaves egress unproven",
          "[verify-host-listener]") {
    // Attack 61 C1: a pod of any namespace in the allowed range, with egress of its own, relays
    // what the agent sends it; the control shows the agent reaching one.
    harness::TestNamespace project("verify61-cidr", false);
    const std::string ns = project.name();
    harness::TestNamespace relay("verify61-relay");
    harness::admin().create(
        rossoctl::kube::resources::pods(), relay.name(),
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", "relay"}}},
         {"spec",
          {{"terminationGracePeriodSeconds", 1},
           {"containers",
            json::array({{{"name", "c"},
                          {"image", "busybox:1.36"},
                          {"command", {"httpd", "-f", "-p", "8080", "-h", "/"}},
                          // A relay without NET_RAW: one that keeps it leaves every sandbox
                          // verified meanwhile unproven (attack 65 N2).
                          {"securityContext", {{"capabilities", {{"drop", {"NET_RAW"}}}}}},
                          {"readinessProbe",
                           {{"tcpSocket", {{"port", 8080}}}, {"periodSeconds", 1}}}}})}}}});
    std::string relayAddress;
    REQUIRE(harness::eventually(
        [&] {
            const auto found = harness::admin().getIfExists(rossoctl::kube::resources::pods(),
                                                            relay.name(), "relay");
            if (!found) return false;
            relayAddress = found->value("status", json::object()).value("podIP", "");
            return !relayAddress.empty();
        },
        120));
    // The relay's address, as the project's allowance (--no-check: its check would reach a pod).
    auto created = harness::rossoctl(
        {"project", "create", ns, "--allow-cidr", relayAddress + "/32", "--no-check"});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
    json box = harness::smallSandbox(ns, "agent", "busybox:1.36");
    harness::admin().create(harness::sandboxRef(), ns, box);
    REQUIRE(harness::eventually([&] { return harness::sandboxReadyNow(ns, "agent"); }, 180));
    // The control: the agent reaches the relay past default-deny, through the allowance.
    const auto reached = harness::rossoctl(
        {"sandbox", "exec", "agent", "-n", ns, "--", "sh", "-c",
         "for i in 1 2 3 4 5; do nc -w 2 " + relayAddress +
             " 8080 </dev/null && echo reached && exit 0; sleep 1; done; echo refused"});
    INFO(reached.out << reached.err);
    CHECK_THAT(reached.out, Catch::Contains("reached"));
    const auto [result, report] = harness::verifyTrusted(ns, "agent");
    INFO(result.out << result.err);
    const json& egress = harness::checkNamed(report, "egress");
    CHECK(egress["static"]["result"] == "unproven");
    CHECK_THAT(harness::evidenceOf(egress),
               Catch::Contains("which holds the cluster's pod addresses"));
    CHECK(result.exitCode == 3);
}
