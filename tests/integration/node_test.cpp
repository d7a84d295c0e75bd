// The local node itself (tests/cluster): pods run, exec and logs work through the apiserver,
// volumes and service-account tokens have their real lifetimes, NetworkPolicy is enforced and
// activeDeadlineSeconds ends a pod. Driven with kubectl, as a user of the cluster would.
#include <catch2/catch.hpp>

#include "harness.hpp"

using nlohmann::json;
namespace resources = rossoctl::kube::resources;

namespace {

harness::RunResult kubectl(const std::vector<std::string>& args, const std::string& input = {}) {
    std::vector<std::string> argv{harness::kubectlPath(), "--kubeconfig",
                                  harness::kubeconfigPath()};
    argv.insert(argv.end(), args.begin(), args.end());
    return harness::run(argv, input);
}

void applyManifest(const std::string& ns, const std::string& yaml) {
    auto result = kubectl({"apply", "-n", ns, "-f", "-"}, yaml);
    INFO(result.err);
    REQUIRE(result.exitCode == 0);
}

void waitReady(const std::string& ns, const std::string& what, const std::string& seconds = "90s") {
    auto result =
        kubectl({"wait", "-n", ns, "--for=condition=Ready", what, "--timeout=" + seconds});
    INFO(result.out << result.err);
    REQUIRE(result.exitCode == 0);
}

harness::RunResult execIn(const std::string& ns, const std::string& pod,
                          const std::string& script) {
    return kubectl({"exec", "-n", ns, pod, "--", "sh", "-c", script});
}

// A pod that sleeps; its YAML with optional extra spec lines (already indented by two). The
// image has curl and getent, which the network tests run. Without NET_RAW, as every pod of these
// cases: one that keeps it leaves every sandbox verified meanwhile unproven (attack 65 N2).
std::string sleeperPod(const std::string& name, const std::string& extraSpec = {}) {
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n" + extraSpec +
           "  containers: [{name: main, image: 'curlimages/curl:8', command: [sleep, '3600'],\n"
           "    securityContext: {capabilities: {drop: [NET_RAW]}}}]\n";
}

const char* kTokenPath = "/var/run/secrets/kubernetes.io/serviceaccount/token";

// Where a pod's curl ends up: "reached" or the curl exit code it failed with.
std::string reach(const std::string& ns, const std::string& pod, const std::string& url) {
    auto result =
        execIn(ns, pod, "curl -s -o /dev/null -m 3 " + url + " && echo reached || echo failed $?");
    return result.out.substr(0, result.out.find('\n'));
}

}  // namespace

TEST_CASE("a Sandbox becomes Ready; exec, exit codes and logs go through the apiserver", "[node]") {
    harness::TestNamespace ns("node-exec");
    applyManifest(ns.name(), R"(apiVersion: agents.x-k8s.io/v1beta1
kind: Sandbox
metadata: {name: sb}
spec:
  podTemplate:
    spec:
      automountServiceAccountToken: false
      containers:
      - name: agent
        image: busybox
        command: [sh, -c, 'echo started as $(id -u); exec sleep 3600']
        securityContext: {runAsUser: 65532, capabilities: {drop: [NET_RAW]}}
)");
    waitReady(ns.name(), "sandbox/sb");
    waitReady(ns.name(), "pod/sb");

    auto hello = execIn(ns.name(), "sb", "echo hello; id -u; echo oops >&2");
    CHECK(hello.exitCode == 0);
    CHECK(hello.out == "hello\n65532\n");
    CHECK(hello.err == "oops\n");
    CHECK(execIn(ns.name(), "sb", "exit 7").exitCode == 7);
    // The container sees its own root, not the host's: its PID 1 is its own command.
    CHECK(execIn(ns.name(), "sb", "cat /proc/1/cmdline | tr '\\0' ' '").out.find("sleep 3600") !=
          std::string::npos);

    auto logs = kubectl({"logs", "-n", ns.name(), "sb"});
    CHECK(logs.exitCode == 0);
    CHECK(logs.out == "started as 65532\n");
}

TEST_CASE("the service-account token exists only with automount on, and authenticates", "[node]") {
    harness::TestNamespace ns("node-token");
    REQUIRE(harness::eventually(
        [&] {
            return harness::admin()
                .getIfExists(resources::serviceAccounts(), ns.name(), "default")
                .has_value();
        },
        30));
    applyManifest(ns.name(), sleeperPod("withtoken") + "---\n" +
                                 sleeperPod("notoken", "  automountServiceAccountToken: false\n"));
    waitReady(ns.name(), "pod/withtoken");
    waitReady(ns.name(), "pod/notoken");

    // Read inside the test only: the token is never printed.
    auto token = execIn(ns.name(), "withtoken", std::string("cat ") + kTokenPath);
    REQUIRE(token.exitCode == 0);
    REQUIRE(token.out.size() > 100);
    json review = {{"apiVersion", "authentication.k8s.io/v1"},
                   {"kind", "TokenReview"},
                   {"spec", {{"token", token.out}}}};
    auto reviewed =
        kubectl({"create", "-f", "-", "-o", "jsonpath={.status.user.username}"}, review.dump());
    CHECK(reviewed.out == "system:serviceaccount:" + ns.name() + ":default");

    auto absent = execIn(ns.name(), "notoken", std::string("test -e ") + kTokenPath);
    CHECK(absent.exitCode == 1);
    CHECK(execIn(ns.name(), "notoken", "test -e /var/run/secrets/kubernetes.io").exitCode == 1);
}

TEST_CASE("NetworkPolicy is enforced: default-deny, DNS allowed, one ipBlock let through",
          "[node]") {
    harness::TestNamespace ns("node-netpol");
    applyManifest(ns.name(), sleeperPod("client"));
    waitReady(ns.name(), "pod/client");
    const std::string byName = harness::outsideUrl(false);
    const std::string byAddress = harness::outsideUrl(true);
    // The outside world's second address: same network, never allowed below.
    const std::string outsideAddress = byAddress.substr(7, byAddress.find('/', 7) - 7);
    const std::string otherAddress = outsideAddress.substr(0, outsideAddress.rfind('.') + 1) + "11";

    CHECK(reach(ns.name(), "client", byName) == "reached");

    applyManifest(ns.name(), R"(apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny}
spec: {podSelector: {}, policyTypes: [Ingress, Egress]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-dns}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
  - to: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}},
          podSelector: {matchLabels: {k8s-app: kube-dns}}}]
    ports: [{protocol: UDP, port: 53}, {protocol: TCP, port: 53}]
)");
    // Denied by the policy (DNS itself resolved): curl exit 28 where the engine drops (the
    // connection timed out), 7 where it rejects (kube-router: refused at once).
    CHECK(harness::eventually(
        [&] {
            const std::string outcome = reach(ns.name(), "client", byName);
            return outcome == "failed 28" || outcome == "failed 7";
        },
        60));  // each try is a curl of up to 3 s; the engine's sync is slower under CI load
    auto resolved = execIn(ns.name(), "client", "getent hosts outside.rossoctl.test");
    CHECK(resolved.exitCode == 0);
    CHECK(resolved.out.find(outsideAddress) != std::string::npos);

    applyManifest(ns.name(),
                  "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
                  "metadata: {name: allow-outside}\nspec:\n  podSelector: {}\n"
                  "  policyTypes: [Egress]\n  egress: [{to: [{ipBlock: {cidr: " +
                      outsideAddress + "/32}}]}]\n");
    CHECK(harness::eventually([&] { return reach(ns.name(), "client", byName) == "reached"; }, 60));
    CHECK(reach(ns.name(), "client", "http://" + otherAddress + "/").rfind("failed", 0) == 0);
}

TEST_CASE("an emptyDir dies with its pod; a PVC-backed volume outlives it", "[node]") {
    harness::TestNamespace ns("node-volumes");
    const std::string manifests = R"(apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: vol}
spec:
  terminationGracePeriodSeconds: 1  # sleep as PID 1 ignores SIGTERM
  containers:
  - name: main
    image: busybox
    command: [sleep, '3600']
    securityContext: {capabilities: {drop: [NET_RAW]}}
    volumeMounts: [{name: data, mountPath: /data}, {name: scratch, mountPath: /scratch}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}, {name: scratch, emptyDir: {}}]
)";
    applyManifest(ns.name(), manifests);
    waitReady(ns.name(), "pod/vol");
    REQUIRE(execIn(ns.name(), "vol", "echo kept > /data/f && echo lost > /scratch/f").exitCode ==
            0);
    const std::string firstUid =
        harness::admin().get(resources::pods(), ns.name(), "vol")["metadata"]["uid"];

    REQUIRE(kubectl({"delete", "pod", "-n", ns.name(), "vol", "--wait=true"}).exitCode == 0);
    applyManifest(ns.name(), manifests);
    waitReady(ns.name(), "pod/vol");
    CHECK(harness::admin().get(resources::pods(), ns.name(), "vol")["metadata"]["uid"] != firstUid);
    CHECK(execIn(ns.name(), "vol", "cat /data/f").out == "kept\n");
    CHECK(execIn(ns.name(), "vol", "test -e /scratch/f").exitCode == 1);
}

TEST_CASE("a Sandbox's recreated pod starts with an empty emptyDir", "[node]") {
    harness::TestNamespace ns("node-recreate");
    applyManifest(ns.name(), R"(apiVersion: agents.x-k8s.io/v1beta1
kind: Sandbox
metadata: {name: sb}
spec:
  podTemplate:
    spec:
      terminationGracePeriodSeconds: 1  # sleep as PID 1 ignores SIGTERM
      containers:
      - {name: agent, image: busybox, command: [sleep, '3600'],
         securityContext: {capabilities: {drop: [NET_RAW]}},
         volumeMounts: [{name: work, mountPath: /work}]}
      volumes: [{name: work, emptyDir: {}}]
)");
    waitReady(ns.name(), "pod/sb");
    REQUIRE(execIn(ns.name(), "sb", "echo canary > /work/c").exitCode == 0);
    const std::string firstUid =
        harness::admin().get(resources::pods(), ns.name(), "sb")["metadata"]["uid"];
    REQUIRE(kubectl({"delete", "pod", "-n", ns.name(), "sb", "--wait=true"}).exitCode == 0);
    REQUIRE(harness::eventually(
        [&] {
            auto pod = harness::admin().getIfExists(resources::pods(), ns.name(), "sb");
            return pod && (*pod)["metadata"]["uid"] != firstUid;
        },
        60));
    waitReady(ns.name(), "pod/sb");
    CHECK(execIn(ns.name(), "sb", "test -e /work/c").exitCode == 1);
}

TEST_CASE("activeDeadlineSeconds ends a pod as Failed, DeadlineExceeded", "[node]") {
    harness::TestNamespace ns("node-deadline");
    // A short grace: sleep as PID 1 ignores SIGTERM, and a kubelet waits out the pod's grace
    // period (30 s by default) before the pod is Failed.
    applyManifest(ns.name(), sleeperPod("deadline",
                                        "  activeDeadlineSeconds: 3\n"
                                        "  terminationGracePeriodSeconds: 1\n"));
    json pod;
    CHECK(harness::eventually(
        [&] {
            pod = harness::admin().get(resources::pods(), ns.name(), "deadline");
            return pod["status"].value("phase", "") == "Failed";
        },
        30));
    CHECK(pod["status"].value("reason", "") == "DeadlineExceeded");
}
