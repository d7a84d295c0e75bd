// The local cluster's node: the upstream kubelet runs pods with containerd and runc from images
// its registry serves, and kube-router enforces NetworkPolicy.
#include <catch2/catch.hpp>
#include <fstream>

#include "harness.hpp"

using nlohmann::json;
namespace kube = rossoctl::kube;
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

void waitReady(const std::string& ns, const std::string& pod) {
    auto result =
        kubectl({"wait", "-n", ns, "--for=condition=Ready", "pod/" + pod, "--timeout=120s"});
    INFO(result.out << result.err);
    REQUIRE(result.exitCode == 0);
}

std::string pod(const std::string& name, const std::string& image, const std::string& command,
                const std::string& labels = "{}") {
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", labels: " + labels +
           "}\nspec:\n  automountServiceAccountToken: false\n  containers: [{name: main, image: '" +
           image + "', command: " + command +
           // Without NET_RAW: a pod that keeps it leaves every sandbox verified meanwhile
           // unproven (attack 65 N2).
           ", securityContext: {capabilities: {drop: [NET_RAW]}}}]\n";
}

}  // namespace

TEST_CASE("the real node runs a registry image with runc: Running, exec, exit codes, logs",
          "[realnode]") {
    harness::TestNamespace ns("node28-run");
    applyManifest(ns.name(), pod("p", "busybox:1.36",
                                 "[sh, -c, 'echo started as $(id -u); exec sleep 3600']"));
    waitReady(ns.name(), "p");

    auto status = harness::admin().get(resources::pods(), ns.name(), "p")["status"];
    const std::string containerId = status["containerStatuses"][0].value("containerID", "");
    const std::string imageId = status["containerStatuses"][0].value("imageID", "");
    // containerd's IDs and the digest the registry served: only a real runtime writes these.
    CHECK(containerId.rfind("containerd://", 0) == 0);
    CHECK(imageId.rfind("docker.io/library/busybox@sha256:", 0) == 0);

    auto hello =
        kubectl({"exec", "-n", ns.name(), "p", "--", "sh", "-c", "echo hi; echo oops >&2"});
    CHECK(hello.exitCode == 0);
    CHECK(hello.out == "hi\n");
    CHECK(hello.err == "oops\n");
    CHECK(kubectl({"exec", "-n", ns.name(), "p", "--", "sh", "-c", "exit 7"}).exitCode == 7);
    // runc's container: PID 1 is the pod's command, in the cgroup of the container the kubelet
    // reports (containerd://ID; the node has no QoS cgroups, so it is /k8s.io/ID).
    auto cgroup = kubectl({"exec", "-n", ns.name(), "p", "--", "cat", "/proc/1/cgroup"});
    INFO(cgroup.out);
    CHECK(cgroup.out.find(containerId.substr(std::string("containerd://").size())) !=
          std::string::npos);

    auto logs = kubectl({"logs", "-n", ns.name(), "p"});
    CHECK(logs.exitCode == 0);
    CHECK(logs.out == "started as 0\n");
}

TEST_CASE("an image the node's registry lacks is ErrImagePull, then ImagePullBackOff",
          "[realnode]") {
    harness::TestNamespace ns("node28-pull");
    applyManifest(ns.name(), pod("missing", "quay.io/rossoctl/absent:1", "[sleep, '60']"));
    std::string reason;
    CHECK(harness::eventually(
        [&] {
            auto status = harness::admin().get(resources::pods(), ns.name(), "missing")["status"];
            auto statuses = status.value("containerStatuses", json::array());
            if (statuses.empty()) return false;
            reason = statuses[0]["state"].value("waiting", json::object()).value("reason", "");
            return reason == "ImagePullBackOff";
        },
        90));
    INFO("last reason: " << reason);
    auto events = kubectl({"get", "events", "-n", ns.name(), "-o",
                           "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}"});
    // The registry answered: the image is unknown to it, not unreachable.
    CHECK(events.out.find("ErrImagePull") != std::string::npos);
    CHECK(events.out.find("not found") != std::string::npos);
}

TEST_CASE("kube-router enforces NetworkPolicy on the real node: deny, allow, deny again",
          "[realnode]") {
    harness::TestNamespace ns("node28-netpol");
    applyManifest(ns.name(),
                  pod("server", "busybox:1.36",
                      "[sh, -c, 'echo ok > /tmp/index.html; exec httpd -f -p 8080 -h /tmp']",
                      "{app: server}") +
                      "---\n" +
                      pod("client", "curlimages/curl:8", "[sleep, '3600']", "{app: client}"));
    waitReady(ns.name(), "server");
    waitReady(ns.name(), "client");
    const std::string serverIp =
        harness::admin().get(resources::pods(), ns.name(), "server")["status"].value("podIP", "");
    REQUIRE(!serverIp.empty());
    auto reach = [&] {
        auto r =
            kubectl({"exec", "-n", ns.name(), "client", "--", "sh", "-c",
                     "curl -s -m 2 http://" + serverIp + ":8080/index.html || echo failed $?"});
        return r.out.substr(0, r.out.find('\n'));
    };
    CHECK(reach() == "ok");

    applyManifest(ns.name(), R"(apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-ingress}
spec: {podSelector: {matchLabels: {app: server}}, policyTypes: [Ingress]}
)");
    // kube-router rejects what no policy allows: curl fails to connect (exit 7).
    CHECK(harness::eventually([&] { return reach() == "failed 7"; }, 30));

    applyManifest(ns.name(), R"(apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-client}
spec:
  podSelector: {matchLabels: {app: server}}
  policyTypes: [Ingress]
  ingress: [{from: [{podSelector: {matchLabels: {app: client}}}], ports: [{port: 8080}]}]
)");
    CHECK(harness::eventually([&] { return reach() == "ok"; }, 30));

    REQUIRE(kubectl({"delete", "networkpolicy", "-n", ns.name(), "allow-client"}).exitCode == 0);
    CHECK(harness::eventually([&] { return reach() == "failed 7"; }, 30));
}

TEST_CASE("agents import --imagePullSecret pulls from the node's credentialed registry",
          "[realnode]") {
    harness::TestNamespace ns("node28-creds");
    // The registry's user and password, made per state dir: read here, never printed.
    std::ifstream file(harness::clusterDir() + "/node-real/private-registry.json");
    REQUIRE(file.good());
    const json creds = json::parse(file);
    const std::string server = creds.at("server");
    const std::string image = server + "/private/busybox:1.36";
    json dockerConfig = {
        {"auths",
         {{server, {{"username", creds.at("username")}, {"password", creds.at("password")}}}}}};
    json secret = {{"apiVersion", "v1"},
                   {"kind", "Secret"},
                   {"metadata", {{"name", "pull"}}},
                   {"type", "kubernetes.io/dockerconfigjson"},
                   {"stringData", {{".dockerconfigjson", dockerConfig.dump()}}}};
    applyManifest(ns.name(), secret.dump());

    auto import = [&](const std::string& name, std::vector<std::string> extra) {
        std::vector<std::string> args = {"agents",  "import",           "-n",
                                         ns.name(), "from-image",       "--name",
                                         name,      "--containerImage", image};
        args.insert(args.end(), extra.begin(), extra.end());
        auto result = harness::rossoctl(args);
        INFO(result.err);
        REQUIRE(result.exitCode == 0);
    };
    auto podOf = [&](const std::string& name) {
        kube::ListOptions options;
        options.labelSelector = "app.kubernetes.io/name=" + name;
        auto items = harness::admin().list(resources::pods(), ns.name(), options)["items"];
        return items.empty() ? json() : items[0];
    };
    import("withsecret", {"--imagePullSecret", "pull"});
    import("nosecret", {});

    CHECK(harness::eventually(
        [&] {
            auto pod = podOf("withsecret");
            return !pod.is_null() && pod["status"].value("phase", "") == "Running";
        },
        90));
    std::string reason;
    CHECK(harness::eventually(
        [&] {
            auto pod = podOf("nosecret");
            if (pod.is_null()) return false;
            auto statuses = pod["status"].value("containerStatuses", json::array());
            if (statuses.empty()) return false;
            reason = statuses[0]["state"].value("waiting", json::object()).value("reason", "");
            return reason == "ErrImagePull" || reason == "ImagePullBackOff";
        },
        90));
    INFO("reason: " << reason);
    auto events = kubectl({"get", "events", "-n", ns.name(), "-o",
                           "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}"});
    // The registry refused the anonymous pull: authentication, not a missing image.
    CHECK(events.out.find("401 Unauthorized") != std::string::npos);
}
