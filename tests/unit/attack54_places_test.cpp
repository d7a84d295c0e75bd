// Attack 54's token findings: a plain service-account token where the pod reads it and verify did
// not look (T1: an env var's name, a dnsConfig option, a mount path's segments, a ConfigMap's key
// names, hex in hostAliases), reversed or base32 (T3), the first piece of its claims alone,
// verify printing such a token in its evidence (X1), and a token hex-encoded over the externalName
// of ExternalName Services, which the pod reads through the cluster DNS (T2). Each was a pass (or
// printed) before. Every token here is synthetic (verify_fixtures::jwt, a made-up signature).
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/external_names.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::verify;
using namespace rossoctl::testing;

namespace {

const std::string kIssuer = "https://kubernetes.default.svc.cluster.local";

// A token of the API server's shape: its claims in the order it writes them, an RS256-long
// signature.
std::string clusterToken() {
    std::string token = verify_fixtures::jwt(
        {{"aud", {kIssuer}},
         {"exp", 1765000000},
         {"iat", 1764990000},
         {"iss", kIssuer},
         {"jti", "0b4c1f2e-6a7d-4e59-9c1b-3f2a8d7e6c5b"},
         {"kubernetes.io",
          {{"namespace", "atk-54"}, {"serviceaccount", {{"name", "atk-reader"}, {"uid", "u-1"}}}}},
         {"nbf", 1764990000},
         {"sub", "system:serviceaccount:atk-54:atk-reader"}});
    token.erase(token.rfind('.') + 1);
    for (int i = 0; i < 342; ++i) token += "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_"[(i * 7) % 38];
    return token;
}

Finding judged(const json& pod, const std::vector<CredentialSource>& sources = {}) {
    return credentialsStatic(pod, sources, kIssuer, std::nullopt);
}

json pod() {
    return verify_fixtures::hardenedPod("uid");
}

std::vector<std::string> parts(const std::string& text, size_t size) {
    std::vector<std::string> pieces;
    for (size_t at = 0; at < text.size(); at += size) pieces.push_back(text.substr(at, size));
    return pieces;
}

std::string hexOf(const std::string& text) {
    std::string hex;
    for (unsigned char c : text) hex += fmt::format("{:02x}", c);
    return hex;
}

// No 16 characters of the token in any evidence line.
bool printsNoPart(const Finding& finding, const std::string& token) {
    for (const auto& line : finding.evidence)
        for (size_t at = 0; at + 16 <= token.size(); at += 8)
            if (line.find(token.substr(at, 16)) != std::string::npos) return false;
    return true;
}

// attack54 kinds.py mntpath: /tmp/<header>/<payload in 100s>/<signature in 100s>.
std::string tokenPath(const std::string& token, const std::string& root = "/tmp") {
    const size_t dot = token.find('.'), second = token.find('.', dot + 1);
    std::string path = root + "/" + token.substr(0, dot);
    for (const auto& piece : parts(token.substr(dot + 1, second - dot - 1), 100))
        path += "/" + piece;
    for (const auto& piece : parts(token.substr(second + 1), 100)) path += "/" + piece;
    return path;
}

}  // namespace

TEST_CASE("attack54 T1: a token as an env var's name", "[verify][attack54]") {
    const std::string token = clusterToken();
    json envName = pod();
    envName["spec"]["containers"][0]["env"] = json::array({{{"name", token}, {"value", "1"}}});
    const Finding finding = judged(envName);
    INFO(json(finding.evidence).dump());
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "container agent env[0].name holds"));
    CHECK(printsNoPart(finding, token));
    // Split over two adjacent names.
    const size_t half = token.size() / 2 + 3;
    envName["spec"]["containers"][0]["env"] = json::array(
        {{{"name", token.substr(0, half)}, {"value", "1"}}, {{"name", token.substr(half)}}});
    CHECK(judged(envName).verdict == Verdict::Fail);
}

TEST_CASE("attack54 T1: a token in dnsConfig (resolv.conf) and hostname fields",
          "[verify][attack54]") {
    const std::string token = clusterToken();
    json options = pod();
    options["spec"]["dnsConfig"] = {{"options", {{{"name", "atk"}, {"value", token}}}}};
    const Finding finding = judged(options);
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "pod dnsConfig.options atk holds"));
    CHECK(printsNoPart(finding, token));
    json working = pod();
    working["spec"]["containers"][0]["workingDir"] = "/w/" + token;
    CHECK(judged(working).verdict == Verdict::Fail);
    // The Sandbox's template: the pod it makes next is judged the same way.
    json sandbox = verify_fixtures::sandbox();
    sandbox["spec"]["podTemplate"]["spec"]["dnsConfig"] = options["spec"]["dnsConfig"];
    CHECK(judged(podFromTemplate(sandbox, pod())).verdict == Verdict::Fail);
}

TEST_CASE("attack54 T1: a token split over a mount path's segments", "[verify][attack54]") {
    const std::string token = clusterToken();
    json mounted = pod();
    mounted["spec"]["volumes"].push_back({{"name", "tmp"}, {"emptyDir", json::object()}});
    mounted["spec"]["containers"][0]["volumeMounts"].push_back(
        {{"name", "tmp"}, {"mountPath", tokenPath(token)}, {"subPath", "m"}});
    const Finding finding = judged(mounted);
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "container agent volumeMounts tmp mountPath"));
    CHECK(printsNoPart(finding, token));
    // The same with the dots gone and the parts cut at 64: the joined segments still hold it.
    std::string undotted = token;
    std::erase(undotted, '.');
    std::string path = "/tmp";
    for (const auto& piece : parts(undotted, 64)) path += "/" + piece;
    mounted["spec"]["containers"][0]["volumeMounts"][1]["mountPath"] = path;
    CHECK(judged(mounted).verdict == Verdict::Fail);
}

TEST_CASE("attack54 T1: a token as the key names of a mounted ConfigMap", "[verify][attack54]") {
    const std::string token = clusterToken();
    const size_t dot = token.find('.'), second = token.find('.', dot + 1);
    std::vector<std::string> pieces = {token.substr(0, dot)};
    for (auto& piece : parts(token.substr(dot + 1, second - dot - 1), 100)) pieces.push_back(piece);
    for (auto& piece : parts(token.substr(second + 1), 100)) pieces.push_back(piece);
    json data = json::object();
    for (size_t i = 0; i < pieces.size(); ++i) data[fmt::format("{}.{}", i + 1, pieces[i])] = "";
    json mounting = pod();
    mounting["spec"]["volumes"].push_back(
        {{"name", "keys"}, {"configMap", {{"name", "atk-keys"}}}});
    const std::vector<CredentialSource> keys = {
        {"configmap", "atk-keys", json{{"data", data}}, ""}};
    const Finding finding = judged(mounting, keys);
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "configmap/atk-keys key name"));
    CHECK(printsNoPart(finding, token));
    // Keys that hold no part of the token alone: the signature's and the claims' tails, the
    // claims cut where no piece decodes to their start. Joined, they are the token again.
    json cut = json::object();
    const auto thirds = parts(token, token.size() / 3 + 1);
    for (size_t i = 0; i < thirds.size(); ++i) cut[fmt::format("{}_{}", i, thirds[i])] = "x";
    const std::vector<CredentialSource> cutKeys = {
        {"configmap", "atk-keys", json{{"data", cut}}, ""}};
    CHECK(judged(mounting, cutKeys).verdict == Verdict::Fail);
}

TEST_CASE("attack54 T1: a token hex-encoded over hostAliases' labels", "[verify][attack54]") {
    const std::string token = clusterToken();
    const auto labels = parts(hexOf(token), 60);
    json hostnames = json::array();
    for (size_t i = 0; i < labels.size(); i += 4) {
        std::string name = fmt::format("h{}", i / 4);
        for (size_t j = i; j < std::min(i + 4, labels.size()); ++j) name += "." + labels[j];
        hostnames.push_back(name);
    }
    json aliased = pod();
    aliased["spec"]["hostAliases"] = {{{"ip", "127.0.0.2"}, {"hostnames", hostnames}}};
    const Finding finding = judged(aliased);
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "pod hostAliases"));
    CHECK(printsNoPart(finding, hexOf(token)));
}

TEST_CASE("attack54: the first piece of a token's claims alone", "[verify][attack54]") {
    const std::string token = clusterToken();
    const size_t dot = token.find('.');
    const std::string first = token.substr(dot + 1, 100);
    json env = pod();
    env["spec"]["containers"][0]["env"] = json::array({{{"name", "P"}, {"value", first}}});
    CHECK(judged(env).verdict == Verdict::Fail);
    CHECK(credentialShape(first, "").verdict == Verdict::Fail);  // whatever the issuer
    // A header alone, and other base64 JSON naming the API server, are no token's part.
    CHECK(credentialShape(token.substr(0, dot), kIssuer).verdict == Verdict::Pass);
    const std::string config =
        rossoctl::kube::base64Encode(R"({"server":"https://kubernetes.default.svc:443"})");
    CHECK(credentialShape(config, kIssuer).verdict == Verdict::Pass);
}

TEST_CASE("attack54 T3: a token reversed, or base32-encoded", "[verify][attack54]") {
    const std::string token = clusterToken();
    json env = pod();
    env["spec"]["containers"][0]["env"] =
        json::array({{{"name", "TOKR"}, {"value", std::string(token.rbegin(), token.rend())}}});
    const Finding reversed = judged(env);
    CHECK(reversed.verdict == Verdict::Fail);
    CHECK(mentions(reversed, "reversed"));
    // RFC 4648 base32, as python's b32encode writes it.
    const std::string base32 = verify_fixtures::base32(token);
    CHECK(credentialShape(base32, kIssuer).verdict == Verdict::Fail);
    CHECK(credentialShape("tok: " + base32 + "\n", kIssuer).what.find("base32") !=
          std::string::npos);
}

TEST_CASE("attack54 T1: ordinary spec strings still pass", "[verify][attack54]") {
    json ordinary = pod();
    ordinary["spec"]["dnsConfig"] = {{"options", {{{"name", "ndots"}, {"value", "2"}}}},
                                     {"searches", {"svc.cluster.local", "corp.example"}}};
    ordinary["spec"]["hostAliases"] = {
        {{"ip", "10.0.0.5"}, {"hostnames", {"registry.corp.example", "git.corp.example"}}}};
    ordinary["spec"]["hostname"] = "agent-7f3c9a1b2d";
    ordinary["spec"]["containers"][0]["volumeMounts"].push_back(
        {{"name", "workspace"},
         {"mountPath", "/home/agent/.cache/pip/wheels/3f/9a/1b2c3d4e5f60718293a4b5c6d7e8f9"}});
    ordinary["spec"]["containers"][0]["env"] =
        json::array({{{"name", "PIP_INDEX_URL"}, {"value", "https://pypi.org/simple"}},
                     {{"name", "GIT_SHA"}, {"value", "3f9a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2"}}});
    ordinary["spec"]["volumes"].push_back({{"name", "cfg"}, {"configMap", {{"name", "cfg"}}}});
    const std::vector<CredentialSource> config = {
        {"configmap", "cfg",
         json{{"metadata",
               {{"name", "cfg"},
                {"creationTimestamp", "2023-01-01T00:00:00Z"},
                {"managedFields", {{{"manager", "kubectl"}, {"time", "2023-01-01T00:00:00Z"}}}}}},
              {"data", {{"settings.yaml", "a: 1"}, {"requirements.txt", "requests==2.31"}}}},
         ""}};
    const Finding finding = judged(ordinary, config);
    INFO(json(finding.evidence).dump());
    CHECK(finding.verdict == Verdict::Pass);
    CHECK(mentions(finding, "mount paths"));
}

TEST_CASE("attack54 X1: a token in a mount path is never printed", "[verify][attack54]") {
    const std::string token = clusterToken();
    const std::string path = tokenPath(token);
    const std::string redacted = redactedCredentials(path);
    CHECK(redacted == std::string("/tmp/") + kRedactedCredential);
    CHECK(redactedCredentials(path + "/.rossoctl-canary-0123456789abcdef") == redacted);
    CHECK(redactedCredentials("/workspace") == "/workspace");
    CHECK(redactedCredentials("/home/agent/.cache") == "/home/agent/.cache");
    const std::string line = "token " + token + " and /workspace";
    CHECK(redactedCredentialRuns(line) ==
          std::string("token ") + kRedactedCredential + " and /workspace");
    // The restart note as the model writes it, the pod's strings redacted inside it.
    const std::string note =
        "what pod p wrote to /workspace, " + path + " is gone with it (emptyDirs)";
    const std::string shown = redactedWithin(note, {path, "/workspace"});
    CHECK(shown.find(token.substr(token.find('.') + 1, 40)) == std::string::npos);
    CHECK(shown.find("/workspace, /tmp/<redacted") != std::string::npos);
    // The canaries' evidence, gone or not.
    const std::string canary = path + "/.rossoctl-canary-0123456789abcdef";
    for (const std::string state : {"absent", "present"}) {
        ProbeOutput output;
        output.stdoutText = "rossoctl-" + state + "=" + canary + "\nrossoctl-done=1\n";
        const Finding finding = canariesAfterRestart(output, {canary}, "pod uid a → b");
        CHECK(printsNoPart(finding, token));
        CHECK(mentions(finding, kRedactedCredential));
    }
}

namespace {

// attack54 T2: the token hex-encoded, `perService` labels of 60 hex in each of Services
// `prefix`0, 1, ... of namespace `ns`, each name ending in ".x" as in the attack.
std::vector<ExternalNameService> hexServices(const std::string& token, const std::string& ns,
                                             size_t perService, const std::string& prefix,
                                             size_t first = 0) {
    const auto labels = parts(hexOf(token), 60);
    std::vector<ExternalNameService> services;
    for (size_t i = 0; i < labels.size(); i += perService) {
        std::string name;
        for (size_t j = i; j < std::min(i + perService, labels.size()); ++j)
            name += labels[j] + ".";
        services.push_back({ns, fmt::format("{}{}", prefix, first + i / perService), name + "x"});
    }
    return services;
}

ExternalNames readNames(std::vector<ExternalNameService> services,
                        const std::string& othersProblem = "", const std::string& problem = "") {
    ExternalNames names;
    names.read = true;
    names.ns = "team1";
    names.problem = problem;
    names.othersProblem = othersProblem;
    names.services = std::move(services);
    std::sort(names.services.begin(), names.services.end(), [](const auto& a, const auto& b) {
        return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
    });
    return names;
}

}  // namespace

TEST_CASE("attack54 T2: a token hex-encoded over ExternalName Services' externalNames",
          "[verify][attack54]") {
    const std::string token = clusterToken();
    // As in the attack: 6 Services of 4 labels each, in a namespace not the pod's.
    const Finding finding =
        externalNamesStatic(readNames(hexServices(token, "atk-54", 4, "atk-t")), kIssuer);
    INFO(json(finding.evidence).dump());
    CHECK(finding.verdict == Verdict::Fail);
    CHECK(mentions(finding, "Service atk-54/atk-t"));
    CHECK(printsNoPart(finding, token));
    CHECK(printsNoPart(finding, hexOf(token)));
    // No Service alone holds anything known: only the pieces joined in name order do (named
    // from atk-t8, so atk-t10 sorts first as text; as numbers count, atk-t8 does).
    auto twelve = hexServices(token, "atk-54", 2, "atk-t", 8);
    REQUIRE(twelve.size() > 10);
    const Finding joined = externalNamesStatic(readNames(twelve), kIssuer);
    INFO(json(joined.evidence).dump());
    CHECK(joined.verdict == Verdict::Fail);
    CHECK(mentions(joined, "the externalNames of namespace atk-54's"));
    CHECK(printsNoPart(joined, token));
    // The same pieces, each alone: nothing known.
    for (const auto& service : twelve)
        CHECK(credentialShape(service.externalName, kIssuer).verdict == Verdict::Pass);
}

TEST_CASE("attack54 T2: ordinary ExternalName Services pass; an unread namespace is said",
          "[verify][attack54]") {
    const std::vector<ExternalNameService> ordinary = {
        {"team1", "db", "db.corp.example.com"},
        {"team1", "git", "3f9a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2.git.corp.example"},
        {"other", "api", "api.eu-west-1.example.net"}};
    const Finding all = externalNamesStatic(readNames(ordinary), kIssuer);
    INFO(json(all.evidence).dump());
    CHECK(all.verdict == Verdict::Pass);
    CHECK(mentions(all, "in the externalName of 3 ExternalName Services of every namespace"));
    // Listing every namespace's refused: the pod's own is read, the rest is said, not judged.
    const Finding own = externalNamesStatic(
        readNames({ordinary[0], ordinary[1]}, "services is forbidden"), kIssuer);
    CHECK(own.verdict == Verdict::Pass);
    CHECK(mentions(own, "2 ExternalName Services of namespace team1"));
    CHECK(mentions(own, "namespaces other than team1 were not read"));
    // The pod's own namespace refused too: unproven.
    const Finding none = externalNamesStatic(
        readNames({}, "services is forbidden", "services is forbidden"), kIssuer);
    CHECK(none.verdict == Verdict::Unproven);
    CHECK(mentions(none, "the Services of namespace team1 could not be listed"));
}

TEST_CASE("attack54 T2: sandbox verify reads ExternalName Services, one list per scope",
          "[verify][attack54]") {
    const std::string token = clusterToken();
    auto serviceList = [](const std::vector<ExternalNameService>& services) {
        std::vector<json> items;
        for (const auto& service : services)
            items.push_back(
                {{"metadata", {{"name", service.name}, {"namespace", service.ns}}},
                 {"spec", {{"type", "ExternalName"}, {"externalName", service.externalName}}}});
        // A Service of another type carries none.
        items.push_back({{"metadata", {{"name", "web"}, {"namespace", "team1"}}},
                         {"spec", {{"type", "ClusterIP"}, {"clusterIP", "10.96.0.7"}}}});
        return verify_fixtures::list(items);
    };
    auto tokenCheck = [](TestHost& host) {
        return verify_fixtures::verdicts(
            printedJson(host.out.str()))["service-account-token"]["static"];
    };
    SECTION("every namespace's, where the user may list them") {
        TestHost host;
        host.server.onJson("GET", "/api/v1/services", 200,
                           serviceList(hexServices(token, "elsewhere", 4, "atk-t")));
        verify_fixtures::serveHardened(host, "curl");
        CHECK(verify_fixtures::runVerifyJson(host, {"--no-restart"}) == 3);
        const json check = tokenCheck(host);
        INFO(check.dump());
        CHECK(check["result"] == "fail");
        CHECK_THAT(check["evidence"].dump(), Catch::Contains("Service elsewhere/atk-t"));
        CHECK(verify_fixtures::listsOf(host, "/api/v1/services") == 1);
        CHECK(host.server.requestsTo("GET", "/api/v1/namespaces/team1/services").empty());
        for (size_t at = 0; at + 16 <= token.size(); at += 8)
            CHECK(host.out.str().find(token.substr(at, 16)) == std::string::npos);
    }
    SECTION("the pod's namespace's, when listing every namespace is refused") {
        TestHost host;
        host.server.on("GET", "/api/v1/services", 403,
                       R"({"kind":"Status","code":403,"reason":"Forbidden",)"
                       R"("message":"services is forbidden"})");
        host.server.onJson("GET", "/api/v1/namespaces/team1/services", 200,
                           serviceList(hexServices(token, "team1", 4, "atk-t")));
        verify_fixtures::serveHardened(host, "curl");
        verify_fixtures::runVerifyJson(host, {"--no-restart"});
        const json check = tokenCheck(host);
        INFO(check.dump());
        CHECK(check["result"] == "fail");
        CHECK_THAT(check["evidence"].dump(),
                   Catch::Contains("Service team1/atk-t") &&
                       Catch::Contains("namespaces other than team1 were not read"));
        CHECK(verify_fixtures::listsOf(host, "/api/v1/services") == 1);
        CHECK(verify_fixtures::listsOf(host, "/api/v1/namespaces/team1/services") == 1);
    }
    SECTION("neither: unproven") {
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
                   Catch::Contains("the Services of namespace team1 could not be listed"));
    }
}
