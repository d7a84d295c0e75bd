// Issue 35 point 11: DNS to kube-dns is egress beyond the project when the cluster DNS recurses
// to the outside (a DNS tunnel); a configuration that cannot be read is unproven, never pass.
#include <catch2/catch.hpp>

#include "rossoctl/verify/cluster_dns.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl;
using namespace rossoctl::verify;
using nlohmann::json;
using rossoctl::testing::Listener;
using rossoctl::testing::mentions;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;

namespace {

// kubeadm's stock Corefile: the root zone forwarded to the node's resolvers.
const std::string kStock = R"(.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
)";

// The real node's (tests/cluster/real-node/coredns.yaml): a hosts table, no forward.
const std::string kClusterOnly = R"(.:53 {
    errors
    health :8080
    ready :8181
    hosts /etc/coredns/hosts {
        fallthrough cluster.local in-addr.arpa ip6.arpa
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
    }
    cache 30
    reload
}
)";

ClusterDns read(const std::string& corefile) {
    ClusterDns dns;
    dns.corefile = corefile;
    return dns;
}

json namespaced(json pod) {
    pod["metadata"]["namespace"] = "team1";
    return pod;
}

}  // namespace

TEST_CASE("cluster DNS: a recursing Corefile fails, an unread one is unproven",
          "[verify][cluster-dns]") {
    auto stock = clusterDnsRecursion(read(kStock));
    CHECK(stock.verdict == Verdict::Fail);
    CHECK(mentions(stock,
                   "kube-system/coredns Corefile, block .: forward . /etc/resolv.conf: DNS to "
                   "kube-dns resolves outside names (a tunnel out)"));
    CHECK(clusterDnsRecursion(read(kClusterOnly)).verdict == Verdict::Pass);
    ClusterDns refused;
    refused.problem = "could not be read (forbidden)";
    CHECK(clusterDnsRecursion(refused).verdict == Verdict::Unproven);
    CHECK(clusterDnsRecursion(read("{ nonsense")).verdict == Verdict::Unproven);
    CHECK(
        clusterDnsRecursion(read(".:53 {\n import /etc/coredns/custom/*.override\n}\n")).verdict ==
        Verdict::Unproven);
}

TEST_CASE("egress static: DNS to a recursing kube-dns fails, unread is unproven",
          "[verify][cluster-dns]") {
    const json pod = namespaced(hardenedPod("pod-uid-1"));
    EgressInputs inputs;
    CHECK(egressStatic(pod, policies(), inputs).verdict == Verdict::Pass);  // not read: offline
    inputs.clusterDns = read(kStock);
    auto tunnel = egressStatic(pod, policies(), inputs);
    CHECK(tunnel.verdict == Verdict::Fail);
    CHECK(mentions(tunnel,
                   "networkpolicy/allow-dns rule 1: kube-system/coredns Corefile, block .: "
                   "forward . /etc/resolv.conf: DNS to kube-dns resolves outside names"));
    inputs.clusterDns = read(kClusterOnly);
    const auto closed = egressStatic(pod, policies(), inputs);
    CHECK(closed.verdict == Verdict::Pass);
    // The way in (attack 54, T2): any namespace's ExternalName reaches the pod as a CNAME.
    CHECK(mentions(closed,
                   "networkpolicy/allow-dns rule 1: the cluster DNS is also a way in: the "
                   "externalName of an ExternalName Service in any namespace"));
    inputs.clusterDns = ClusterDns{};
    inputs.clusterDns->problem = "not found";
    CHECK(egressStatic(pod, policies(), inputs).verdict == Verdict::Unproven);
    // A policy that allows no DNS at all: the cluster DNS is not asked, whatever it does.
    inputs.clusterDns = read(kStock);
    const json denyAll = json::array({policies()[0]});
    CHECK(egressStatic(pod, denyAll, inputs).verdict == Verdict::Pass);
}

TEST_CASE("egress static: an ipBlock holding kube-dns asks the cluster DNS too",
          "[verify][cluster-dns]") {
    const json pod = namespaced(hardenedPod("pod-uid-1"));
    // A project without DNS that allows the service range: kube-dns's cluster IP is in it.
    EgressInputs inputs;
    inputs.allowance = model::projectAllowance(
        {{"metadata",
          {{"name", "team1"},
           {"annotations",
            {{model::kAllowedEgressAnnotation,
              model::allowedEgressAnnotation(false, false, {"10.96.0.0/12"}, {}, {})}}}}}});
    const json byCidr = json::parse(R"([
      {"metadata": {"name": "default-deny"},
       "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}},
      {"metadata": {"name": "allow-cidr"}, "spec": {"podSelector": {}, "policyTypes": ["Egress"],
       "egress": [{"to": [{"ipBlock": {"cidr": "10.96.0.0/12"}}]}]}}])");
    inputs.clusterDns = read(kStock);
    inputs.clusterDns->addresses = {"10.96.0.10", "10.244.0.5"};
    auto tunnel = egressStatic(pod, byCidr, inputs);
    CHECK(tunnel.verdict == Verdict::Fail);
    CHECK(mentions(tunnel, "networkpolicy/allow-cidr rule 1: kube-system/coredns Corefile"));
    // A kube-dns pod's address on port 53 only counts as well; other ports do not.
    json podCidr = byCidr;
    podCidr[1]["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"] = "10.244.0.5/32";
    podCidr[1]["spec"]["egress"][0]["ports"] = json::parse(R"([{"protocol": "UDP", "port": 53}])");
    inputs.allowance = model::projectAllowance(
        {{"metadata",
          {{"name", "team1"},
           {"annotations",
            {{model::kAllowedEgressAnnotation,
              model::allowedEgressAnnotation(false, false, {"10.244.0.5/32"}, {}, {})}}}}}});
    // Every node's pod range known and beside the allowance (attack 62 C1b).
    inputs.podRanges = std::vector<std::pair<std::string, std::string>>{
        {"10.250.0.0/24", "node local-node's pod range"}};
    CHECK(egressStatic(pod, podCidr, inputs).verdict == Verdict::Fail);
    podCidr[1]["spec"]["egress"][0]["ports"] = json::parse(R"([{"protocol": "TCP", "port": 443}])");
    CHECK(egressStatic(pod, podCidr, inputs).verdict == Verdict::Pass);
    // kube-dns's addresses not read: an ipBlock on port 53 may hold it.
    podCidr[1]["spec"]["egress"][0]["ports"] = json::parse(R"([{"protocol": "UDP", "port": 53}])");
    inputs.clusterDns->addresses.clear();
    inputs.clusterDns->endpointsProblem = "Service kube-system/kube-dns not found";
    CHECK(egressStatic(pod, podCidr, inputs).verdict == Verdict::Unproven);
    inputs.clusterDns->corefile = kClusterOnly;
    CHECK(egressStatic(pod, podCidr, inputs).verdict == Verdict::Pass);
}

TEST_CASE("egress static: a peer that selects kube-system by another label asks kube-dns",
          "[verify][cluster-dns]") {
    const json pod = namespaced(hardenedPod("pod-uid-1"));
    json byName = policies();
    byName[1]["spec"]["egress"][0]["to"][0]["namespaceSelector"] =
        json::parse(R"({"matchLabels": {"name": "kube-system"}})");
    byName[1]["spec"]["egress"][0]["to"][0]["podSelector"] =
        json::parse(R"({"matchLabels": {"app.kubernetes.io/name": "coredns"}})");
    EgressInputs inputs;
    inputs.allowance.pods.push_back(
        {{json::parse(R"({"matchLabels": {"name": "kube-system"}})"),
          json::parse(R"({"matchLabels": {"app.kubernetes.io/name": "coredns"}})")},
         model::PortSet::all()});
    inputs.clusterDns = read(kStock);
    inputs.clusterDns->namespaceLabels = {{"kubernetes.io/metadata.name", "kube-system"},
                                          {"name", "kube-system"}};
    inputs.clusterDns->podLabels.push_back(
        {{"k8s-app", "kube-dns"}, {"app.kubernetes.io/name", "coredns"}});
    CHECK(egressStatic(pod, byName, inputs).verdict == Verdict::Fail);
}

TEST_CASE("verify reads the Corefile the kube-dns pods mount for the egress check",
          "[verify][cluster-dns]") {
    // configMap: where the Corefile is; mounted: the kube-dns Service and its pods are served,
    // the pods mounting it.
    auto run = [](const std::optional<std::string>& corefile, const std::string& configMap,
                  bool mounted) {
        TestHost host;
        serveHardened(host, "curl");
        if (corefile)
            host.server.onJson(
                "GET", "/api/v1/namespaces/kube-system/configmaps/" + configMap, 200,
                {{"metadata", {{"name", configMap}}}, {"data", {{"Corefile", *corefile}}}});
        if (mounted) {
            host.server.onJson(
                "GET", "/api/v1/namespaces/kube-system/services/kube-dns", 200,
                {{"metadata", {{"name", "kube-dns"}}},
                 {"spec", {{"clusterIP", "10.96.0.10"}, {"selector", {{"k8s-app", "kube-dns"}}}}}});
            json dnsPod = json::parse(R"({
              "metadata": {"name": "dns-1", "labels": {"k8s-app": "kube-dns"}},
              "spec": {
                "containers": [{"name": "coredns", "args": ["-conf", "/etc/coredns/Corefile"],
                                "volumeMounts": [{"name": "config", "mountPath": "/etc/coredns"}]}],
                "volumes": [{"name": "config", "configMap": {"name": "?"}}]},
              "status": {"podIP": "10.244.0.5"}})");
            dnsPod["spec"]["volumes"][0]["configMap"]["name"] = configMap;
            host.server.onJson("GET", "/api/v1/namespaces/kube-system/pods", 200, list({dnsPod}));
        }
        runVerifyJson(host, {"--no-restart"});
        INFO(host.out.str() << host.err.str());
        return verdicts(testing::printedJson(host.out.str()))["egress"]["static"];
    };
    const json stock = run(kStock, "coredns", false);
    CHECK(stock["result"] == "fail");
    CHECK_THAT(stock["evidence"].dump(), Catch::Contains("forward . /etc/resolv.conf"));
    CHECK(run(kClusterOnly, "coredns", true)["result"] == "pass");
    const json absent = run(std::nullopt, "coredns", false);
    CHECK(absent["result"] == "unproven");
    CHECK_THAT(absent["evidence"].dump(), Catch::Contains("kube-system/coredns: not found"));
    // A distribution's own name (RKE2's): found through the pods that mount it.
    const json renamed = run(kStock, "rke2-coredns-rke2-coredns", true);
    CHECK(renamed["result"] == "fail");
    CHECK_THAT(renamed["evidence"].dump(),
               Catch::Contains("kube-system/rke2-coredns-rke2-coredns Corefile, block ."));
}
