// Review 61 #6 and review 60 #6: the ways to a node's files that a pod spec does not show as a
// hostPath (a hand-made PersistentVolume, SELinux, the old annotations), and a pod list that is
// not the cluster's.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <catch2/catch.hpp>
#include <functional>

#include "rossoctl/verify/isolation.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl::verify;
using nlohmann::json;

TEST_CASE("review 61 #6: SELinux, a Windows host process and the old annotations are host access",
          "[verify][false-pass]") {
    const json pods = json::parse(R"({"items": [
      {"metadata": {"name": "spc", "namespace": "team2"}, "spec": {"nodeName": "node-1",
       "containers": [{"name": "c", "securityContext": {"seLinuxOptions": {"type": "spc_t"}}}]}},
      {"metadata": {"name": "role", "namespace": "team2"}, "spec": {"nodeName": "node-1",
       "securityContext": {"seLinuxOptions": {"role": "system_r"}}, "containers": [{"name": "c"}]}},
      {"metadata": {"name": "win", "namespace": "team3"}, "spec": {"nodeName": "node-2",
       "securityContext": {"windowsOptions": {"hostProcess": true}}, "containers": [{"name": "c"}]}},
      {"metadata": {"name": "armor", "namespace": "team4", "annotations":
        {"container.apparmor.security.beta.kubernetes.io/c": "unconfined"}},
       "spec": {"nodeName": "node-1", "containers": [{"name": "c"}]}},
      {"metadata": {"name": "comp", "namespace": "team4", "annotations":
        {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}},
       "spec": {"nodeName": "node-1", "containers": [{"name": "c"}]}},
      {"metadata": {"name": "fine", "namespace": "team1", "annotations":
        {"container.apparmor.security.beta.kubernetes.io/c": "runtime/default",
         "note": "unconfined"}},
       "spec": {"nodeName": "node-1", "securityContext": {"seLinuxOptions": {"type": "container_t",
         "level": "s0:c1,c2"}}, "containers": [{"name": "c", "securityContext":
         {"seLinuxOptions": {"type": "container_init_t"}}}]}}]})");
    EgressInputs inputs;
    inputs.seccompDefault = true;  // a pod with no seccomp profile gets the runtime's
    addClusterPods(pods, "node-1", inputs);
    CHECK(inputs.hostAccessPods ==
          std::vector<std::string>{
              R"(pod team2/spc (container c SELinux {"type":"spc_t"}))",
              R"(pod team2/role (SELinux {"role":"system_r"}))",
              "pod team3/win, on node node-2 (Windows hostProcess)",
              "pod team4/armor (annotation container.apparmor.security.beta.kubernetes.io/c: "
              "unconfined)",
              "pod team4/comp (annotation seccomp.security.alpha.kubernetes.io/pod: unconfined)"});
}

TEST_CASE("review 61 #6: a hand-made PersistentVolume of the node's files is host access",
          "[verify][false-pass]") {
    // Baseline admits a claim on any PersistentVolume: a hostPath one of "/" gives the node's
    // files to a pod whose spec holds no hostPath, made after verify too.
    const json volumes = json::parse(R"({"items": [
      {"metadata": {"name": "root"}, "spec": {"hostPath": {"path": "/"}}, "status": {"phase": "Available"}},
      {"metadata": {"name": "disk"}, "spec": {"local": {"path": "/mnt/disk1"},
        "claimRef": {"namespace": "team2", "name": "data"}}, "status": {"phase": "Bound"}},
      {"metadata": {"name": "made", "annotations": {"pv.kubernetes.io/provisioned-by": "local-path"}},
       "spec": {"hostPath": {"path": "/opt/local-path/pvc-1"}}, "status": {"phase": "Bound"}},
      {"metadata": {"name": "system"}, "spec": {"hostPath": {"path": "/etc"},
        "claimRef": {"namespace": "kube-system", "name": "etc"}}},
      {"metadata": {"name": "gone"}, "spec": {"hostPath": {"path": "/var"}}, "status": {"phase": "Released"}},
      {"metadata": {"name": "nfs"}, "spec": {"nfs": {"server": "n", "path": "/"}}},
      "junk"]})");
    EgressInputs inputs;
    inputs.seccompDefault = true;  // a pod with no seccomp profile gets the runtime's
    inputs.hostAccessNamespaces = std::vector<std::string>{};
    REQUIRE(hostAccessNeighbours(inputs, "that nothing is kept from them").verdict ==
            Verdict::Pass);
    addHostPathVolumes(volumes, inputs);
    CHECK(inputs.hostPathVolumes ==
          std::vector<std::string>{
              "PersistentVolume root (hostPath /, Available: any project's claim may bind it)",
              "PersistentVolume disk (local /mnt/disk1, claim team2/data)"});
    const Finding survives = hostAccessNeighbours(inputs, "that nothing is kept from them");
    CHECK(survives.verdict == Verdict::Unproven);
    CHECK_THAT(survives.evidence.at(0),
               Catch::StartsWith("PersistentVolume root (hostPath /, Available") &&
                   Catch::EndsWith("so that nothing is kept from them is not proven"));
    const Finding egress = rossoctl::testing::verify_fixtures::bareEgress(inputs);
    CHECK(egress.verdict == Verdict::Unproven);
    CHECK_THAT(rossoctl::testing::verify_fixtures::evidenceText(egress),
               Catch::Contains("PersistentVolume disk (local /mnt/disk1, claim team2/data): a pod "
                               "that mounts one has a node's files"));
}

TEST_CASE("review 61 #6: PersistentVolumes served, refused or not the cluster's pods, end to end",
          "[verify][false-pass]") {
    using namespace rossoctl::testing;
    const auto run = [](const std::function<void(TestHost&)>& serve) {
        TestHost host;
        serve(host);  // answered before the fixture's own routes for the same request
        verify_fixtures::serveHardened(host, "curl");
        CHECK(verify_fixtures::runVerifyJson(host) == 3);
        return verify_fixtures::verdicts(printedJson(host.out.str()));
    };
    SECTION("a hand-made hostPath volume") {
        const json checks = run([](TestHost& host) {
            host.server.onJson("GET", "/api/v1/persistentvolumes", 200,
                               verify_fixtures::list({json::parse(
                                   R"({"metadata": {"name": "var"}, "spec": {"hostPath":
                                     {"path": "/var"}}, "status": {"phase": "Available"}})")}));
        });
        for (const char* id : {"service-account-token", "egress", "nothing-survives"}) {
            INFO(id);
            CHECK(checks[id]["static"]["result"] == "unproven");
            CHECK_THAT(checks[id]["static"]["evidence"].dump(),
                       Catch::Contains("PersistentVolume var (hostPath /var, Available"));
        }
    }
    SECTION("not allowed to list them") {
        const json checks = run([](TestHost& host) {
            host.server.on("GET", "/api/v1/persistentvolumes", 403,
                           statusBody(403, "Forbidden", "persistentvolumes is forbidden"));
        });
        CHECK(checks["egress"]["static"]["result"] == "unproven");
        CHECK_THAT(checks["egress"]["static"]["evidence"].dump(),
                   Catch::Contains("persistent volumes not listed (") &&
                       Catch::Contains("is not ruled out"));
    }
    SECTION("a pod list without the sandbox's own pod is not the cluster's (review 60 #6)") {
        const json checks = run([](TestHost& host) {
            host.server.onJson("GET", "/api/v1/pods?limit=500", 200, verify_fixtures::list({}));
        });
        CHECK(checks["nothing-survives"]["static"]["result"] == "unproven");
        CHECK_THAT(checks["nothing-survives"]["static"]["evidence"].dump(),
                   Catch::Contains("the cluster's pod list did not hold pod orders itself"));
    }
}

TEST_CASE("review 61 #4: namespaces the cluster's admin vouches for are not counted, and said",
          "[verify]") {
    // A node exporter with the node's files in its own namespace left every sandbox of the
    // cluster unproven, with nothing to do about it.
    CHECK(trustedNamespacesOf(json::parse(
              R"({"data": {"trusted-namespaces": "calico-system, Bad_Name\nmonitoring,,-x"}})")) ==
          std::vector<std::string>{"calico-system", "monitoring"});
    CHECK(trustedNamespacesOf(json::parse(R"({"data": {"trusted-namespaces": 7}})")).empty());
    using namespace rossoctl::testing;
    const json exporter = json::parse(R"({"metadata": {"name": "node-exporter-x",
        "namespace": "monitoring"}, "spec": {"nodeName": "node-1", "containers": [{"name": "c"}],
        "volumes": [{"name": "root", "hostPath": {"path": "/"}}]}})");
    for (const bool vouched : {false, true}) {
        TestHost host;
        host.server.onJson(
            "GET", "/api/v1/pods?limit=500", 200,
            verify_fixtures::list({verify_fixtures::hardenedPod("pod-uid-1"), exporter}));
        if (vouched)
            host.server.onJson("GET", "/api/v1/namespaces/kube-system/configmaps/rossoctl-verify",
                               200, {{"data", {{"trusted-namespaces", "monitoring"}}}});
        verify_fixtures::serveHardened(host, "curl");
        verify_fixtures::runVerifyJson(host, {"--no-restart"});
        const json checks = verify_fixtures::verdicts(printedJson(host.out.str()));
        INFO(checks.dump(2));
        const json token = checks["service-account-token"]["static"];
        CHECK(token["result"] == (vouched ? "pass" : "unproven"));
        CHECK((token["evidence"].dump().find(
                   "the host access of pods of namespace monitoring, which the ConfigMap "
                   "kube-system/rossoctl-verify vouches for, is not counted") !=
               std::string::npos) == vouched);
    }
    // Review 64 M4: never the namespace verified, whose pods a tenant makes.
    TestHost own;
    json reader = exporter;
    reader["metadata"]["namespace"] = "team1";
    own.server.onJson("GET", "/api/v1/pods?limit=500", 200,
                      verify_fixtures::list({verify_fixtures::hardenedPod("pod-uid-1"), reader}));
    own.server.onJson("GET", "/api/v1/namespaces/kube-system/configmaps/rossoctl-verify", 200,
                      {{"data", {{"trusted-namespaces", "team1"}}}});
    verify_fixtures::serveHardened(own, "curl");
    verify_fixtures::runVerifyJson(own, {"--no-restart"});
    const json token =
        verify_fixtures::verdicts(printedJson(own.out.str()))["service-account-token"]["static"];
    CHECK(token["result"] == "unproven");
    CHECK_THAT(token["evidence"].dump(), !Catch::Contains("vouches for"));
}

TEST_CASE(
    "attack 65 N2: a neighbour that can hold NET_RAW leaves egress, the token and "
    "nothing-survives unproven",
    "[verify][false-pass]") {
    // A root pod of a baseline namespace on the sandbox's node answered ARP for the kube-dns
    // pod's address: the sandbox's allowed DNS went to it, and it relayed the data out (HTTP 200)
    // and kept the agent's state across verify's restart; verify passed all three.
    const json pods = json::parse(R"({"items": [
      {"metadata": {"name": "spoof", "namespace": "team2"}, "spec": {"nodeName": "node-1",
       "containers": [{"name": "c"}]}},
      {"metadata": {"name": "far", "namespace": "team2"}, "spec": {"nodeName": "node-2",
       "containers": [{"name": "c"}]}},
      {"metadata": {"name": "done", "namespace": "team2"}, "spec": {"nodeName": "node-1",
       "containers": [{"name": "c"}]}, "status": {"phase": "Succeeded"}},
      {"metadata": {"name": "system", "namespace": "kube-system"}, "spec": {"nodeName": "node-1",
       "containers": [{"name": "c"}]}},
      {"metadata": {"name": "odd", "namespace": "team3"}, "spec": {"nodeName": "node-1",
       "containers": ["not a container"]}},
      {"metadata": {"name": "hardened", "namespace": "team1"}, "spec": {"nodeName": "node-1",
       "containers": [{"name": "c", "securityContext": {"runAsNonRoot": true,
         "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]}}]})");
    EgressInputs inputs;
    inputs.seccompDefault = true;  // a pod with no seccomp profile gets the runtime's
    addClusterPods(pods, "node-1", inputs);
    CHECK(inputs.rawNetworkPods ==
          std::vector<std::string>{
              "pod team2/spoof (container c keeps the default NET_RAW (it may run as root))",
              // A drain makes it again on the sandbox's node (review 66 M3).
              "pod team2/far, on node node-2 (container c keeps the default NET_RAW (it may "
              "run as root))",
              "pod team3/odd (its spec is not one verify reads)"});
    const Finding token = hostAccessNeighbours(inputs, "that no credential is placed there");
    CHECK(token.verdict == Verdict::Unproven);
    CHECK_THAT(fmt::format("{}", fmt::join(token.evidence, "\n")),
               Catch::Contains("can hold NET_RAW or NET_ADMIN: on the pods' shared network one "
                               "answers ARP") &&
                   Catch::Contains("so that no credential is placed there is not proven"));
    const json pod = rossoctl::testing::verify_fixtures::hardenedPod("uid");
    CHECK(
        egressStatic(pod, rossoctl::testing::verify_fixtures::policies(), EgressInputs{}).verdict ==
        Verdict::Pass);
    const Finding egress =
        egressStatic(pod, rossoctl::testing::verify_fixtures::policies(), inputs);
    CHECK(egress.verdict == Verdict::Unproven);
    CHECK_THAT(fmt::format("{}", fmt::join(egress.evidence, "\n")),
               Catch::Contains("pod team2/spoof") && Catch::Contains("attack 65 N2"));
}

TEST_CASE(
    "verify: a neighbour with no seccomp profile runs Unconfined without the kubelet's "
    "seccompDefault (attack 65 N3)",
    "[verify][host-access]") {
    const json pods = json::parse(R"({"items": [
      {"metadata": {"name": "plain", "namespace": "team2"},
       "spec": {"nodeName": "node-1", "containers": [{"name": "app"}]}},
      {"metadata": {"name": "elsewhere", "namespace": "team2"},
       "spec": {"nodeName": "node-2", "containers": [{"name": "app"}]}},
      {"metadata": {"name": "filtered", "namespace": "team2"},
       "spec": {"nodeName": "node-1", "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [{"name": "app"}]}},
      {"metadata": {"name": "legacy", "namespace": "team2",
                    "annotations": {"seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}},
       "spec": {"nodeName": "node-1", "containers": [{"name": "app"}]}},
      {"metadata": {"name": "system", "namespace": "kube-system"},
       "spec": {"nodeName": "node-1", "containers": [{"name": "dns"}]}}]})");
    SECTION("the kubelet has none") {
        EgressInputs inputs;
        inputs.seccompDefault = false;
        addClusterPods(pods, "node-1", inputs);
        // A pod's annotations can be added after it was made: the legacy one, which the API
        // server copies into the field only at creation, hides nothing (stop 62's reread).
        CHECK(inputs.hostAccessPods ==
              std::vector<std::string>{"pod team2/plain (container app sets no seccomp profile, "
                                       "so runs Unconfined (the node's kubelet has no "
                                       "seccompDefault))",
                                       "pod team2/legacy (container app sets no seccomp profile, "
                                       "so runs Unconfined (the node's kubelet has no "
                                       "seccompDefault))"});
        CHECK(hostAccessNeighbours(inputs, "that nothing survives").verdict == Verdict::Unproven);
    }
    SECTION("the kubelet's configz was not read") {
        EgressInputs inputs;
        inputs.seccompDefaultUnread = "its configz was not read: forbidden";
        addClusterPods(pods, "node-1", inputs);
        REQUIRE(inputs.hostAccessPods.size() == 2);
        CHECK_THAT(inputs.hostAccessPods[0],
                   Catch::Contains("unless the node's kubelet has seccompDefault (its configz "
                                   "was not read: forbidden)"));
    }
    SECTION("the kubelet gives the runtime's default") {
        EgressInputs inputs;
        inputs.seccompDefault = true;
        addClusterPods(pods, "node-1", inputs);
        CHECK(inputs.hostAccessPods.empty());
    }
}
