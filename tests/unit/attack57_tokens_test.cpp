// Attack 57's token findings: a service-account token spelled out by the names of Services,
// which the pod reads in its env through service links (T5) and as PTR answers of the cluster
// DNS (T5b), and by the keys of annotations or labels a downwardAPI volume shows (T6). Each was
// a pass before. Every token here is synthetic (verify_fixtures::jwt, a made-up signature).
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/external_names.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::verify;
using namespace rossoctl::testing;

namespace attack57_tokens {

const std::string kIssuer = "https://kubernetes.default.svc.cluster.local";

std::string token57() {
    std::string token = verify_fixtures::jwt(
        {{"aud", {kIssuer}},
         {"exp", 1765000000},
         {"iat", 1764990000},
         {"iss", kIssuer},
         {"kubernetes.io",
          {{"namespace", "atk57-x"}, {"serviceaccount", {{"name", "atk-tenant"}, {"uid", "u-7"}}}}},
         {"nbf", 1764990000},
         {"sub", "system:serviceaccount:atk57-x:atk-tenant"}});
    token.erase(token.rfind('.') + 1);
    for (int i = 0; i < 342; ++i) token += "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_"[(i * 5) % 38];
    return token;
}

std::string hex57(const std::string& text) {
    std::string hex;
    for (unsigned char c : text) hex += fmt::format("{:02x}", c);
    return hex;
}

// As svclinks.yaml: Services `sNN-<59 hex>` in namespace `ns`, with cluster IPs 10.96.222.N+1.
// `scramble`: a name's tag is not its place (svcptr: the pod walks the IPs, not the names).
std::vector<ServiceName> tokenServices(const std::string& token, const std::string& ns,
                                       bool scramble = false) {
    const std::string hex = hex57(token);
    std::vector<ServiceName> services;
    for (size_t at = 0, i = 0; at < hex.size(); at += 59, ++i) {
        const size_t tag = scramble ? (i * 7 + 3) % 97 : i;
        services.push_back({ns,
                            fmt::format("s{:02}-{}", tag, hex.substr(at, 59)),
                            fmt::format("10.96.222.{}", i + 1),
                            {}});
    }
    return services;
}

ExternalNames listed(std::vector<ServiceName> services, const std::string& othersProblem = "") {
    ExternalNames names;
    names.read = true;
    names.ns = "team1";
    names.othersProblem = othersProblem;
    names.names = std::move(services);
    std::sort(names.names.begin(), names.names.end(), [](const auto& a, const auto& b) {
        return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
    });
    return names;
}

json podWithLinks(const json& links) {
    json pod = verify_fixtures::hardenedPod("uid");
    pod["spec"].erase("enableServiceLinks");  // null: left to the API's default, on
    if (!links.is_null()) pod["spec"]["enableServiceLinks"] = links;
    return pod;
}

bool printsNone(const Finding& finding, const std::string& secret) {
    for (const auto& line : finding.evidence)
        for (size_t at = 0; at + 16 <= secret.size(); at += 8)
            if (line.find(secret.substr(at, 16)) != std::string::npos) return false;
    return true;
}

}  // namespace attack57_tokens

using namespace attack57_tokens;

TEST_CASE("attack57 T5: a token over the names of the pod's namespace's Services, in its env",
          "[verify][attack57]") {
    const std::string token = token57();
    const auto services = tokenServices(token, "team1");
    REQUIRE(services.size() > 10);
    for (const auto& service : services)
        CHECK(credentialShape(service.name, kIssuer).verdict == Verdict::Pass);
    for (const json& links : {json(), json(true)}) {
        const Finding finding = serviceNamesStatic(podWithLinks(links), listed(services), kIssuer);
        INFO(json(finding.evidence).dump());
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "the names of namespace team1's"));
        CHECK(mentions(finding, "in the pod's env (service links)"));
        CHECK(printsNone(finding, token));
        CHECK(printsNone(finding, hex57(token)));
    }
    // Service links off: still read, as PTR answers.
    const Finding off = serviceNamesStatic(podWithLinks(false), listed(services), kIssuer);
    CHECK(off.verdict == Verdict::Fail);
    CHECK(mentions(off, "as PTR answers of the cluster DNS"));
    CHECK_FALSE(mentions(off, "service links"));
}

TEST_CASE("attack57 T5b: a token over Service names in cluster IP order, any namespace",
          "[verify][attack57]") {
    const std::string token = token57();
    // The names' tags out of order: only the cluster IPs put the pieces back in order.
    const auto services = tokenServices(token, "atk57-x", true);
    const Finding finding = serviceNamesStatic(podWithLinks(false), listed(services), kIssuer);
    INFO(json(finding.evidence).dump());
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "the names of namespace atk57-x's"));
    CHECK(printsNone(finding, hex57(token)));
    // Spread over two namespaces, by cluster IP: only all of them joined hold it.
    auto spread = tokenServices(token, "atk57-x", true);
    for (size_t i = 0; i < spread.size(); i += 2) spread[i].ns = "atk57-y";
    const Finding both = serviceNamesStatic(podWithLinks(false), listed(spread), kIssuer);
    INFO(json(both.evidence).dump());
    CHECK(both.verdict == Verdict::Fail);
    CHECK(mentions(both, "the names of all"));
}

TEST_CASE("attack57 T5: a token over one Service's port names, in the env (service links)",
          "[verify][attack57]") {
    const std::string token = token57(), hex = hex57(token);
    // Port names of at most 15 characters: `pNN-<11 hex>`, as many ports as it takes.
    ServiceName web{"team1", "web", "10.96.0.7", {}};
    for (size_t at = 0, i = 0; at < hex.size(); at += 11, ++i)
        web.ports.push_back(fmt::format("p{:03}-{}", i, hex.substr(at, 11)));
    const Finding links = serviceNamesStatic(podWithLinks(json()), listed({web}), kIssuer);
    INFO(json(links.evidence).dump());
    CHECK(links.verdict == Verdict::Fail);
    CHECK(mentions(links, "the port names of Service team1/web"));
    CHECK(printsNone(links, hex));
    // Over two Services' ports, in env order (A before B).
    ServiceName a{"team1", "a", "10.96.0.8", {}}, b{"team1", "b", "10.96.0.9", {}};
    for (size_t i = 0; i < web.ports.size(); ++i)
        (i < web.ports.size() / 2 ? a : b).ports.push_back(web.ports[i]);
    const Finding two = serviceNamesStatic(podWithLinks(json()), listed({b, a}), kIssuer);
    INFO(json(two.evidence).dump());
    CHECK(two.verdict == Verdict::Fail);
    // (Service a's half alone is already the start of a token's claims.)
    CHECK(mentions(two, "the port names of Service team1/a"));
    CHECK(printsNone(two, hex));
    // No service links: port names are not in the env (the pod would have to guess them for SRV).
    CHECK(serviceNamesStatic(podWithLinks(false), listed({web}), kIssuer).verdict == Verdict::Pass);
}

TEST_CASE("attack57 T5: ordinary Service names pass and are counted", "[verify][attack57]") {
    const std::vector<ServiceName> ordinary = {{"team1", "web", "10.96.0.7", {"http"}},
                                               {"team1", "db-primary", "10.96.0.8", {}},
                                               {"team1", "headless", "None", {}},
                                               {"other", "kube-dns", "10.96.0.10", {}}};
    const Finding finding = serviceNamesStatic(podWithLinks(json()), listed(ordinary), kIssuer);
    INFO(json(finding.evidence).dump());
    CHECK(finding.verdict == Verdict::Pass);
    CHECK(mentions(finding, "in the names of 4 Services of every namespace"));
    CHECK(mentions(finding, "namespace team1's with their port names, in its env"));
    CHECK(serviceNamesStatic(podWithLinks(json()), ExternalNames(), kIssuer).evidence.empty());
}

TEST_CASE("attack57 T5: sandbox verify reads every Service's name", "[verify][attack57]") {
    const std::string token = token57();
    std::vector<json> items;
    for (const auto& service : tokenServices(token, "team1"))
        items.push_back({{"metadata", {{"name", service.name}, {"namespace", service.ns}}},
                         {"spec", {{"type", "ClusterIP"}, {"clusterIP", service.clusterIP}}}});
    auto tokenCheck = [](TestHost& host) {
        return verify_fixtures::verdicts(
            printedJson(host.out.str()))["service-account-token"]["static"];
    };
    SECTION("listed: fail, naming the Services, never the token") {
        TestHost host;
        host.server.onJson("GET", "/api/v1/services", 200, verify_fixtures::list(items));
        verify_fixtures::serveHardened(host, "curl");
        CHECK(verify_fixtures::runVerifyJson(host, {"--no-restart"}) == 3);
        const json check = tokenCheck(host);
        INFO(check.dump());
        CHECK(check["result"] == "fail");
        CHECK_THAT(check["evidence"].dump(), Catch::Contains("the names of namespace team1's"));
        for (size_t at = 0; at + 16 <= token.size(); at += 8)
            CHECK(host.out.str().find(token.substr(at, 16)) == std::string::npos);
    }
    SECTION("not listed: unproven, saying the names were not read") {
        TestHost host;
        for (const char* path : {"/api/v1/services", "/api/v1/namespaces/team1/services"})
            host.server.on("GET", path, 403,
                           R"({"kind":"Status","code":403,"reason":"Forbidden",)"
                           R"("message":"services is forbidden"})");
        verify_fixtures::serveHardened(host, "curl");
        verify_fixtures::runVerifyJson(host, {"--no-restart"});
        const json check = tokenCheck(host);
        CHECK(check["result"] == "unproven");
        CHECK_THAT(check["evidence"].dump(),
                   Catch::Contains("the Services of namespace team1 could not be listed") &&
                       Catch::Contains("service links"));
    }
}

namespace attack57_tokens {

// annkeys: the token hex-encoded over the prefixes of keys `aNN.<hex>.<hex>.<hex>.<hex>/x`
// (each prefix under 253 characters), value "1", shown by a downwardAPI volume.
json tokenInKeys(const std::string& token, const std::string& field) {
    json pod = verify_fixtures::hardenedPod("uid");
    const std::string hex = hex57(token);
    json map = json::object();
    for (size_t at = 0, i = 0; at < hex.size(); at += 240, ++i) {
        std::string key = fmt::format("a{:02}", i);
        for (size_t label = at; label < std::min(at + 240, hex.size()); label += 60)
            key += "." + hex.substr(label, 60);
        REQUIRE(key.size() <= 253);
        map[key + "/x"] = "1";
    }
    pod["metadata"][field] = map;
    pod["spec"]["volumes"].push_back(
        {{"name", "meta"},
         {"downwardAPI",
          {{"items", {{{"path", field}, {"fieldRef", {{"fieldPath", "metadata." + field}}}}}}}}});
    pod["spec"]["containers"][0]["volumeMounts"].push_back(
        {{"name", "meta"}, {"mountPath", "/meta"}});
    return pod;
}

}  // namespace attack57_tokens

TEST_CASE("attack57 T6: a token over annotation or label keys a downwardAPI volume shows",
          "[verify][attack57]") {
    const std::string token = token57();
    for (const std::string field : {"annotations", "labels"}) {
        const json pod = tokenInKeys(token, field);
        for (const auto& [key, value] : pod["metadata"][field].items())
            CHECK(credentialShape(key, kIssuer).verdict == Verdict::Pass);
        const Finding finding = credentialsStatic(pod, {}, kIssuer, std::nullopt);
        INFO(json(finding.evidence).dump());
        CHECK(finding.verdict == Verdict::Fail);
        CHECK(mentions(finding, "pod volumes meta " + field + " keys joined"));
        CHECK(printsNone(finding, hex57(token)));
    }
    // The hex over the names of keys tagged `aNN-` (a key's name is at most 63 characters).
    json tagged = verify_fixtures::hardenedPod("uid");
    const std::string hex = hex57(token);
    for (size_t at = 0, i = 0; at < hex.size(); at += 59, ++i)
        tagged["metadata"]["annotations"][fmt::format("x/a{:02}-{}", i, hex.substr(at, 59))] = "1";
    tagged["spec"]["volumes"].push_back(
        {{"name", "meta"},
         {"downwardAPI",
          {{"items", {{{"path", "a"}, {"fieldRef", {{"fieldPath", "metadata.annotations"}}}}}}}}});
    const Finding words = credentialsStatic(tagged, {}, kIssuer, std::nullopt);
    INFO(json(words.evidence).dump());
    CHECK(words.verdict == Verdict::Fail);
    CHECK(mentions(words, "pod volumes meta annotations keys' words joined"));
    // A key alone holding a credential (a bootstrap token as a key's prefix) is read as a value.
    json pod = verify_fixtures::hardenedPod("uid");
    pod["metadata"]["annotations"] = {{"k7q2xz.4fj8wq0vbn3m6c1d/x", "1"}};
    pod["spec"]["volumes"].push_back(
        {{"name", "meta"},
         {"downwardAPI",
          {{"items", {{{"path", "a"}, {"fieldRef", {{"fieldPath", "metadata.annotations"}}}}}}}}});
    const Finding one = credentialsStatic(pod, {}, kIssuer, std::nullopt);
    INFO(json(one.evidence).dump());
    CHECK(one.verdict != Verdict::Pass);
    CHECK(mentions(one, "the pod's annotation key 1"));
    // Ordinary keys pass.
    json plain = verify_fixtures::hardenedPod("uid");
    plain["metadata"]["annotations"] = {{"app.kubernetes.io/name", "agent"},
                                        {"team.example.com/owner", "orders"}};
    plain["spec"]["volumes"].push_back(
        {{"name", "meta"},
         {"downwardAPI",
          {{"items", {{{"path", "a"}, {"fieldRef", {{"fieldPath", "metadata.annotations"}}}}}}}}});
    CHECK(credentialsStatic(plain, {}, kIssuer, std::nullopt).verdict == Verdict::Pass);
}

TEST_CASE("attack 58 T9, T10: group IDs and host alias addresses enough for a token are unproven",
          "[verify][false-pass]") {
    json pod = verify_fixtures::hardenedPod("uid");
    const auto judged = [&] { return credentialsStatic(pod, {}, kIssuer, std::nullopt); };
    SECTION("a pod's few settings pass") {
        pod["spec"]["securityContext"]["supplementalGroups"] = {1000, 2000};
        pod["spec"]["hostAliases"] = {{{"ip", "10.0.0.1"}, {"hostnames", {"db"}}}};
        CHECK(judged().verdict == Verdict::Pass);
    }
    SECTION("341 group IDs (id -G) carry an edit token") {
        json groups = json::array();
        for (int i = 0; i < 341; ++i) groups.push_back((i + 1) * 65536 + 0x6579);
        pod["spec"]["securityContext"]["supplementalGroups"] = groups;
        const auto finding = judged();
        CHECK(finding.verdict == Verdict::Unproven);
        CHECK(mentions(finding, "1364 bytes in 341 supplementalGroups (id -G)"));
    }
    SECTION("165 host aliases (/etc/hosts) carry an edit token") {
        json aliases = json::array();
        for (int i = 0; i < 165; ++i)
            aliases.push_back({{"ip", fmt::format("101.121.{}.{}", i / 256, i % 256)},
                               {"hostnames", {fmt::format("h{:03}", i)}}});
        pod["spec"]["hostAliases"] = aliases;
        const auto finding = judged();
        CHECK(finding.verdict == Verdict::Unproven);
        CHECK(mentions(finding, "660 bytes in 165 hostAliases addresses (/etc/hosts)"));
    }
}

TEST_CASE("review 58 T10b, T11: the numbers' budget is shared, and file modes count",
          "[verify][false-pass]") {
    json pod = verify_fixtures::hardenedPod("uid");
    // 16 IPv6 aliases (256 bytes) under any per-field count.
    json aliases = json::array();
    for (int i = 0; i < 16; ++i)
        aliases.push_back({{"ip", fmt::format("fd00::{:x}", i)}, {"hostnames", {"h"}}});
    pod["spec"]["hostAliases"] = aliases;
    CHECK(credentialsStatic(pod, {}, kIssuer, std::nullopt).verdict == Verdict::Unproven);
    pod["spec"].erase("hostAliases");
    // 607 downward API items, a mode each (stat -c %a).
    json items = json::array();
    for (int i = 0; i < 607; ++i)
        items.push_back({{"path", fmt::format("f{:04}", i)},
                         {"fieldRef", {{"fieldPath", "metadata.name"}}},
                         {"mode", 0400 + (i % 64)}});
    pod["spec"]["volumes"].push_back({{"name", "modes"}, {"downwardAPI", {{"items", items}}}});
    const Finding finding = credentialsStatic(pod, {}, kIssuer, std::nullopt);
    CHECK(finding.verdict == Verdict::Unproven);
    CHECK(mentions(finding, "607 volume file modes (stat)"));
}

TEST_CASE("attack 58 T7: a token in Service port numbers, two bytes each, read through SRV",
          "[verify][false-pass]") {
    using namespace attack57_tokens;
    const std::string token = token57();
    // As svcports.json: ports p000.. over Services s0..s5, port = byte pair; no Service repeats.
    std::vector<ServiceName> services;
    for (int s = 0; s < 6; ++s)
        services.push_back({"team1", fmt::format("s{}", s), fmt::format("10.96.1.{}", s + 1), {}});
    for (size_t at = 0, i = 0; at < token.size(); at += 2, ++i) {
        const int high = static_cast<unsigned char>(token[at]);
        const int low = at + 1 < token.size() ? static_cast<unsigned char>(token[at + 1]) : 0;
        const std::string name = fmt::format("p{:03}", i);
        services[i % 6].ports.push_back(name);
        services[i % 6].portNumbers.emplace_back(name, high * 256 + low);
    }
    const Finding finding =
        serviceNamesStatic(podWithLinks(json(false)), listed(services), kIssuer);
    INFO(json(finding.evidence).dump());
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "the port numbers of namespace team1's 6 Services (read as SRV"));
    // Ordinary ports pass.
    ServiceName web{"team1", "web", "10.96.0.7", {"http", "https"}};
    web.portNumbers = {{"http", 80}, {"https", 443}};
    CHECK(serviceNamesStatic(podWithLinks(json(false)), listed({web}), kIssuer).verdict ==
          Verdict::Pass);
}

TEST_CASE(
    "review 58 T7x, T12: the namespace's port numbers and cluster IPs past the numbers' "
    "budget are unproven, in whatever encoding",
    "[verify][false-pass]") {
    using namespace attack57_tokens;
    const std::string token = token57();
    // The token's bytes XORed with 0x5a: no byte search reads them.
    std::vector<ServiceName> services;
    for (int s = 0; s < 6; ++s)
        services.push_back({"team1", fmt::format("s{}", s), fmt::format("10.96.1.{}", s + 1), {}});
    for (size_t at = 0, i = 0; at < token.size(); at += 2, ++i) {
        const int high = static_cast<unsigned char>(token[at]) ^ 0x5a;
        const int low =
            (at + 1 < token.size() ? static_cast<unsigned char>(token[at + 1]) : 0) ^ 0x5a;
        services[i % 6].portNumbers.emplace_back(fmt::format("p{:03}", i), high * 256 + low);
    }
    Finding finding = serviceNamesStatic(podWithLinks(json(false)), listed(services), kIssuer);
    INFO(json(finding.evidence).dump());
    CHECK(finding.verdict == Verdict::Unproven);
    CHECK(mentions(finding,
                   "namespace team1's Services, which its editors choose and the pod "
                   "reads through the cluster DNS, can carry"));
    // A hundred Sandboxes' headless Services, all on 8080, carry one number: two bytes.
    std::vector<ServiceName> boxes;
    for (int s = 0; s < 100; ++s) {
        boxes.push_back({"team1", fmt::format("box{}", s), "None", {}});
        boxes.back().portNumbers = {{"http", 8080}};
    }
    CHECK(serviceNamesStatic(podWithLinks(json(false)), listed(boxes), kIssuer).verdict ==
          Verdict::Pass);
    // Eight Services of one port each, eight numbers and eight cluster IPs: 128 + 8 x 3 + 8 x 20
    // bits, 39 bytes.
    std::vector<ServiceName> ordinary;
    for (int s = 0; s < 8; ++s) {
        ordinary.push_back(
            {"team1", fmt::format("web{}", s), fmt::format("10.96.2.{}", s + 1), {}});
        ordinary.back().portNumbers = {{"http", 8080 + s}};
        ordinary.back().clusterIPCount = 1;
    }
    CHECK(serviceNamesStatic(podWithLinks(json(false)), listed(ordinary), kIssuer).verdict ==
          Verdict::Pass);
    // A Service of another namespace's (not counted) beside them.
    auto more = ordinary;
    more.push_back({"other", "big", "10.96.3.1", {}});
    for (int p = 0; p < 100; ++p) more.back().portNumbers.emplace_back("", 1000 + p);
    CHECK(serviceNamesStatic(podWithLinks(json(false)), listed(more), kIssuer).verdict ==
          Verdict::Pass);
    // Dual-stack: a second cluster IP each, 20 more bytes (review 59 #5).
    auto dual = ordinary;
    for (auto& service : dual) service.clusterIPCount = 2;
    CHECK(serviceNamesStatic(podWithLinks(json(false)), listed(dual), kIssuer).verdict ==
          Verdict::Unproven);
    // One budget with the pod's own numbers: three supplementalGroups, 12 more bytes (review 59
    // #6).
    json grouped = podWithLinks(json(false));
    grouped["spec"]["securityContext"]["supplementalGroups"] = {1001, 1002, 1003};
    const Finding both = serviceNamesStatic(grouped, listed(ordinary), kIssuer);
    CHECK(both.verdict == Verdict::Unproven);
    CHECK(mentions(both, "with the pod's own numbers, 12 bytes in 3 supplementalGroups"));
    // Eight more Services on eight more numbers: 16 numbers and 16 cluster IPs, 80 bytes.
    for (int s = 0; s < 8; ++s) {
        ordinary.push_back(
            {"team1", fmt::format("api{}", s), fmt::format("10.96.4.{}", s + 1), {}});
        ordinary.back().portNumbers = {{"http", 9080 + s}};
        ordinary.back().clusterIPCount = 1;
    }
    CHECK(serviceNamesStatic(podWithLinks(json(false)), listed(ordinary), kIssuer).verdict ==
          Verdict::Unproven);
}

TEST_CASE("attack 59 T1: four IPv6 hostAliases, 64 bytes, hold an ES256 signature: unproven",
          "[verify][false-pass]") {
    json pod = verify_fixtures::hardenedPod("uid");
    json aliases = json::array();
    for (int i = 0; i < 4; ++i)
        aliases.push_back({{"ip", fmt::format("2001:db8:{:x}::{:x}", 0x1000 + i, 0xbeef + i)},
                           {"hostnames", {fmt::format("cache-{}.internal", i)}}});
    pod["spec"]["hostAliases"] = aliases;
    const Finding finding = credentialsStatic(pod, {}, kIssuer, std::nullopt);
    CHECK(finding.verdict == Verdict::Unproven);
    CHECK(mentions(finding, "64 bytes in 4 hostAliases addresses (/etc/hosts)"));
    pod["spec"]["hostAliases"].erase(3);  // three: 48 bytes, a pod's settings
    CHECK(credentialsStatic(pod, {}, kIssuer, std::nullopt).verdict == Verdict::Pass);
}

TEST_CASE("review 59 #14: a token in the image the kubelet names for the gate is never printed",
          "[verify][attack57]") {
    // A guard: the evidence's redaction of credential runs catches it (the image is among the
    // strings verify redacts whole, too).
    const std::string token = token57();
    json pod = verify_fixtures::hardenedPod("pod-uid-1");
    pod["status"]["initContainerStatuses"][0]["image"] = "tenant.example/" + token;
    TestHost host;
    verify_fixtures::serveHardened(host, "curl", verify_fixtures::sandbox(), pod);
    verify_fixtures::runVerifyJson(host, {"--no-restart"});
    INFO(host.out.str() << host.err.str());
    const json egress = verify_fixtures::verdicts(printedJson(host.out.str()))["egress"];
    CHECK_THAT(egress["live"]["evidence"].dump(), Catch::Contains("the kubelet says it ran"));
    for (size_t at = 0; at + 16 <= token.size(); at += 8)
        CHECK(host.out.str().find(token.substr(at, 16)) == std::string::npos);
}

TEST_CASE(
    "attack 59 T2: a signature in containers' resource quantities counts against the "
    "numbers' budget; round limits do not",
    "[verify][false-pass]") {
    json pod = verify_fixtures::hardenedPod("uid");
    CHECK(credentialsStatic(pod, {}, kIssuer, std::nullopt).verdict == Verdict::Pass);
    // Five containers, 120 bits each in memory and ephemeral-storage, as the attack wrote them.
    for (int i = 0; i < 5; ++i) {
        json container = pod["spec"]["containers"][0];
        container["name"] = fmt::format("helper-{}", i);
        container["resources"] = {
            {"limits",
             {{"memory", std::to_string(268435456ULL + 9876543ULL * (i + 1))},
              {"ephemeral-storage", std::to_string((1ULL << 50) + 123456789012ULL * (i + 3))}}},
            {"requests",
             {{"memory", std::to_string(67108864ULL + 7654321ULL * (i + 1))},
              {"ephemeral-storage", std::to_string(1ULL + 987654321ULL * (i + 7))}}}};
        pod["spec"]["containers"].push_back(container);
    }
    const Finding finding = credentialsStatic(pod, {}, kIssuer, std::nullopt);
    INFO(json(finding.evidence).dump());
    CHECK(finding.verdict == Verdict::Unproven);
    CHECK(mentions(finding,
                   "resource quantities beyond round values (cgroup files, the "
                   "downward API)"));
    // Many containers of round-looking limits, a byte of choice in each (129Mi, 132Mi, ...):
    // the allowance does not grow with them.
    json many = verify_fixtures::hardenedPod("uid");
    for (int i = 0; i < 30; ++i) {
        json container = many["spec"]["containers"][0];
        container["name"] = fmt::format("c-{}", i);
        container["resources"] = {
            {"limits",
             {{"memory", fmt::format("{}Mi", 129 + i * 3)}, {"cpu", fmt::format("{}m", 101 + i)}}}};
        many["spec"]["containers"].push_back(container);
    }
    CHECK(credentialsStatic(many, {}, kIssuer, std::nullopt).verdict == Verdict::Unproven);
}

TEST_CASE("attack 59 T3: a signature in user and group ids counts against the numbers' budget",
          "[verify][false-pass]") {
    json pod = verify_fixtures::hardenedPod("uid");
    pod["spec"]["securityContext"]["fsGroup"] = 65532;
    CHECK(credentialsStatic(pod, {}, kIssuer, std::nullopt).verdict == Verdict::Pass);
    // fsGroup and the uid and gid of the agent and eight init containers: 18 ids.
    pod["spec"]["securityContext"]["fsGroup"] = 1700000001;
    for (int i = 0; i < 8; ++i) {
        json init = pod["spec"]["containers"][0];
        init["name"] = fmt::format("init-{}", i);
        init["securityContext"]["runAsUser"] = 1000000000 + 7919 * (i + 1);
        init["securityContext"]["runAsGroup"] = 1100000000 + 104729 * (i + 1);
        pod["spec"]["initContainers"].push_back(init);
    }
    const Finding finding = credentialsStatic(pod, {}, kIssuer, std::nullopt);
    INFO(json(finding.evidence).dump());
    CHECK(finding.verdict == Verdict::Unproven);
    CHECK(mentions(finding, "distinct user and group ids (id)"));
}

TEST_CASE("attack 65 T1: a token in pods' hostnames that a headless Service publishes",
          "[verify][attack57]") {
    const std::string token = token57();
    const std::string encoded = verify_fixtures::base32(token, true);
    ExternalNames names =
        listed({{"atk65-t", "h", "None", {}}, {"atk65-t", "web", "10.96.0.7", {}}});
    EgressInputs egress;
    for (size_t at = 0, i = 0; at < encoded.size(); at += 60, ++i)
        egress.podHostnames.push_back({"atk65-t", fmt::format("c{:02}", i),
                                       fmt::format("x{:02}{}", i, encoded.substr(at, 60)), "h",
                                       fmt::format("10.250.0.{}", 40 - i)});
    REQUIRE(egress.podHostnames.size() > 10);
    const Finding finding = serviceNamesStatic(podWithLinks(false), names, egress, kIssuer);
    INFO(json(finding.evidence).dump());
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "the hostnames of 21 pods that headless Service atk65-t/h publishes"));
    CHECK(printsNone(finding, encoded));

    // Published only under a headless Service of that name: a subdomain with no such Service,
    // or one with a cluster IP, gives no PTR answer.
    for (auto& published : egress.podHostnames) published.subdomain = "web";
    CHECK(serviceNamesStatic(podWithLinks(false), names, egress, kIssuer).verdict == Verdict::Pass);

    // Pods not listed while a headless Service is there: what it publishes is not known.
    EgressInputs unlisted;
    unlisted.hostListenersUnread = "pods not listed (forbidden)";
    const Finding unread = serviceNamesStatic(podWithLinks(false), names, unlisted, kIssuer);
    CHECK(unread.verdict == Verdict::Unproven);
    CHECK(mentions(unread, "the pod hostnames that 1 headless Service publish"));

    // A StatefulSet's pods (hostname = pod name) are searched and pass.
    EgressInputs stateful;
    for (int i = 0; i < 3; ++i)
        stateful.podHostnames.push_back({"atk65-t", fmt::format("web-{}", i),
                                         fmt::format("web-{}", i), "h",
                                         fmt::format("10.250.0.{}", 9 + i)});
    const Finding ordinary = serviceNamesStatic(podWithLinks(false), names, stateful, kIssuer);
    CHECK(ordinary.verdict == Verdict::Pass);
    CHECK(mentions(ordinary, "2 Services and 3 pod hostnames"));
}

TEST_CASE("review 67 H5: a decimal token over tagged hostnames", "[verify][attack57]") {
    // int.from_bytes(token) in base 10, 60 digits a label behind a two-digit ordinal tag.
    const std::string digits = verify_fixtures::asDecimal(token57());
    ExternalNames names = listed({{"atk67", "h", "None", {}}});
    EgressInputs egress;
    for (size_t at = 0, i = 0; at < digits.size(); at += 60, ++i)
        egress.podHostnames.push_back({"atk67", fmt::format("c{:02}", i),
                                       fmt::format("x{:02}{}", i, digits.substr(at, 60)), "h",
                                       fmt::format("10.250.1.{}", i + 1)});
    const Finding finding = serviceNamesStatic(podWithLinks(false), names, egress, kIssuer);
    INFO(json(finding.evidence).dump());
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "written as one decimal number"));
}
