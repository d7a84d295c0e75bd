// Attack 54 E5 and attack 55 E5b-d: the ports host-network pods declare are tried at the node's
// addresses and the pod's gateway; what cannot be tried is unproven, never a silent pass.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <catch2/catch.hpp>

#include "rossoctl/verify/isolation.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl::verify;
using nlohmann::json;

namespace {

EgressInputs node(std::vector<EgressInputs::HostListener> listeners) {
    EgressInputs inputs;
    inputs.seccompDefault = true;  // a pod with no seccomp profile gets the runtime's
    inputs.nodeAddresses = {"10.247.71.170"};
    inputs.hostListeners = std::move(listeners);
    return inputs;
}

std::vector<std::string> urls(const std::vector<ListenerProbe>& probes) {
    std::vector<std::string> out;
    for (const auto& probe : probes) out.push_back(probe.target.url);
    return out;
}

}  // namespace

TEST_CASE("attack 55 E5b: the pod's gateway from /proc/net/route is tried too", "[verify]") {
    ProbeOutput output;
    // Iface Destination Gateway ...: the default route's next hop 10.250.0.1, the pod's subnet.
    output.stdoutText =
        "rossoctl-gateway=0100FA0A\nrossoctl-gateway=00000000\nrossoctl-gateway=zz\n"
        "rossoctl-done=1\n";
    const IsolationFacts facts = parseIsolationFacts(output);
    CHECK(facts.gateways == std::vector<std::string>{"10.250.0.1"});
    CHECK_THAT(isolationProbeCommand().at(2), Catch::Contains("/proc/net/route"));

    Finding doubts{Verdict::Pass, {}, ""};
    const auto probes = hostListenerProbes(node({{31073, false, "pod atk55-relay/relay-b"}}),
                                           facts.gateways, 12, doubts);
    CHECK(urls(probes) ==
          std::vector<std::string>{"http://10.247.71.170:31073/", "http://10.250.0.1:31073/"});
    CHECK(probes.at(1).owner == "pod atk55-relay/relay-b");
    CHECK(doubts.verdict == Verdict::Pass);
}

TEST_CASE("attack 55 E5c: a declared UDP port of a host-network pod is unproven", "[verify]") {
    Finding doubts{Verdict::Pass, {}, ""};
    const auto probes =
        hostListenerProbes(node({{31072, true, "pod atk55-relay/relay-u"}}), {}, 12, doubts);
    CHECK(probes.empty());
    CHECK(doubts.verdict == Verdict::Unproven);
    CHECK_THAT(doubts.evidence.at(0),
               Catch::Contains("pod atk55-relay/relay-u on the node declares UDP port 31072"));
}

TEST_CASE("attack 55 E5d: past the cap, the untried pairs are unproven", "[verify]") {
    std::vector<EgressInputs::HostListener> decoys;
    for (int port = 31000; port < 31009; ++port) decoys.push_back({port, false, "pod x/decoy"});
    decoys.push_back({31074, false, "pod atk55-relay/relay-b"});
    Finding doubts{Verdict::Pass, {}, ""};
    const auto probes = hostListenerProbes(node(decoys), {"10.250.0.1"}, 12, doubts);
    CHECK(probes.size() == 12);
    CHECK(doubts.verdict == Verdict::Unproven);
    CHECK_THAT(doubts.evidence.at(0), Catch::Contains("8 more address and port pairs"));
}

TEST_CASE("host listeners: the API server's own targets and allowed ones are not tried again",
          "[verify]") {
    EgressInputs inputs = node({{27032, false, "pod kube-system/apiserver"}});
    inputs.apiServerTargets = {{"10.247.71.170", 27032}};
    Finding doubts{Verdict::Pass, {}, ""};
    CHECK(hostListenerProbes(inputs, {}, 12, doubts).empty());
    CHECK(doubts.verdict == Verdict::Pass);
}

namespace {

// hostListenerReachLive's reading of a probe: "no connection" (pass) or a connection (fail).
Finding listenerReading(Verdict verdict, const std::string& line) {
    return Finding{verdict, {line}, "wget"};
}

}  // namespace

TEST_CASE("attack 56 E5f-h, L2b: a host listener's refusal proves nothing", "[verify]") {
    SECTION("no connection is unproven, never a pass") {
        // E5h: a socket filter drops verify's SYN; E5g: the relay closes while probes run;
        // E5f: it listens on a node address not tried; L2b: the node's addresses not read.
        const Finding judged = judgeHostListeners({listenerReading(
            Verdict::Pass,
            "no connection to a host-network listener (pod atk56-relay/relay-h) on "
            "the node at http://10.247.71.170:31083/")});
        CHECK(judged.verdict == Verdict::Unproven);
        CHECK_THAT(judged.evidence.back(),
                   Catch::Contains("http://10.247.71.170:31083/, which proves nothing") &&
                       Catch::Contains("no control tells its refusal from the policies'"));
    }
    SECTION("a connection fails") {
        CHECK(judgeHostListeners({listenerReading(Verdict::Fail, "wget connected"),
                                  listenerReading(Verdict::Pass, "no connection")})
                  .verdict == Verdict::Fail);
    }
    SECTION("no host listener on the node: nothing said") {
        const Finding judged = judgeHostListeners({});
        CHECK(judged.verdict == Verdict::Pass);
        CHECK(judged.evidence.empty());
    }
}

TEST_CASE("attack 56 L2b: the node's addresses not read, the listener line says why", "[verify]") {
    EgressInputs inputs = node({{31082, false, "pod atk56-relay/relay-g"}});
    inputs.nodeAddresses.clear();
    inputs.nodeUnread = "node local-node was not read (forbidden)";
    Finding doubts{Verdict::Pass, {}, ""};
    const auto probes = hostListenerProbes(inputs, {"10.250.0.1"}, 12, doubts);
    CHECK(urls(probes) == std::vector<std::string>{"http://10.250.0.1:31082/"});
    CHECK(doubts.verdict == Verdict::Unproven);
    CHECK_THAT(doubts.evidence.at(0),
               Catch::Contains("node local-node was not read (forbidden): host-network pods' ports "
                               "were tried only at the pod's gateway"));
    // No host listener declared: nothing to say.
    Finding none{Verdict::Pass, {}, ""};
    inputs.hostListeners.clear();
    hostListenerProbes(inputs, {"10.250.0.1"}, 12, none);
    CHECK(none.verdict == Verdict::Pass);
}

TEST_CASE("host listeners: pods on the node not listed leave egress unproven", "[verify]") {
    // A user who may not list pods cluster-wide: a relay among the node's host-network pods is
    // never tried, which once added only a line of evidence to a pass.
    EgressInputs inputs = node({});
    inputs.hostListenersUnread = "pods on node local-node not listed (forbidden)";
    Finding doubts{Verdict::Pass, {}, ""};
    CHECK(hostListenerProbes(inputs, {"10.250.0.1"}, 12, doubts).empty());
    CHECK(doubts.verdict == Verdict::Unproven);
    CHECK_THAT(doubts.evidence.at(0),
               Catch::Contains("pods on node local-node not listed (forbidden)") &&
                   Catch::Contains("were not tried"));
}

TEST_CASE("attack 56 N2: a tenant's host-network pod on the node leaves egress unproven",
          "[verify][false-pass]") {
    // It connects into the sandbox past default-deny ingress whenever the agent listens, for
    // three seconds in thirty if the agent likes (attack 57): no moment verify looks proves it.
    const json pod = json::parse(R"({"metadata": {"name": "listen-2", "namespace": "atk56-x"},
                                     "spec": {}})");
    const json policies = rossoctl::testing::verify_fixtures::policies();
    EgressInputs inputs;
    inputs.seccompDefault = true;  // a pod with no seccomp profile gets the runtime's
    CHECK(egressStatic(pod, policies, inputs).verdict == Verdict::Pass);
    inputs.hostNetworkPods = {"pod atk56-relay/hostlook"};
    const Finding finding = egressStatic(pod, policies, inputs);
    CHECK(finding.verdict == Verdict::Unproven);
    CHECK_THAT(
        fmt::format("{}", fmt::join(finding.evidence, "\n")),
        Catch::Contains("pod atk56-relay/hostlook on the node shares its network namespace"));
}

TEST_CASE("attack 59 K1: a pod on the node whose probe names a host leaves egress unproven",
          "[verify][false-pass]") {
    // Any tenant's pod on the node can have the kubelet connect into the sandbox (the node's
    // traffic passes default-deny ingress); the agent's answer lands in that pod's Events.
    const json prober = json::parse(R"({"metadata": {"name": "kprobe", "namespace": "atk59-open"},
      "spec": {"initContainers": [{"name": "side", "startupProbe":
                 {"tcpSocket": {"host": "sandbox.example", "port": 1}}}],
               "containers": [
                 {"name": "c", "readinessProbe": {"httpGet": {"host": "10.250.0.15", "port": 8080}},
                  "livenessProbe": {"httpGet": {"host": "", "port": 8080}},
                  "lifecycle": {"preStop": {"httpGet": {"host": 7, "port": 80}}}},
                 {"name": "plain", "readinessProbe": {"httpGet": {"port": 8080}}}]}})");
    CHECK(kubeletHostTargets(prober) ==
          std::vector<std::string>{"container side startupProbe: host sandbox.example",
                                   "container c readinessProbe: host 10.250.0.15",
                                   "container c lifecycle preStop: host 7"});
    // What a server sends is no shape: nothing read, nothing thrown.
    CHECK(
        kubeletHostTargets(json::parse(R"({"spec": {"containers": [7, {"readinessProbe": []}]}})"))
            .empty());

    EgressInputs inputs;
    inputs.seccompDefault = true;  // a pod with no seccomp profile gets the runtime's
    inputs.probeHostNamespaces = std::vector<std::string>{};
    REQUIRE(kubeletRelays(inputs).verdict == Verdict::Pass);
    for (const auto& where : kubeletHostTargets(prober))
        inputs.nodeProbeHosts.push_back("pod atk59-open/kprobe (" + where + ")");
    const Finding finding = kubeletRelays(inputs);
    CHECK(finding.verdict == Verdict::Unproven);
    CHECK_THAT(fmt::format("{}", fmt::join(finding.evidence, "\n")),
               Catch::Contains("pod atk59-open/kprobe (container side startupProbe: host "
                               "sandbox.example), ") &&
                   Catch::Contains("on the node name a host for the kubelet to connect to"));
    // Many are named by the first four and a count, never a line without end.
    inputs.nodeProbeHosts.assign(40, "pod x/y (container c readinessProbe: host h)");
    CHECK_THAT(fmt::format("{}", fmt::join(kubeletRelays(inputs).evidence, "\n")),
               Catch::Contains("host h) and 36 more on the node"));
}

TEST_CASE("attack 59 K1: a namespace that admits a probe naming a host leaves egress unproven",
          "[verify][false-pass]") {
    // The prober may come after verify (as in attack 59): only Pod Security refusing it in
    // every namespace rules it out, and baseline refuses it from v1.34 only.
    const json v136 = {{"gitVersion", "v1.36.3"}};
    const auto ns = [](const std::string& name, const json& labels) {
        return json{{"metadata", {{"name", name}, {"labels", labels}}}};
    };
    const json list = {
        {"items", json::array({ns("kube-system", json::object()),
                               ns("team", {{"pod-security.kubernetes.io/enforce", "restricted"}}),
                               ns("web", {{"pod-security.kubernetes.io/enforce", "baseline"},
                                          {"pod-security.kubernetes.io/enforce-version", "v1.34"}}),
                               ns("open", json::object()),
                               ns("priv", {{"pod-security.kubernetes.io/enforce", "privileged"}}),
                               ns("old", {{"pod-security.kubernetes.io/enforce", "baseline"},
                                          {"pod-security.kubernetes.io/enforce-version", "v1.33"}}),
                               ns("odd", {{"pod-security.kubernetes.io/enforce", "restricted"},
                                          {"pod-security.kubernetes.io/enforce-version", "v1.3x"}}),
                               ns("shapeless", 7),
                               {{"metadata", {{"name", "leaving"}}},
                                {"status", {{"phase", "Terminating"}}}}})}};
    CHECK(namespacesAdmittingProbeHosts(list, v136) ==
          std::vector<std::string>{"open (no Pod Security enforce label)",
                                   "priv (enforce=privileged)",
                                   "old (enforce-version v1.33, before v1.34)",
                                   "odd (enforce-version v1.3x, before v1.34)",
                                   "shapeless (no Pod Security enforce label)"});
    // Attack 60 H1: host access (hostPath) is refused by baseline at every version, so a
    // level before v1.34 still refuses it; a pod with it writes into this pod's volumes.
    CHECK(namespacesAdmittingHostAccess(list) ==
          std::vector<std::string>{"open (no Pod Security enforce label)",
                                   "priv (enforce=privileged)",
                                   "shapeless (no Pod Security enforce label)"});
    {
        EgressInputs hosts;
        const Finding unread = hostAccessNeighbours(hosts, "that no credential is placed there");
        CHECK(unread.verdict == Verdict::Unproven);
        hosts.hostAccessNamespaces = namespacesAdmittingHostAccess(list);
        const Finding open = hostAccessNeighbours(hosts, "that no credential is placed there");
        CHECK(open.verdict == Verdict::Unproven);
        CHECK_THAT(open.evidence.at(0),
                   Catch::StartsWith("namespaces open (no Pod Security enforce label), priv "
                                     "(enforce=privileged), shapeless (no Pod Security enforce "
                                     "label) admit pods with the node's files (hostPath)") &&
                       Catch::Contains("so that no credential is placed there is not proven"));
        hosts.hostAccessNamespaces = std::vector<std::string>{};
        CHECK(hostAccessNeighbours(hosts, "x").verdict == Verdict::Pass);
    }
    // A server before v1.34 (or one whose version is unknown) refuses probe hosts nowhere.
    const json refusing = {
        {"items",
         json::array({ns("team", {{"pod-security.kubernetes.io/enforce", "restricted"}})})}};
    CHECK(namespacesAdmittingProbeHosts(refusing, v136).empty());
    CHECK(namespacesAdmittingProbeHosts(refusing, {{"gitVersion", "v1.33.2"}}) ==
          std::vector<std::string>{"team (a v1.33 server)"});
    CHECK(namespacesAdmittingProbeHosts(refusing, json()) ==
          std::vector<std::string>{"team (the server's version is not known)"});

    EgressInputs inputs;
    inputs.seccompDefault = true;  // a pod with no seccomp profile gets the runtime's
    // Not read: not known.
    inputs.probeHostNamespacesUnread = "namespaces not listed (forbidden)";
    Finding unread = kubeletRelays(inputs);
    CHECK(unread.verdict == Verdict::Unproven);
    CHECK_THAT(unread.evidence.at(0),
               Catch::Contains("namespaces not listed (forbidden): whether"));
    inputs.probeHostNamespaces = namespacesAdmittingProbeHosts(list, v136);
    const Finding open = kubeletRelays(inputs);
    CHECK(open.verdict == Verdict::Unproven);
    CHECK_THAT(
        open.evidence.at(0),
        Catch::StartsWith("namespaces open (no Pod Security enforce label), priv "
                          "(enforce=privileged), old (enforce-version v1.33, before v1.34), "
                          "odd (enforce-version v1.3x, before v1.34) and 1 more admit pods"));
    inputs.probeHostNamespaces = namespacesAdmittingProbeHosts(refusing, v136);
    const Finding held = kubeletRelays(inputs);
    CHECK(held.verdict == Verdict::Pass);
    CHECK_THAT(held.evidence.at(0), Catch::Contains("every namespace but kube-system enforces"));
}

TEST_CASE("a pod on the node with host access, from before its namespace's level, is unproven",
          "[verify][false-pass]") {
    // Pod Security refuses a hostPath pod only when it is made: one made before its namespace
    // was labelled baseline keeps running, and reads and writes this pod's volumes on the node.
    const json pods = json::parse(R"({"items": [
      {"metadata": {"name": "reader", "namespace": "team2"},
       "spec": {"nodeName": "node-1", "volumes": [{"name": "pods", "hostPath": {"path": "/var/lib/kubelet/pods"}}],
                "containers": [{"name": "c"}]}},
      {"metadata": {"name": "debug", "namespace": "team3"},
       "spec": {"nodeName": "node-2", "hostPID": true, "containers": [{"name": "c"}],
                "ephemeralContainers": [{"name": "dbg", "securityContext": {"privileged": true}}]}},
      {"metadata": {"name": "kube-proxy-x", "namespace": "kube-system"},
       "spec": {"volumes": [{"name": "m", "hostPath": {"path": "/lib/modules"}}]}},
      {"metadata": {"name": "done", "namespace": "team2"}, "status": {"phase": "Succeeded"},
       "spec": {"volumes": [{"name": "r", "hostPath": {"path": "/"}}]}},
      {"metadata": {"name": "plain", "namespace": "team1"}, "spec": {"containers": [{"name": "c",
        "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE", "CAP_CHOWN"]}}}]}},
      {"metadata": {"name": "admin", "namespace": "team5"},
       "spec": {"nodeName": "node-1", "securityContext": {"seccompProfile": {"type": "Unconfined"}}, "hostIPC": true,
                "containers": [{"name": "c", "securityContext":
                  {"capabilities": {"add": ["CHOWN", "SYS_ADMIN"]}, "procMount": "Unmasked"}}]}},
      7]})");
    EgressInputs inputs;
    inputs.seccompDefault = true;  // a pod with no seccomp profile gets the runtime's
    inputs.hostAccessNamespaces = std::vector<std::string>{};  // every namespace baseline now
    inputs.probeHostNamespaces = std::vector<std::string>{};
    REQUIRE(hostAccessNeighbours(inputs, "that no credential is placed there").verdict ==
            Verdict::Pass);
    addClusterPods(pods, "node-1", inputs);
    CHECK(inputs.hostAccessPods ==
          std::vector<std::string>{
              "pod team2/reader (hostPath /var/lib/kubelet/pods)",
              "pod team3/debug, on node node-2 (privileged container dbg, hostPID)",
              "pod team5/admin (seccomp or AppArmor Unconfined, container c adds SYS_ADMIN and 2 "
              "more)"});
    const Finding token = hostAccessNeighbours(inputs, "that no credential is placed there");
    CHECK(token.verdict == Verdict::Unproven);
    CHECK_THAT(
        token.evidence.at(0),
        Catch::StartsWith("pod team2/reader (hostPath /var/lib/kubelet/pods), pod "
                          "team3/debug, on node node-2 (privileged container dbg, hostPID), pod "
                          "team5/admin (seccomp or AppArmor Unconfined, container c adds "
                          "SYS_ADMIN and 2 more) reach a node's files") &&
            Catch::EndsWith("so that no credential is placed there is not proven"));
    const Finding egress = rossoctl::testing::verify_fixtures::bareEgress(inputs);
    CHECK(egress.verdict == Verdict::Unproven);
    CHECK_THAT(rossoctl::testing::verify_fixtures::evidenceText(egress),
               Catch::Contains("leave on that pod's own egress; not proven"));
    // Attack 61 H1c, K1g: a pod held by a scheduling gate is on no node yet; once ungated it
    // runs as it was admitted, and lands where the scheduler likes.
    const json gated = json::parse(R"({"items": [
      {"metadata": {"name": "gated-reader", "namespace": "team4"},
       "spec": {"schedulingGates": [{"name": "later"}],
                "volumes": [{"name": "pods", "hostPath": {"path": "/"}}],
                "containers": [{"name": "c", "readinessProbe":
                  {"httpGet": {"host": "10.250.0.17", "port": 8080}}}]}}]})");
    addClusterPods(gated, "node-1", inputs);
    CHECK(inputs.hostAccessPods.back() == "pod team4/gated-reader, not on a node yet (hostPath /)");
    CHECK(inputs.nodeProbeHosts.back() ==
          "pod team4/gated-reader, not on a node yet (container c readinessProbe: host "
          "10.250.0.17)");
    // Not listed: such a pod is not ruled out.
    EgressInputs unread;
    unread.hostAccessNamespaces = std::vector<std::string>{};
    unread.hostListenersUnread = "pods on node node-1 not listed (forbidden)";
    const Finding notListed = hostAccessNeighbours(unread, "that nothing is kept from them");
    CHECK(notListed.verdict == Verdict::Unproven);
    CHECK_THAT(notListed.evidence.at(0),
               Catch::StartsWith("pods on node node-1 not listed (forbidden): a pod with"));
}

TEST_CASE("review 60 #2: a replacement on another node is judged by the pods of its own node",
          "[verify][false-pass]") {
    // The first pod's node has no host-network pod; the replacement lands beside one, which
    // connects into it past its policies as the node does. A pod with host access counts on
    // any node (review 61 #2): it reaches this pod's files once its pod is moved there.
    using namespace rossoctl::testing;
    TestHost host;
    const json first = verify_fixtures::hardenedPod("pod-uid-1");
    json next = verify_fixtures::hardenedPod("pod-uid-2");
    next["spec"]["nodeName"] = "node-2";
    json node2 = verify_fixtures::node();
    node2["metadata"]["name"] = "node-2";
    host.server.onJson("GET", "/api/v1/nodes/node-2", 200, node2);
    const json neighbour = json::parse(R"({"metadata": {"name": "hostlook", "namespace": "team2"},
      "spec": {"nodeName": "node-2", "hostNetwork": true, "containers": [{"name": "c"}]}})");
    const json reader = json::parse(R"({"metadata": {"name": "reader", "namespace": "team3"},
      "spec": {"nodeName": "node-3", "containers": [{"name": "c"}],
               "volumes": [{"name": "pods", "hostPath": {"path": "/var/lib/kubelet/pods"}}]}})");
    host.server.onJson("GET", "/api/v1/pods?limit=500", 200,
                       verify_fixtures::list({first, neighbour, reader}));
    verify_fixtures::serveHardened(host, "curl", verify_fixtures::sandbox(), first, next);
    CHECK(verify_fixtures::runVerifyJson(host) == 3);
    const json checks = verify_fixtures::verdicts(printedJson(host.out.str()));
    INFO(checks.dump(2));
    const std::string egress = checks["egress"]["static"]["evidence"].dump();
    CHECK(checks["egress"]["static"]["result"] == "unproven");
    CHECK_THAT(egress, Catch::Contains("replacement pod orders (uid pod-uid") &&
                           Catch::Contains("pod team2/hostlook on the node shares its network"));
    CHECK(egress.find("pod team2/hostlook on the node shares") ==
          egress.rfind("pod team2/hostlook on the node shares"));  // the replacement's alone
    for (const char* id : {"service-account-token", "egress", "nothing-survives"})
        CHECK_THAT(checks[id]["static"]["evidence"].dump(),
                   Catch::Contains("pod team3/reader, on node node-3 (hostPath "
                                   "/var/lib/kubelet/pods) reaches a node's files"));
    CHECK(verify_fixtures::listsOf(host, "/api/v1/pods") == 2);  // once for each node
}

TEST_CASE("attack 61 C1: an allowed range that holds the cluster's pod addresses is unproven",
          "[verify][false-pass]") {
    // A pod of any namespace there with egress of its own relays what the agent sends it.
    namespace model = rossoctl::model;
    const auto allowing = [](const std::string& cidr) {
        const json ns = {{"metadata",
                          {{"annotations",
                            {{model::kAllowedEgressAnnotation,
                              model::allowedEgressAnnotation(true, false, {cidr}, {}, {})}}}}}};
        return model::projectAllowance(ns);
    };
    json pod = json::parse(R"({"metadata": {"name": "cs", "namespace": "team1"},
                               "status": {"podIPs": [{"ip": "10.250.0.36"}]}, "spec": {}})");
    const json policies = rossoctl::testing::verify_fixtures::policies();
    EgressInputs inputs;
    inputs.seccompDefault = true;  // a pod with no seccomp profile gets the runtime's
    inputs.allowance = allowing("10.250.0.0/16");
    // Attack 62 C1b: with the pod network's ranges not known, a private range may hold a pod
    // later; one that overlaps a node's pod range may too.
    const Finding unknown = egressStatic(pod, policies, inputs);
    CHECK(unknown.verdict == Verdict::Unproven);
    CHECK_THAT(fmt::format("{}", fmt::join(unknown.evidence, "\n")),
               Catch::Contains("the project allows 10.250.0.0/16, addresses where a pod "
                               "may be given one later, and the pod network's ranges are not "
                               "known (not read)"));
    inputs.podRanges = std::vector<std::pair<std::string, std::string>>{
        {"10.250.0.0/24", "node local-node's pod range"}};
    CHECK_THAT(fmt::format("{}", fmt::join(egressStatic(pod, policies, inputs).evidence, "\n")),
               Catch::Contains("the project allows 10.250.0.0/16, which overlaps node "
                               "local-node's pod range (10.250.0.0/24)"));
    // The rest of this case: the ranges known and beside it (a unit test's liberty).
    inputs.podRanges = std::vector<std::pair<std::string, std::string>>{
        {"10.96.0.0/24", "node local-node's pod range"}};
    CHECK(egressStatic(pod, policies, inputs).verdict == Verdict::Pass);
    // Its own address is no relay.
    inputs.podAddresses = {{"10.250.0.36", "pod team1/cs"}, {"not-an-ip", "pod x/y"}};
    CHECK(egressStatic(pod, policies, inputs).verdict == Verdict::Pass);
    const json relay = json::parse(R"({"items": [
      {"metadata": {"name": "relay", "namespace": "atk61-relay"}, "spec": {"nodeName": "node-2"},
       "status": {"podIPs": [{"ip": "10.250.0.31"}]}},
      {"metadata": {"name": "node-agent", "namespace": "kube-system"},
       "status": {"podIPs": [{"ip": "10.247.71.170"}]}, "spec": {"hostNetwork": true}}]})");
    addClusterPods(relay, "node-1", inputs);
    CHECK(inputs.podAddresses.back() ==
          std::pair<std::string, std::string>{"10.250.0.31",
                                              "pod atk61-relay/relay, on node node-2"});
    const Finding finding = egressStatic(pod, policies, inputs);
    CHECK(finding.verdict == Verdict::Unproven);
    CHECK_THAT(fmt::format("{}", fmt::join(finding.evidence, "\n")),
               Catch::Contains("the project allows 10.250.0.0/16, which holds the cluster's pod "
                               "addresses (10.250.0.31 of pod atk61-relay/relay, on node node-2)"));
    // A range beside the pod network is no way to one.
    inputs.allowance = allowing("192.0.2.0/24");
    inputs.podAddresses.emplace_back("10.250.0.0/24", "node local-node's pod range");
    CHECK(egressStatic(pod, policies, inputs).verdict == Verdict::Pass);
}

TEST_CASE("attack 62 N2: a NetworkPolicy added while verify runs leaves egress unproven",
          "[verify][false-pass]") {
    // Read once at the start, the policies judged neither pod: one a tenant added 10 s into the
    // run let both reach a relay, and verify passed.
    using namespace rossoctl::testing;
    const std::string path = "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies";
    for (const bool added : {false, true}) {
        TestHost host;
        verify_fixtures::serveHardened(host, "curl");
        json later =
            verify_fixtures::list({verify_fixtures::policies()[0], verify_fixtures::policies()[1]});
        if (added)
            later["items"].push_back(json::parse(R"({"metadata": {"name": "to-relay",
              "resourceVersion": "912"}, "spec": {"podSelector": {}, "policyTypes": ["Egress"],
              "egress": [{"to": [{"namespaceSelector": {}}]}]}})"));
        host.server.onJson("GET", path, 200, later);  // every read after the first
        verify_fixtures::runVerifyJson(host);
        const json egress = verify_fixtures::verdicts(printedJson(host.out.str()))["egress"];
        INFO(egress.dump(2));
        CHECK(verify_fixtures::listsOf(host, path) == 2);
        const bool named = egress["static"]["evidence"].dump().find(
                               "NetworkPolicies of namespace team1 changed while verify ran: "
                               "to-relay (added)") != std::string::npos;
        CHECK(named == added);
        if (added) CHECK(egress["static"]["result"] == "unproven");
    }
}
