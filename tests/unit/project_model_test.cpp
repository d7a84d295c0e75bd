#include <catch2/catch.hpp>
#include <map>

#include "rossoctl/errors.hpp"
#include "rossoctl/model/egress.hpp"
#include "rossoctl/model/project.hpp"

using namespace rossoctl::model;
using nlohmann::json;

namespace {

class FakeResolver : public HostResolver {
  public:
    std::map<std::string, std::vector<std::string>> answers;
    std::vector<std::string> asked;
    std::vector<std::string> resolve(const std::string& host) override {
        asked.push_back(host);
        auto found = answers.find(host);
        if (found == answers.end()) throw rossoctl::Error("cannot resolve --allow-host " + host);
        return found->second;
    }
};

ProjectOptions validOptions() {
    ProjectOptions options;
    options.name = "team1";
    validateProjectOptions(options);
    return options;
}

const json* find(const ProjectPlan& plan, const std::string& displayName) {
    for (const auto& object : plan.objects)
        if (object.displayName() == displayName) return &object.object;
    return nullptr;
}

std::vector<std::string> names(const ProjectPlan& plan) {
    std::vector<std::string> out;
    for (const auto& object : plan.objects) out.push_back(object.displayName());
    return out;
}

}  // namespace

TEST_CASE("a project without hosts: namespace, quota, limits, deny, DNS", "[project]") {
    FakeResolver resolver;
    auto plan = planProject(validOptions(), EgressMechanism::NetworkPolicy, resolver);
    CHECK(names(plan) == std::vector<std::string>{"namespace/team1", "networkpolicy/default-deny",
                                                  "networkpolicy/allow-dns",
                                                  "resourcequota/sandbox-quota",
                                                  "limitrange/sandbox-limits"});
    CHECK(resolver.asked.empty());
    for (const auto& object : plan.objects)
        CHECK(object.object["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "rossoctl");

    const auto& ns = *find(plan, "namespace/team1");
    CHECK(ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted");
    CHECK(ns["metadata"]["labels"]["pod-security.kubernetes.io/warn"] == "restricted");
    CHECK(ns["metadata"]["labels"]["pod-security.kubernetes.io/audit"] == "restricted");
    CHECK(ns["metadata"]["labels"]["rossoctl.dev/sandbox-project"] == "true");
    CHECK(ns["metadata"]["annotations"]["rossoctl.dev/default-lifetime"] == "24h");

    const auto& hard = (*find(plan, "resourcequota/sandbox-quota"))["spec"]["hard"];
    CHECK(hard == json{{"requests.cpu", "4"},
                       {"limits.cpu", "4"},
                       {"requests.memory", "8Gi"},
                       {"limits.memory", "8Gi"},
                       {"pods", "20"},
                       {"requests.storage", "10Gi"},
                       {"persistentvolumeclaims", "5"}});

    const auto& limit = (*find(plan, "limitrange/sandbox-limits"))["spec"]["limits"][0];
    CHECK(limit["type"] == "Container");
    CHECK(limit["default"] == json{{"cpu", "500m"}, {"memory", "512Mi"}});
    CHECK(limit["defaultRequest"] == json{{"cpu", "500m"}, {"memory", "512Mi"}});
    CHECK(limit["max"] == json{{"cpu", "2"}, {"memory", "4Gi"}});

    const auto& deny = (*find(plan, "networkpolicy/default-deny"))["spec"];
    CHECK(deny == json{{"podSelector", json::object()},
                       {"policyTypes", json::array({"Ingress", "Egress"})}});

    const auto& dns = (*find(plan, "networkpolicy/allow-dns"))["spec"]["egress"];
    REQUIRE(dns.size() == 1);
    CHECK(dns[0]["to"][0]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] ==
          "kube-system");
    CHECK(dns[0]["to"][0]["podSelector"]["matchLabels"]["k8s-app"] == "kube-dns");
    CHECK(dns[0]["ports"] ==
          json::array({{{"protocol", "UDP"}, {"port", 53}}, {{"protocol", "TCP"}, {"port", 53}}}));
}

TEST_CASE("OpenShift: a ProjectRequest first, and its DNS pods allowed too", "[project]") {
    auto options = validOptions();
    options.openshift = true;
    FakeResolver resolver;
    auto plan = planProject(options, EgressMechanism::NetworkPolicy, resolver);
    REQUIRE(plan.objects.front().createOnly);
    CHECK(plan.objects.front().object["kind"] == "ProjectRequest");
    CHECK(plan.objects[1].object["kind"] == "Namespace");
    CHECK((*find(plan, "networkpolicy/allow-dns"))["spec"]["egress"].size() == 2);
}

TEST_CASE("default-deny and allow-dns are written right after the namespace", "[project]") {
    auto options = validOptions();
    FakeResolver resolver;
    auto plan = planProject(options, EgressMechanism::NetworkPolicy, resolver);
    REQUIRE(plan.objects.size() >= 5);
    CHECK(plan.objects[0].object["kind"] == "Namespace");
    CHECK(plan.objects[1].displayName() == "networkpolicy/default-deny");
    CHECK(plan.objects[2].displayName() == "networkpolicy/allow-dns");
    CHECK(plan.objects[3].object["kind"] == "ResourceQuota");
}

TEST_CASE("plain NetworkPolicy pins resolved addresses as /32 and /128", "[project]") {
    auto options = validOptions();
    options.allowHosts = {parseAllowedHost("pypi.org:443"), parseAllowedHost("Outside.Example")};
    options.allowCidrs = {parseCidr("10.20.0.0/16")};
    FakeResolver resolver;
    resolver.answers["pypi.org"] = {"151.101.0.223", "2a04:4e42::223"};
    resolver.answers["outside.example"] = {"10.245.0.10"};
    auto plan = planProject(options, EgressMechanism::NetworkPolicy, resolver);
    const auto& egress = (*find(plan, "networkpolicy/allow-hosts"))["spec"]["egress"];
    REQUIRE(egress.size() == 2);
    CHECK(egress[0]["to"] == json::array({{{"ipBlock", {{"cidr", "151.101.0.223/32"}}}},
                                          {{"ipBlock", {{"cidr", "2a04:4e42::223/128"}}}}}));
    CHECK(egress[0]["ports"] == json::array({{{"protocol", "TCP"}, {"port", 443}}}));
    CHECK_FALSE(egress[1].contains("ports"));
    CHECK(plan.warnings.size() == 2);
    CHECK(plan.warnings[0].find("pinned") != std::string::npos);
    const auto& cidrs = (*find(plan, "networkpolicy/allow-cidrs"))["spec"]["egress"][0]["to"];
    CHECK(cidrs == json::array({{{"ipBlock", {{"cidr", "10.20.0.0/16"}}}}}));
    CHECK(find(plan, "egressfirewall/default") == nullptr);

    // What the project allows is recorded on its namespace, and sandbox verify's allowance
    // read back from it covers exactly the policies written here.
    const json& ns = *find(plan, "namespace/" + options.name);
    const auto allowance = rossoctl::model::projectAllowance(ns);
    json policies = json::array();
    for (const auto& planned : plan.objects)
        if (planned.object["kind"] == "NetworkPolicy") policies.push_back(planned.object);
    const json pod = {{"metadata", {{"name", "p"}, {"labels", json::object()}}}};
    CHECK(rossoctl::model::beyondAllowance(rossoctl::model::effectiveEgress(pod, policies),
                                           allowance, std::nullopt)
              .empty());
    CHECK(allowance.origin.find("10.20.0.0/16") != std::string::npos);
}

TEST_CASE("a name that does not resolve stops the plan", "[project]") {
    auto options = validOptions();
    options.allowHosts = {parseAllowedHost("nowhere.invalid")};
    FakeResolver resolver;
    CHECK_THROWS_WITH(planProject(options, EgressMechanism::NetworkPolicy, resolver),
                      Catch::Contains("nowhere.invalid"));
}

TEST_CASE("OVN: EgressFirewall allow by name, then deny, before the NetworkPolicy half",
          "[project]") {
    auto options = validOptions();
    options.allowHosts = {parseAllowedHost("pypi.org:443"), parseAllowedHost("github.com:22")};
    options.allowCidrs = {parseCidr("192.0.2.0/24")};
    FakeResolver resolver;
    auto plan = planProject(options, EgressMechanism::EgressFirewall, resolver);
    CHECK(resolver.asked.empty());
    auto order = names(plan);
    auto firewall = std::find(order.begin(), order.end(), "egressfirewall/default");
    auto half = std::find(order.begin(), order.end(), "networkpolicy/allow-hosts");
    REQUIRE(firewall != order.end());
    REQUIRE(half != order.end());
    CHECK(firewall < half);

    const auto& egress = (*find(plan, "egressfirewall/default"))["spec"]["egress"];
    REQUIRE(egress.size() == 5);
    CHECK(egress[0] == json{{"type", "Allow"},
                            {"to", {{"dnsName", "pypi.org"}}},
                            {"ports", json::array({{{"protocol", "TCP"}, {"port", 443}}})}});
    CHECK(egress[2] == json{{"type", "Allow"}, {"to", {{"cidrSelector", "192.0.2.0/24"}}}});
    CHECK(egress[3] == json{{"type", "Deny"}, {"to", {{"cidrSelector", "0.0.0.0/0"}}}});
    CHECK(egress[4] == json{{"type", "Deny"}, {"to", {{"cidrSelector", "::/0"}}}});

    const auto& rule = (*find(plan, "networkpolicy/allow-hosts"))["spec"]["egress"][0];
    CHECK(rule["to"][0]["ipBlock"]["cidr"] == "0.0.0.0/0");
    auto except = rule["to"][0]["ipBlock"]["except"];
    CHECK(std::find(except.begin(), except.end(), "169.254.0.0/16") != except.end());
    CHECK(std::find(except.begin(), except.end(), "10.0.0.0/8") != except.end());
    CHECK(rule["ports"] ==
          json::array({{{"protocol", "TCP"}, {"port", 22}}, {{"protocol", "TCP"}, {"port", 443}}}));
}

TEST_CASE("Cilium: toFQDNs with ports and the DNS proxy rule", "[project]") {
    auto options = validOptions();
    options.allowHosts = {parseAllowedHost("pypi.org:443"), parseAllowedHost("example.com")};
    FakeResolver resolver;
    auto plan = planProject(options, EgressMechanism::Cilium, resolver);
    const auto& policy = *find(plan, "ciliumnetworkpolicy/allow-hosts");
    CHECK(policy["apiVersion"] == "cilium.io/v2");
    CHECK(policy["spec"]["endpointSelector"] == json::object());
    const auto& egress = policy["spec"]["egress"];
    REQUIRE(egress.size() == 3);
    CHECK(egress[0]["toEndpoints"][0]["matchLabels"]["k8s:k8s-app"] == "kube-dns");
    CHECK(egress[0]["toPorts"][0]["rules"]["dns"][0]["matchPattern"] == "*");
    CHECK(egress[1]["toFQDNs"][0]["matchName"] == "pypi.org");
    CHECK(egress[1]["toPorts"][0]["ports"][0] == json{{"port", "443"}, {"protocol", "TCP"}});
    CHECK_FALSE(egress[2].contains("toPorts"));
    CHECK(find(plan, "networkpolicy/allow-hosts") == nullptr);
}

TEST_CASE("--no-dns leaves allow-dns out", "[project]") {
    auto options = validOptions();
    options.allowDns = false;
    FakeResolver resolver;
    auto plan = planProject(options, EgressMechanism::NetworkPolicy, resolver);
    CHECK(find(plan, "networkpolicy/allow-dns") == nullptr);
}

TEST_CASE("host arguments", "[project]") {
    CHECK(parseAllowedHost("PyPI.org.").host == "pypi.org");
    CHECK_FALSE(parseAllowedHost("pypi.org").port.has_value());
    CHECK(*parseAllowedHost("pypi.org:8443").port == 8443);
    CHECK_THROWS_AS(parseAllowedHost("pypi.org:0"), rossoctl::UsageError);
    CHECK_THROWS_AS(parseAllowedHost("pypi.org:http"), rossoctl::UsageError);
    CHECK_THROWS_WITH(parseAllowedHost("10.0.0.1:443"),
                      Catch::Contains("--allow-cidr 10.0.0.1/32"));
    CHECK_THROWS_WITH(parseAllowedHost("[2001:db8::1]:443"), Catch::Contains("--allow-cidr"));
    CHECK_THROWS_WITH(parseAllowedHost("*.example.com"), Catch::Contains("wildcards"));
    CHECK_THROWS_AS(parseAllowedHost("bad_host"), rossoctl::UsageError);
    CHECK_THROWS_AS(parseAllowedHost(""), rossoctl::UsageError);
    CHECK_THROWS_AS(parseAllowedHost("1.2.3"), rossoctl::UsageError);
    // Walk 6: a URL pasted whole was called "an address or a range".
    CHECK_THROWS_WITH(parseAllowedHost("http://outside.rossoctl.test/"),
                      "--allow-host \"http://outside.rossoctl.test/\" is a URL: give its host and "
                      "port, --allow-host outside.rossoctl.test:80");
    CHECK_THROWS_WITH(parseAllowedHost("https://pypi.org:8443/simple"),
                      Catch::EndsWith("--allow-host pypi.org:8443"));
    CHECK_THROWS_WITH(parseAllowedHost("https://pypi.org"),
                      Catch::EndsWith("--allow-host pypi.org:443"));
}

TEST_CASE("CIDR arguments, IPv4 and IPv6", "[project]") {
    CHECK(parseCidr("10.0.0.0/8") == "10.0.0.0/8");
    CHECK(parseCidr("192.0.2.7") == "192.0.2.7/32");
    CHECK(parseCidr("2001:DB8::/32") == "2001:db8::/32");
    CHECK(parseCidr("2001:db8::1") == "2001:db8::1/128");
    CHECK(parseCidr("0.0.0.0/0") == "0.0.0.0/0");
    CHECK_THROWS_WITH(parseCidr("10.0.0.1/8"), Catch::Contains("did you mean 10.0.0.0/8"));
    CHECK_THROWS_WITH(parseCidr("2001:db8::1/32"), Catch::Contains("2001:db8::/32"));
    CHECK_THROWS_AS(parseCidr("10.0.0.0/33"), rossoctl::UsageError);
    CHECK_THROWS_AS(parseCidr("2001:db8::/129"), rossoctl::UsageError);
    CHECK_THROWS_AS(parseCidr("300.0.0.0/8"), rossoctl::UsageError);
    CHECK_THROWS_AS(parseCidr("10.0.0.0/"), rossoctl::UsageError);
    CHECK_THROWS_AS(parseCidr("example.com/24"), rossoctl::UsageError);
}

TEST_CASE("project options are checked before anything is sent", "[project]") {
    auto check = [](auto change) {
        ProjectOptions options;
        options.name = "team1";
        change(options);
        validateProjectOptions(options);
    };
    CHECK_NOTHROW(check([](ProjectOptions&) {}));
    CHECK_THROWS_AS(check([](ProjectOptions& o) { o.name = "Team1"; }), rossoctl::UsageError);
    CHECK_THROWS_AS(check([](ProjectOptions& o) { o.name = "kube-system"; }), rossoctl::UsageError);
    CHECK_THROWS_AS(check([](ProjectOptions& o) { o.name = "default"; }), rossoctl::UsageError);
    CHECK_THROWS_AS(check([](ProjectOptions& o) { o.cpu = "four"; }), rossoctl::UsageError);
    CHECK_THROWS_AS(check([](ProjectOptions& o) { o.memory = "0"; }), rossoctl::UsageError);
    CHECK_THROWS_AS(check([](ProjectOptions& o) { o.pods = "-1"; }), rossoctl::UsageError);
    CHECK_THROWS_AS(check([](ProjectOptions& o) { o.defaultLifetime = "1d"; }),
                    rossoctl::UsageError);
    CHECK_THROWS_AS(check([](ProjectOptions& o) { o.podSecurity = "strict"; }),
                    rossoctl::UsageError);
    CHECK_THROWS_WITH(check([](ProjectOptions& o) { o.containerCpu = "3"; }),
                      Catch::Contains("--container-cpu 3 is larger than --max-container-cpu 2"));
    CHECK_THROWS_AS(check([](ProjectOptions& o) { o.maxContainerMemory = "16Gi"; }),
                    rossoctl::UsageError);
    CHECK_THROWS_WITH(check([](ProjectOptions& o) {
                          o.allowDns = false;
                          o.allowHosts = {parseAllowedHost("pypi.org")};
                      }),
                      Catch::Contains("--no-dns"));
    CHECK_THROWS_AS(parseEgressMechanism("calico"), rossoctl::UsageError);

    ProjectOptions small;
    small.name = "tiny";
    small.cpu = "1";
    small.memory = "1Gi";
    validateProjectOptions(small);
    CHECK(small.maxContainerCpu == "1");
    CHECK(small.maxContainerMemory == "1Gi");
}

TEST_CASE("policies in words", "[project]") {
    FakeResolver resolver;
    auto options = validOptions();
    options.allowHosts = {parseAllowedHost("pypi.org:443")};
    auto plan = planProject(options, EgressMechanism::EgressFirewall, resolver);
    CHECK(describePolicy(*find(plan, "networkpolicy/default-deny")) ==
          std::vector<std::string>{"denies all ingress", "denies all egress"});
    auto dns = describePolicy(*find(plan, "networkpolicy/allow-dns"));
    REQUIRE(dns.size() == 1);
    CHECK(dns[0].find("kube-dns") != std::string::npos);
    CHECK(dns[0].find("UDP/53, TCP/53") != std::string::npos);
    auto firewall = describePolicy(*find(plan, "egressfirewall/default"));
    CHECK(firewall.front() == "allow pypi.org on TCP/443");
    CHECK(firewall[1] == "deny 0.0.0.0/0 on all ports");
}
