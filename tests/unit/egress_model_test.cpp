// Effective egress: CIDR and port-range arithmetic, the union of the policies selecting a pod,
// and what of it lies beyond the project's allowance.
#include <catch2/catch.hpp>

#include "rossoctl/errors.hpp"
#include "rossoctl/model/egress.hpp"

using nlohmann::json;
using namespace rossoctl::model;

namespace {

json pod() {
    return json::parse(R"({"metadata": {"name": "p", "labels": {"app": "agent", "tier": "x"}},
                          "spec": {"containers": [{"name": "a"}]}})");
}

json policy(const std::string& name, const json& egress, const json& selector = json::object()) {
    return {{"metadata", {{"name", name}}},
            {"spec",
             {{"podSelector", selector},
              {"policyTypes", json::array({"Ingress", "Egress"})},
              {"egress", egress}}}};
}

json defaultDeny() {
    return policy("default-deny", json::array());
}

json allowDns() {
    return json::parse(R"({"metadata": {"name": "allow-dns"}, "spec": {"podSelector": {},
      "policyTypes": ["Egress"], "egress": [{"to": [{"namespaceSelector": {"matchLabels":
      {"kubernetes.io/metadata.name": "kube-system"}}, "podSelector": {"matchLabels":
      {"k8s-app": "kube-dns"}}}], "ports": [{"protocol": "UDP", "port": 53},
      {"protocol": "TCP", "port": 53}]}]}})");
}

json ipRule(const std::vector<std::string>& cidrs, const json& ports = nullptr) {
    json to = json::array();
    for (const auto& cidr : cidrs) to.push_back({{"ipBlock", {{"cidr", cidr}}}});
    json rule = {{"to", to}};
    if (!ports.is_null()) rule["ports"] = ports;
    return rule;
}

const std::pair<Protocol, int> kHttps{Protocol::TCP, 443};

std::vector<EgressExcess> excessOf(const json& policies, const EgressAllowance& allowance = {}) {
    EgressAllowance dnsOnly = allowance;
    if (allowance.origin.empty()) dnsOnly = projectAllowance(json::object());
    return beyondAllowance(effectiveEgress(pod(), policies), dnsOnly, kHttps);
}

}  // namespace

TEST_CASE("address sets: CIDRs of both families, minus, union, description") {
    CHECK(AddressSet::parse("10.0.0.0/8").describe() == "10.0.0.0/8");
    CHECK(AddressSet::parse("10.1.2.3").describe() == "10.1.2.3/32");
    CHECK(AddressSet::parse("fc00::/7").describe() == "fc00::/7");
    CHECK_THROWS_AS(AddressSet::parse("10.0.0.0/33"), rossoctl::Error);
    CHECK_THROWS_AS(AddressSet::parse("nope"), rossoctl::Error);

    AddressSet halves = AddressSet::parse("0.0.0.0/1");
    halves.add(AddressSet::parse("128.0.0.0/1"));
    CHECK(halves.describe() == "0.0.0.0/0");
    CHECK(halves.contains(AddressSet::allV4()));
    CHECK_FALSE(halves.contains(AddressSet::allV6()));

    const AddressSet rest = AddressSet::allV4().minus(AddressSet::parse("10.0.0.0/8"));
    CHECK(rest.describe(10) ==
          "0.0.0.0/5, 8.0.0.0/7, 11.0.0.0/8, 12.0.0.0/6, 16.0.0.0/4, "
          "32.0.0.0/3, 64.0.0.0/2, 128.0.0.0/1");
    CHECK(rest.intersect(AddressSet::parse("10.1.0.0/16")).empty());
    CHECK(rest.firstAddress() == "0.0.0.0");
    CHECK(AddressSet::allV6().minus(AddressSet::parse("::/1")).firstAddress() == "8000::");
    CHECK(AddressSet::everything().minus(AddressSet::allV4()).minus(AddressSet::allV6()).empty());
}

TEST_CASE("port sets: ranges, all but one, per protocol") {
    PortSet allButHttps;
    allButHttps.add(Protocol::TCP, 1, 442);
    allButHttps.add(Protocol::TCP, 444, 65535);
    CHECK_FALSE(allButHttps.contains(Protocol::TCP, 443));
    CHECK(allButHttps.contains(Protocol::TCP, 80));
    CHECK(allButHttps.describe() == "TCP 1-442,444-65535");
    CHECK(allButHttps.example(kHttps) == std::pair{Protocol::TCP, 1});
    PortSet https;
    https.add(Protocol::TCP, 443, 443);
    allButHttps.add(https);
    CHECK(allButHttps.describe() == "TCP 1-65535");
    CHECK(PortSet::all().minus(allButHttps).describe() == "UDP 1-65535; SCTP 1-65535");
    CHECK(PortSet::all().minus(PortSet::all()).empty());
}

TEST_CASE("effective egress: which policies select the pod and isolate its egress") {
    SECTION("no policy: everything is open") {
        auto excess = excessOf(json::array());
        REQUIRE(excess.size() == 1);
        CHECK(excess[0].source == "Kubernetes' default (no policy limits this pod's egress)");
        CHECK(excess[0].example == "169.254.169.254 TCP 443");
    }
    SECTION("default-deny plus allow-dns: nothing beyond") {
        CHECK(excessOf(json::array({defaultDeny(), allowDns()})).empty());
    }
    SECTION("policyTypes left out: Egress is implied by egress rules") {
        json open = policy("open", json::array({ipRule({"0.0.0.0/0"})}));
        open["spec"].erase("policyTypes");
        CHECK(excessOf(json::array({defaultDeny(), open})).size() == 1);
        json ingressOnly = policy("ingress", json::array());
        ingressOnly["spec"]["policyTypes"] = {"Ingress"};
        CHECK(excessOf(json::array({ingressOnly})).size() == 1);  // not isolated
    }
    SECTION("a policy that does not select the pod adds nothing") {
        json other =
            policy("other", json::array({ipRule({"0.0.0.0/0"})}),
                   {{"matchExpressions",
                     json::array({{{"key", "tier"}, {"operator", "NotIn"}, {"values", {"x"}}}})}});
        CHECK(excessOf(json::array({defaultDeny(), other})).empty());
        other["spec"]["podSelector"]["matchExpressions"][0]["operator"] = "In";
        CHECK(excessOf(json::array({defaultDeny(), other})).size() == 1);
    }
}

TEST_CASE("effective egress: every open shape is beyond the allowance, naming policy and rule") {
    SECTION("the whole IPv4 space split in halves") {
        auto excess = excessOf(
            json::array({defaultDeny(), allowDns(),
                         policy("split", json::array({ipRule({"0.0.0.0/1", "128.0.0.0/1"})}))}));
        REQUIRE(excess.size() == 1);
        CHECK(excess[0].source == "networkpolicy/split rule 1");
        CHECK(excess[0].open.front().first.describe() == "0.0.0.0/0");
        CHECK(excess[0].example == "169.254.169.254 TCP 443");
    }
    SECTION("every port but the probed one, with endPort") {
        json ports = json::array({{{"protocol", "TCP"}, {"port", 1}, {"endPort", 442}},
                                  {{"protocol", "TCP"}, {"port", 444}, {"endPort", 65535}}});
        auto excess = excessOf(json::array(
            {defaultDeny(), policy("but-443", json::array({ipRule({"0.0.0.0/0"}, ports)}))}));
        REQUIRE(excess.size() == 1);
        CHECK(excess[0].example == "169.254.169.254 TCP 1");
        CHECK(excess[0].open.front().second.describe() == "TCP 1-442,444-65535");
    }
    SECTION("UDP only") {
        json ports = json::array({{{"protocol", "UDP"}}});
        auto excess = excessOf(json::array(
            {defaultDeny(), policy("udp", json::array({ipRule({"0.0.0.0/0"}, ports)}))}));
        REQUIRE(excess.size() == 1);
        CHECK(excess[0].example == "169.254.169.254 UDP 1");
    }
    SECTION("except leaves the rest open; except covering everything closes it") {
        json rule = {{"to", json::array({{{"ipBlock",
                                           {{"cidr", "10.0.0.0/8"},
                                            {"except", {"10.0.0.0/9", "10.128.0.0/9"}}}}}})}};
        CHECK(excessOf(json::array({defaultDeny(), policy("none", json::array({rule}))})).empty());
        rule["to"][0]["ipBlock"]["except"] = {"10.0.0.0/9"};
        auto excess = excessOf(json::array({defaultDeny(), policy("half", json::array({rule}))}));
        REQUIRE(excess.size() == 1);
        CHECK(excess[0].open.front().first.describe() == "10.128.0.0/9");
        CHECK(excess[0].example == "10.128.0.0 TCP 443");
    }
    SECTION("additive policies: each one's opening is reported") {
        auto excess = excessOf(json::array(
            {defaultDeny(), allowDns(), policy("a", json::array({ipRule({"1.1.1.1/32"})})),
             policy("b",
                    json::array({ipRule({"8.8.8.8/32"},
                                        json::array({{{"port", 53}, {"protocol", "UDP"}}}))}))}));
        REQUIRE(excess.size() == 2);
        CHECK(excess[0].example == "1.1.1.1 TCP 443");
        CHECK(excess[1].example == "8.8.8.8 UDP 53");
        CHECK(excess[1].source == "networkpolicy/b rule 1");
    }
    SECTION("agent-sandbox's Managed SandboxTemplate policy: 0.0.0.0/0 minus private ranges") {
        json managed = json::parse(R"({"metadata": {"name": "t-network-policy"}, "spec": {
          "podSelector": {"matchLabels": {"app": "agent"}}, "policyTypes": ["Ingress", "Egress"],
          "egress": [{"to": [
            {"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8", "172.16.0.0/12",
                                                         "192.168.0.0/16", "169.254.0.0/16"]}},
            {"ipBlock": {"cidr": "::/0", "except": ["fc00::/7", "fe80::/10"]}}]}]}})");
        auto excess = excessOf(json::array({defaultDeny(), allowDns(), managed}));
        REQUIRE(excess.size() == 1);
        CHECK(excess[0].source == "networkpolicy/t-network-policy rule 1");
        CHECK(excess[0].example == "1.0.0.0 TCP 443");  // no metadata; the first public address
        CHECK(excess[0].open.front().first.intersect(AddressSet::parse("169.254.169.254")).empty());
        CHECK_FALSE(excess[0].open.front().first.intersect(AddressSet::parse("8.8.8.8")).empty());
    }
    SECTION("pod peers other than kube-dns, and DNS on more ports than 53") {
        json peers = json::parse(R"([{"to": [{"podSelector": {"matchLabels": {"app": "db"}}}]}])");
        auto excess = excessOf(json::array({defaultDeny(), policy("lateral", peers)}));
        REQUIRE(excess.size() == 1);
        CHECK(excess[0].podsText.find("app") != std::string::npos);
        json wideDns = allowDns();
        wideDns["spec"]["egress"][0].erase("ports");
        CHECK(excessOf(json::array({defaultDeny(), wideDns})).size() == 1);
    }
    SECTION("a named port towards addresses cannot be resolved: unevaluable, never nothing") {
        // Issue 35 point 9: it counted as every port; a name means the number each destination
        // pod gives it, which an address does not say.
        json ports = json::array({{{"port", "https"}}});
        auto effective = effectiveEgress(
            pod(), json::array({policy("named", json::array({ipRule({"1.2.3.4/32"}, ports)}))}));
        REQUIRE(effective.grants.size() == 1);
        CHECK(effective.grants[0].ports.empty());
        CHECK(effective.grants[0].text == "1.2.3.4/32 on TCP named port \"https\"");
        resolveNamedPorts(effective, [](const PodPeer&) { return std::vector<json>{}; });
        REQUIRE(effective.unevaluable.size() == 1);
        CHECK(effective.unevaluable[0].find("named port \"https\" towards addresses") !=
              std::string::npos);
    }
    SECTION("an ipBlock the parser cannot read leaves the rule unevaluated") {
        // Issue 35 point 12: it added a note and opened nothing, so it passed.
        auto effective = effectiveEgress(
            pod(), json::array({policy("odd", json::array({ipRule({"10.0.0.0/33"})}))}));
        REQUIRE(effective.unevaluable.size() == 1);
        CHECK(effective.unevaluable[0].find("networkpolicy/odd rule 1: ipBlock") !=
              std::string::npos);
    }
}

TEST_CASE("project allowance: recorded CIDRs and pinned hosts are allowed, nothing more") {
    json ns = {{"metadata",
                {{"annotations",
                  {{kAllowedEgressAnnotation,
                    allowedEgressAnnotation(true, false, {"192.0.2.0/24"}, {{"example.com", 443}},
                                            {{"93.184.216.34"}})}}}}}};
    const auto allowance = projectAllowance(ns);
    json policies = json::array(
        {defaultDeny(), allowDns(), policy("allow-cidrs", json::array({ipRule({"192.0.2.0/24"})})),
         policy("allow-hosts",
                json::array({ipRule({"93.184.216.34/32"},
                                    json::array({{{"protocol", "TCP"}, {"port", 443}}}))}))});
    CHECK(excessOf(policies, allowance).empty());
    policies[3]["spec"]["egress"][0].erase("ports");
    auto excess = excessOf(policies, allowance);
    REQUIRE(excess.size() == 1);
    CHECK(excess[0].example == "93.184.216.34 TCP 1");
}

TEST_CASE("project allowance: public addresses only behind the recorded EgressFirewall") {
    json ns = {{"metadata",
                {{"annotations",
                  {{kAllowedEgressAnnotation,
                    allowedEgressAnnotation(true, false, {}, {{"example.com", 443}}, {})}}}}}};
    json firewall = json::parse(R"({"spec": {"egress": [
      {"type": "Allow", "to": {"dnsName": "example.com"}, "ports": [{"protocol": "TCP", "port": 443}]},
      {"type": "Deny", "to": {"cidrSelector": "0.0.0.0/0"}},
      {"type": "Deny", "to": {"cidrSelector": "::/0"}}]}})");
    json forFirewall = policy(
        "allow-hosts",
        json::array(
            {{{"to", json::array({{{"ipBlock",
                                    {{"cidr", "0.0.0.0/0"},
                                     {"except",
                                      {"10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8",
                                       "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16"}}}}}})},
              {"ports", json::array({{{"protocol", "TCP"}, {"port", 443}}})}}}));
    json policies = json::array({defaultDeny(), allowDns(), forFirewall});
    CHECK(excessOf(policies, projectAllowance(ns, firewall)).size() ==
          1);  // 0.0.0.0/8, 224/3 remain
    CHECK(excessOf(policies, projectAllowance(ns, nullptr)).size() == 1);
    firewall["spec"]["egress"][0]["to"]["dnsName"] = "evil.example";
    CHECK(excessOf(policies, projectAllowance(ns, firewall)).size() == 1);
}

TEST_CASE("CiliumNetworkPolicy: toCIDR, entities, FQDNs; what cannot be evaluated is listed") {
    json cnp = json::parse(R"([{"metadata": {"name": "c"}, "spec": {"endpointSelector": {},
      "egress": [{"toEntities": ["world"]}, {"toFQDNs": [{"matchName": "x.example"}]},
                 {"toEntities": ["kube-apiserver"]}]}}])");
    auto effective = effectiveEgress(pod(), json::array(), cnp);
    CHECK(effective.isolated);
    CHECK(effective.unevaluable.size() == 1);
    auto excess = beyondAllowance(effective, projectAllowance(json::object()), kHttps);
    REQUIRE(excess.size() == 2);
    CHECK(excess[0].example == "169.254.169.254 TCP 443");
    CHECK(excess[1].podsText.find("x.example") != std::string::npos);
}

TEST_CASE("called-out ranges: metadata, API server, node network, public") {
    auto ranges = calledOutRanges({"10.96.0.1"}, {"192.168.1.5"});
    REQUIRE(ranges.size() == 4);
    CHECK(ranges[1].name == "the API server (10.96.0.1)");
    CHECK(publicAddresses().contains(AddressSet::parse("8.8.8.8")));
    CHECK(publicAddresses().intersect(AddressSet::parse("10.0.0.0/8")).empty());
}

TEST_CASE("project allowance: an annotation nested past any allowance reads as none, no crash",
          "[hostile]") {
    // 3,000,000 levels crashed verify (the parse's copy recursed once per level).
    const std::string deep = "{\"dns\":true,\"cidrs\":" + std::string(3'000'000, '[') + "]}";
    const json ns = {{"metadata", {{"annotations", {{kAllowedEgressAnnotation, deep}}}}}};
    const auto allowance = projectAllowance(ns);
    CHECK(allowance.origin.find("no " + std::string(kAllowedEgressAnnotation)) !=
          std::string::npos);
    CHECK(allowance.addresses.empty());
}

TEST_CASE("attack 54 E4: which pods of the project the pod's own policies grant") {
    const json relay = json::parse(R"({"app": "prelay"})");
    const json ns = json::parse(R"({"kubernetes.io/metadata.name": "team1"})");
    // default-deny and allow-dns: no pod of the project, whatever its own policy opens.
    CHECK_FALSE(egressGrantsPod(effectiveEgress(pod(), json::array({defaultDeny(), allowDns()})),
                                relay, ns));
    const json toRelay =
        policy("to-relay",
               json::parse(R"([{"to": [{"podSelector": {"matchLabels": {"app": "prelay"}}}]}])"));
    CHECK(
        egressGrantsPod(effectiveEgress(pod(), json::array({defaultDeny(), toRelay})), relay, ns));
    CHECK_FALSE(egressGrantsPod(effectiveEgress(pod(), json::array({defaultDeny(), toRelay})),
                                json::parse(R"({"app": "db"})"), ns));
    const json toOtherNamespace = policy("to-other", json::parse(R"([{"to": [{
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "other"}},
        "podSelector": {}}]}])"));
    CHECK_FALSE(egressGrantsPod(
        effectiveEgress(pod(), json::array({defaultDeny(), toOtherNamespace})), relay, ns));
    const json everything = policy("open", json::parse(R"([{}])"));
    CHECK(egressGrantsPod(effectiveEgress(pod(), json::array({everything})), relay, ns));
}
