// Issue 35 point 11: the Corefile shapes that make kube-dns a tunnel out (and those that do
// not), read as CoreDNS reads them; what cannot be known is Unknown, never Closed.
#include "rossoctl/app/project_dns.hpp"

#include <catch2/catch.hpp>

using namespace rossoctl::app;

namespace {

DnsRecursion recursion(const std::string& corefile) {
    ClusterDns dns;
    dns.corefile = corefile;
    return assessClusterDns(dns).recursion;
}

std::string evidence(const std::string& corefile) {
    ClusterDns dns;
    dns.corefile = corefile;
    std::string text;
    for (const auto& line : assessClusterDns(dns).evidence) text += line + "\n";
    return text;
}

}  // namespace

TEST_CASE("Corefile: blocks, zones, comments, sub-blocks, snippets", "[project][cluster-dns]") {
    const auto parsed = parseCorefile(
        "# the cluster\ncluster.local:53 in-addr.arpa, dns://ip6.arpa:53 {  # reverse too\n"
        "  kubernetes cluster.local { pods insecure }\n}\n"
        "(upstream) {\n  forward . 8.8.8.8\n}\n"
        "example.org {\n  file /etc/example.db\n}\n. :53 {\n  import upstream # snippet\n"
        "  import /etc/coredns/custom/*.override\n}\nimport /etc/coredns/custom/*.server\n");
    REQUIRE(parsed);
    const auto& servers = parsed->servers;
    REQUIRE(servers.size() == 3);  // the snippet is not a server
    CHECK(servers[0].zones ==
          std::vector<std::string>{"cluster.local.", "in-addr.arpa.", "ip6.arpa."});
    CHECK(servers[0].directives.front() == std::vector<std::string>{"kubernetes", "cluster.local"});
    CHECK(servers[2].zones == std::vector<std::string>{".", "."});  // ". :53": two keys
    CHECK(servers[2].directives.front() == std::vector<std::string>{"forward", ".", "8.8.8.8"});
    CHECK(parsed->fileImports == std::vector<std::string>{"import /etc/coredns/custom/*.override",
                                                          "import /etc/coredns/custom/*.server"});
    std::string problem;
    CHECK_FALSE(parseCorefile(".:53 {\n forward . 1.1.1.1\n", &problem));
    CHECK(problem == "its braces do not balance");
    CHECK_FALSE(parseCorefile("}\n"));
    CHECK_FALSE(parseCorefile("(a) {\n import b\n}\n(b) {\n import a\n}\n. {\n import a\n}\n"));
    CHECK(corefileZone("dns://Example.COM:53") == "example.com.");
    CHECK(corefileZone(":53") == ".");
}

TEST_CASE("cluster DNS: what asks outside servers for outside names recurses",
          "[project][cluster-dns]") {
    CHECK(recursion(".:53 {\n kubernetes cluster.local in-addr.arpa ip6.arpa\n forward . "
                    "/etc/resolv.conf\n}\n") == DnsRecursion::Recurses);
    CHECK_THAT(evidence(".:53 {\n forward . /etc/resolv.conf\n}\n"),
               Catch::Contains("kube-system/coredns Corefile, block .: forward . "
                               "/etc/resolv.conf: DNS to kube-dns resolves outside names"));
    // Several server blocks: the forward for "." in a later block, written ". :53" or "dns://.".
    CHECK(recursion("cluster.local:53 {\n kubernetes\n}\n. :53 {\n hosts /etc/h\n}\ndns://.:53 "
                    "{\n forward . 10.0.0.1\n}\n") == DnsRecursion::Recurses);
    CHECK(recursion("com {\n proxy . 8.8.8.8\n}\n") == DnsRecursion::Recurses);
    CHECK(recursion(". {\n grpc . 10.0.0.1\n}\n") == DnsRecursion::Recurses);
    // Plugins outside CoreDNS's tree that recurse.
    CHECK(recursion(".:53 {\n fanout . 10.0.0.1 10.0.0.2\n}\n") == DnsRecursion::Recurses);
    CHECK(recursion(".:53 {\n unbound\n}\n") == DnsRecursion::Recurses);
    // A snippet's forward counts where it is imported.
    CHECK(recursion("(up) {\n forward . 8.8.8.8\n}\n.:53 {\n kubernetes cluster.local\n import "
                    "up\n}\n") == DnsRecursion::Recurses);
    // The reverse trees are delegated in public DNS: forwarding them reaches whoever holds a
    // delegation there, even when kubernetes names them.
    CHECK(recursion("in-addr.arpa:53 {\n kubernetes cluster.local in-addr.arpa\n forward . "
                    "8.8.8.8\n}\n") == DnsRecursion::Recurses);
    // A kubernetes plugin claiming a top-level domain does not make it the cluster's.
    CHECK(recursion("com {\n kubernetes com\n forward . 8.8.8.8\n}\n") == DnsRecursion::Recurses);
    // A rewrite turns any name into one the cluster zone's forward gets.
    CHECK(recursion("cluster.local:53 {\n rewrite name suffix .cluster.local .example.com\n "
                    "forward . 8.8.8.8\n}\n") == DnsRecursion::Recurses);
    CHECK_THAT(evidence("cluster.local {\n rewrite name x.cluster.local x.example.com\n forward . "
                        "8.8.8.8\n}\n"),
               Catch::Contains("after a rewrite"));
}

TEST_CASE("cluster DNS: cluster names only, or forwards of the cluster's zones, are closed",
          "[project][cluster-dns]") {
    // The real node's (tests/cluster/real-node/coredns.yaml): a hosts table, no forward.
    CHECK(recursion(".:53 {\n errors\n health :8080\n ready :8181\n hosts /etc/coredns/hosts {\n "
                    " fallthrough cluster.local in-addr.arpa ip6.arpa\n }\n kubernetes "
                    "cluster.local in-addr.arpa ip6.arpa {\n  pods insecure\n }\n cache 30\n "
                    "reload\n}\n") == DnsRecursion::Closed);
    CHECK(recursion("cluster.local {\n forward . 10.0.0.1\n}\n") == DnsRecursion::Closed);
    // forward's own zone narrows the block's.
    CHECK(recursion(".:53 {\n kubernetes cluster.local\n forward cluster.local 10.0.0.1\n}\n") ==
          DnsRecursion::Closed);
    CHECK(recursion("corp.internal {\n kubernetes corp.internal\n forward . 10.0.0.1\n}\n") ==
          DnsRecursion::Closed);
    CHECK(recursion(".:53 {\n  # forward . /etc/resolv.conf\n  kubernetes cluster.local\n}\n") ==
          DnsRecursion::Closed);
    // A snippet with a forward that no block imports does nothing.
    CHECK(recursion("(up) {\n forward . 8.8.8.8\n}\n.:53 {\n kubernetes cluster.local\n}\n") ==
          DnsRecursion::Closed);
}

TEST_CASE("cluster DNS: imports of files, unknown plugins and placeholders are unknown",
          "[project][cluster-dns]") {
    // k3s and AKS import files from coredns-custom: what they add is not in the Corefile.
    CHECK(recursion(".:53 {\n kubernetes cluster.local\n import /etc/coredns/custom/*.override\n}"
                    "\n") == DnsRecursion::Unknown);
    CHECK(
        recursion(".:53 {\n kubernetes cluster.local\n}\nimport /etc/coredns/custom/*.server\n") ==
        DnsRecursion::Unknown);
    CHECK_THAT(evidence(".:53 {\n import custom.conf\n}\n"),
               Catch::Contains("import custom.conf: a file not in the ConfigMap"));
    // A plugin not known to answer locally might ask anyone.
    CHECK(recursion(".:53 {\n etcd skydns.local\n}\n") == DnsRecursion::Unknown);
    // CoreDNS substitutes placeholders before parsing: the text read is not what runs.
    CHECK(recursion(".:53 {\n kubernetes cluster.local\n {$EXTRA}\n}\n") == DnsRecursion::Unknown);
    // A forward outside beats the unknown.
    CHECK(recursion(".:53 {\n etcd\n forward . 8.8.8.8\n}\n") == DnsRecursion::Recurses);
    ClusterDns unread;
    unread.problem = "could not be read (forbidden)";
    CHECK(assessClusterDns(unread).recursion == DnsRecursion::Unknown);
}

TEST_CASE("cluster DNS: imports of mounted files are read (k3s's coredns-custom)",
          "[project][cluster-dns]") {
    const std::string k3s =
        ".:53 {\n kubernetes cluster.local in-addr.arpa ip6.arpa\n hosts "
        "/etc/coredns/NodeHosts\n import /etc/coredns/custom/*.override\n}\n"
        "import /etc/coredns/custom/*.server\n";
    ClusterDns dns;
    dns.corefile = k3s;
    dns.corefilePath = "/etc/coredns/Corefile";
    dns.mountedDirectories = {"/etc/coredns", "/etc/coredns/custom"};
    dns.mountedFiles = {{"/etc/coredns/Corefile", k3s}, {"/etc/coredns/NodeHosts", "10.0.0.1 n"}};
    // coredns-custom mounted (optional) and empty: nothing is imported.
    CHECK(assessClusterDns(dns).recursion == DnsRecursion::Closed);
    dns.mountedFiles["/etc/coredns/custom/log.override"] = "log";
    CHECK(assessClusterDns(dns).recursion == DnsRecursion::Closed);
    // A forward in an override joins the block; a server file adds a block.
    dns.mountedFiles["/etc/coredns/custom/up.override"] = "forward . 8.8.8.8 {\n max_fails 2\n}";
    CHECK(assessClusterDns(dns).recursion == DnsRecursion::Recurses);
    dns.mountedFiles.erase("/etc/coredns/custom/up.override");
    dns.mountedFiles["/etc/coredns/custom/corp.server"] =
        "corp.example:53 {\n forward . 1.1.1.1\n}";
    const auto server = assessClusterDns(dns);
    CHECK(server.recursion == DnsRecursion::Recurses);
    CHECK(server.summary == "kube-system/coredns: forward . 1.1.1.1");
    // Relative to the Corefile's directory.
    dns.corefile = ".:53 {\n kubernetes cluster.local\n import custom/*.server\n}\n";
    dns.mountedFiles["/etc/coredns/custom/corp.server"] = "forward . 1.1.1.1";
    CHECK(assessClusterDns(dns).recursion == DnsRecursion::Recurses);
    // A file outside every mount is in the image, not readable here.
    dns.corefile = ".:53 {\n kubernetes cluster.local\n import /opt/extra.conf\n}\n";
    CHECK(assessClusterDns(dns).recursion == DnsRecursion::Unknown);
    // A file that imports itself.
    dns.corefile = ".:53 {\n import /etc/coredns/custom/loop.override\n}\n";
    dns.mountedFiles["/etc/coredns/custom/loop.override"] =
        "import /etc/coredns/custom/loop.override";
    CHECK(assessClusterDns(dns).recursion == DnsRecursion::Unknown);
}

TEST_CASE("Corefile: imports that fan out past a million directives are refused, not expanded",
          "[project][cluster-dns][hostile]") {
    // s0 imports s1 ten times, s1 imports s2 ten times, ...: 10^9 directives in 1.4 KB, which
    // took the client past 3.6 GB (issue 29 review). Read as not understood: Unknown, not Closed.
    std::string corefile;
    for (int i = 0; i < 9; ++i) {
        corefile += "(s" + std::to_string(i) + ") {\n";
        for (int j = 0; j < 10; ++j) corefile += " import s" + std::to_string(i + 1) + "\n";
        corefile += "}\n";
    }
    corefile += "(s9) {\n log\n}\n.:53 {\n import s0\n}\n";
    std::string problem;
    CHECK_FALSE(parseCorefile(corefile, &problem));
    CHECK_THAT(problem, Catch::Contains("past a million"));
    CHECK(recursion(corefile) == DnsRecursion::Unknown);
    // The same with an unread file import at the leaf: the imports themselves count.
    const auto leaf = corefile.find("(s9) {\n log\n}");
    REQUIRE(leaf != std::string::npos);
    std::string viaFiles = corefile;
    viaFiles.replace(leaf, std::string("(s9) {\n log\n}").size(),
                     "(s9) {\n import /etc/coredns/custom/x.conf\n}");
    CHECK_FALSE(parseCorefile(viaFiles, &problem));
    CHECK(recursion(viaFiles) == DnsRecursion::Unknown);
}

TEST_CASE("the cluster's zones are named once each", "[project][cluster-dns][wording]") {
    // cluster.local. is the default zone and the kubernetes plugin's: once in the evidence.
    const std::string text =
        evidence(".:53 {\n  kubernetes cluster.local in-addr.arpa ip6.arpa\n  cache 30\n}\n");
    INFO(text);
    CHECK(text.find("the cluster's zones (cluster.local.): DNS to kube-dns does not recurse") !=
          std::string::npos);
}
