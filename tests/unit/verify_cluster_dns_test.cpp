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

TEST_CASE("Corefile: blocks, zones, comments, sub-blocks", "[verify][cluster-dns]") {
    const auto servers = parseCorefile(
        "# the cluster\ncluster.local:53 in-addr.arpa, dns://ip6.arpa:53 {  # reverse too\n"
        "  kubernetes cluster.local { pods insecure }\n}\n"
        "example.org {\n  file /etc/example.db\n}\n.:53 {\n  forward . 8.8.8.8 # upstream\n}\n");
    REQUIRE(servers);
    REQUIRE(servers->size() == 3);
    CHECK((*servers)[0].zones ==
          std::vector<std::string>{"cluster.local.", "in-addr.arpa.", "ip6.arpa."});
    CHECK((*servers)[0].directives.front() ==
          std::vector<std::string>{"kubernetes", "cluster.local"});
    CHECK((*servers)[2].zones == std::vector<std::string>{"."});
    CHECK((*servers)[2].directives.front() == std::vector<std::string>{"forward", ".", "8.8.8.8"});
    CHECK_FALSE(parseCorefile(".:53 {\n forward . 1.1.1.1\n"));  // unbalanced
    CHECK_FALSE(parseCorefile("}\n"));
    CHECK(corefileZone("dns://Example.COM:53") == "example.com.");
}

TEST_CASE("cluster DNS: forwarding outside names is a tunnel out", "[verify][cluster-dns]") {
    auto stock = clusterDnsRecursion(read(kStock));
    CHECK(stock.verdict == Verdict::Fail);
    CHECK(mentions(stock,
                   "kube-system/coredns Corefile: forward . /etc/resolv.conf: DNS to "
                   "kube-dns resolves outside names (a tunnel out)"));
    CHECK(clusterDnsRecursion(read(kClusterOnly)).verdict == Verdict::Pass);
    // proxy (older CoreDNS) and grpc recurse too; a forward for the cluster's zone does not.
    CHECK(clusterDnsRecursion(read("com {\n proxy . 8.8.8.8\n}\n")).verdict == Verdict::Fail);
    CHECK(clusterDnsRecursion(read(". {\n grpc . 10.0.0.1\n}\n")).verdict == Verdict::Fail);
    CHECK(clusterDnsRecursion(read("cluster.local {\n forward . 10.0.0.1\n}\n")).verdict ==
          Verdict::Pass);
    // A custom cluster domain is the kubernetes plugin's zone.
    CHECK(clusterDnsRecursion(read("corp.internal {\n kubernetes corp.internal\n forward . "
                                   "10.0.0.1\n}\n"))
              .verdict == Verdict::Pass);
    // The forward commented out is not there.
    CHECK(clusterDnsRecursion(read(".:53 {\n  # forward . /etc/resolv.conf\n  kubernetes "
                                   "cluster.local\n}\n"))
              .verdict == Verdict::Pass);
    ClusterDns refused;
    refused.problem = "could not be read (forbidden)";
    CHECK(clusterDnsRecursion(refused).verdict == Verdict::Unproven);
    CHECK(clusterDnsRecursion(read("{ nonsense")).verdict == Verdict::Unproven);
}

TEST_CASE("egress static: DNS to a recursing kube-dns fails, unread is unproven",
          "[verify][cluster-dns]") {
    const json pod = namespaced(hardenedPod("pod-uid-1"));
    EgressInputs inputs;
    CHECK(egressStatic(pod, policies(), inputs).verdict == Verdict::Pass);  // not read: offline
    inputs.clusterDns = read(kStock);
    auto tunnel = egressStatic(pod, policies(), inputs);
    CHECK(tunnel.verdict == Verdict::Fail);
    CHECK(mentions(tunnel, "forward . /etc/resolv.conf: DNS to kube-dns resolves outside names"));
    inputs.clusterDns = read(kClusterOnly);
    CHECK(egressStatic(pod, policies(), inputs).verdict == Verdict::Pass);
    inputs.clusterDns = ClusterDns{};
    inputs.clusterDns->problem = "not found";
    CHECK(egressStatic(pod, policies(), inputs).verdict == Verdict::Unproven);
    // A policy that allows no DNS at all: the cluster DNS is not asked, whatever it does.
    inputs.clusterDns = read(kStock);
    const json denyAll = json::array({policies()[0]});
    CHECK(egressStatic(pod, denyAll, inputs).verdict == Verdict::Pass);
}

TEST_CASE("verify reads kube-system/coredns for the egress check", "[verify][cluster-dns]") {
    auto run = [](const std::optional<std::string>& corefile) {
        TestHost host;
        Listener control;
        serveHardened(host, "curl");
        if (corefile)
            host.server.onJson(
                "GET", "/api/v1/namespaces/kube-system/configmaps/coredns", 200,
                {{"metadata", {{"name", "coredns"}}}, {"data", {{"Corefile", *corefile}}}});
        host.resolver.addresses["control.test"] = {"127.0.0.1"};
        host.run({"sandbox", "verify", "orders", "--no-restart", "--egress-target",
                  "http://control.test:" + std::to_string(control.port) + "/", "-o", "json"});
        INFO(host.out.str() << host.err.str());
        return verdicts(testing::printedJson(host.out.str()))["egress"]["static"];
    };
    const json stock = run(kStock);
    CHECK(stock["result"] == "fail");
    CHECK_THAT(stock["evidence"].dump(), Catch::Contains("forward . /etc/resolv.conf"));
    CHECK(run(kClusterOnly)["result"] == "pass");
    const json absent = run(std::nullopt);
    CHECK(absent["result"] == "unproven");
    CHECK_THAT(absent["evidence"].dump(), Catch::Contains("kube-system/coredns: not found"));
}
