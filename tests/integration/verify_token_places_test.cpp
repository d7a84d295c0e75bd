// Attack 54 on the local cluster (T1, T2, X1): a service-account token where the pod reads it and
// verify did not look (an env var's name, dnsConfig, a ConfigMap's key names, hex in hostAliases,
// a mount path's segments, ExternalName Services read through the cluster DNS), and verify
// printing the mount path's token in its report. The token is synthetic (service-account claims,
// a made-up signature): verify judges by shape.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "harness.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/model/sandbox.hpp"
#include "verify_report.hpp"

using harness::checkNamed;
using harness::evidenceOf;
using nlohmann::json;
namespace resources = rossoctl::kube::resources;

namespace {

std::string base64Url(const std::string& text) {
    std::string encoded = rossoctl::kube::base64Encode(text);
    while (!encoded.empty() && encoded.back() == '=') encoded.pop_back();
    for (char& c : encoded) c = c == '+' ? '-' : c == '/' ? '_' : c;
    return encoded;
}

// The API server's shape: its claims in its order, an RS256-long signature (made up).
std::string syntheticToken(const std::string& ns) {
    const json claims = {
        {"aud", {"https://kubernetes.default.svc.cluster.local"}},
        {"exp", 1765000000},
        {"iat", 1764990000},
        {"iss", "https://kubernetes.default.svc.cluster.local"},
        {"jti", "0b4c1f2e-6a7d-4e59-9c1b-3f2a8d7e6c5b"},
        {"kubernetes.io",
         {{"namespace", ns}, {"serviceaccount", {{"name", "atk-reader"}, {"uid", "u-1"}}}}},
        {"nbf", 1764990000},
        {"sub", "system:serviceaccount:" + ns + ":atk-reader"}};
    std::string signature;
    for (int i = 0; i < 342; ++i)
        signature += "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_"[(i * 7) % 38];
    return base64Url(R"({"alg":"RS256","kid":"atk54"})") + "." + base64Url(claims.dump()) + "." +
           signature;
}

std::vector<std::string> parts(const std::string& text, size_t size) {
    std::vector<std::string> pieces;
    for (size_t at = 0; at < text.size(); at += size) pieces.push_back(text.substr(at, size));
    return pieces;
}

// attack54 kinds.py: the header, the claims and the signature in parts of 100.
std::vector<std::string> tokenPieces(const std::string& token) {
    const size_t dot = token.find('.'), second = token.find('.', dot + 1);
    std::vector<std::string> pieces = {token.substr(0, dot)};
    for (auto& piece : parts(token.substr(dot + 1, second - dot - 1), 100)) pieces.push_back(piece);
    for (auto& piece : parts(token.substr(second + 1), 100)) pieces.push_back(piece);
    return pieces;
}

json& podSpec(json& sandbox) {
    return sandbox["spec"]["podTemplate"]["spec"];
}
json& agent(json& sandbox) {
    return podSpec(sandbox)["containers"][0];
}

void createReady(const std::string& ns, const json& sandbox) {
    harness::admin().create(harness::sandboxRef(), ns, sandbox);
    const std::string name = sandbox["metadata"]["name"];
    REQUIRE(harness::eventually(
        [&] {
            auto found = harness::admin().getIfExists(harness::sandboxRef(), ns, name);
            return found && rossoctl::model::sandboxReady(*found);
        },
        180));
}

std::string hexOf(const std::string& text) {
    std::string hex;
    for (unsigned char c : text) hex += fmt::format("{:02x}", c);
    return hex;
}

// Whether any 16 characters of the token's claims or signature are in `text`.
bool showsPart(const std::string& text, const std::string& token) {
    const size_t from = token.find('.') + 1;
    for (size_t at = from; at + 16 <= token.size(); at += 8)
        if (text.find(token.substr(at, 16)) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("sandbox verify: a token where the pod reads it beyond env values (attack 54 T1)",
          "[verify][token-places]") {
    harness::TestNamespace project("tok54", false);
    const std::string ns = project.name();
    {
        auto created = harness::rossoctl({"project", "create", ns});
        INFO(created.out << created.err);
        REQUIRE(created.exitCode == 0);
    }
    const std::string token = syntheticToken(ns);
    // The key names, made before the pod starts (one written later is unproven).
    json keys = json::object();
    const auto pieces = tokenPieces(token);
    for (size_t i = 0; i < pieces.size(); ++i) keys[fmt::format("{}.{}", i + 1, pieces[i])] = "";
    harness::admin().create(resources::configMaps(), ns,
                            {{"apiVersion", "v1"},
                             {"kind", "ConfigMap"},
                             {"metadata", {{"name", "atk-keys"}}},
                             {"data", keys}});
    json sandbox = harness::smallSandbox(ns, "places", "busybox:1.36");
    agent(sandbox)["env"] = json::array({{{"name", token}, {"value", "1"}}});
    podSpec(sandbox)["dnsConfig"] = {{"options", {{{"name", "atk"}, {"value", token}}}}};
    podSpec(sandbox)["volumes"].push_back(
        {{"name", "keys"}, {"configMap", {{"name", "atk-keys"}}}});
    agent(sandbox)["volumeMounts"].push_back(
        {{"name", "keys"}, {"mountPath", "/keys"}, {"readOnly", true}});
    const auto labels = parts(hexOf(token), 60);
    json hostnames = json::array();
    for (size_t i = 0; i < labels.size(); i += 4) {
        std::string name = fmt::format("h{}", i / 4);
        for (size_t j = i; j < std::min(i + 4, labels.size()); ++j) name += "." + labels[j];
        hostnames.push_back(name);
    }
    podSpec(sandbox)["hostAliases"] = {{{"ip", "127.0.0.2"}, {"hostnames", hostnames}}};
    createReady(ns, sandbox);

    auto verified = harness::rossoctl(
        {"sandbox", "verify", "places", "-n", ns, "--no-restart", "-o", "json"}, {}, {}, 300);
    INFO(verified.out << verified.err);
    CHECK(verified.exitCode == 3);
    const json report = json::parse(verified.out);
    const json& check = checkNamed(report, "service-account-token");
    CHECK(check["result"] == "fail");
    const std::string evidence = evidenceOf(check);
    CHECK_THAT(evidence, Catch::Contains("container agent env[0].name holds") &&
                             Catch::Contains("pod dnsConfig.options atk holds") &&
                             Catch::Contains("configmap/atk-keys key name") &&
                             Catch::Contains("pod hostAliases"));
    CHECK_FALSE(showsPart(verified.out + verified.err, token));
}

TEST_CASE(
    "sandbox verify: a token over a mount path's segments is found and never printed "
    "(attack 54 T1, X1)",
    "[verify][token-places]") {
    harness::TestNamespace project("tok54m", false);
    const std::string ns = project.name();
    {
        auto created = harness::rossoctl({"project", "create", ns});
        INFO(created.out << created.err);
        REQUIRE(created.exitCode == 0);
    }
    const std::string token = syntheticToken(ns);
    std::string path = "/tmp";
    for (const auto& piece : tokenPieces(token)) path += "/" + piece;
    json sandbox = harness::smallSandbox(ns, "mounted", "busybox:1.36");
    agent(sandbox)["volumeMounts"].push_back(
        {{"name", "tmp"}, {"mountPath", path}, {"subPath", "m"}});
    createReady(ns, sandbox);

    // The whole run, restart included: the canaries under the mount path and the note on what
    // the restart lost name it.
    auto verified =
        harness::rossoctl({"sandbox", "verify", "mounted", "-n", ns, "-o", "json"}, {}, {}, 300);
    INFO(verified.exitCode);
    CHECK(verified.exitCode == 3);
    CHECK_FALSE(showsPart(verified.out + verified.err, token));
    const json report = json::parse(verified.out);
    const json& check = checkNamed(report, "service-account-token");
    CHECK(check["result"] == "fail");
    CHECK_THAT(evidenceOf(check), Catch::Contains("container agent volumeMounts tmp mountPath"));
    const std::string survives = evidenceOf(checkNamed(report, "nothing-survives"));
    CHECK_THAT(survives, Catch::Contains("/tmp/<redacted: looks like a credential>"));
    // The pod did mount it: the path holds the token for it to read.
    CHECK(checkNamed(report, "nothing-survives")["result"] == "pass");
}

namespace {

// `input` through python3's compressor `expression` (of `data`), as an agent's tools write it.
std::string compressedWith(const std::string& expression, const std::string& input) {
    char path[] = "/tmp/rossoctl-t3-XXXXXX";
    const int fd = ::mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, input.data(), input.size()) == static_cast<ssize_t>(input.size()));
    ::close(fd);
    const std::string command = fmt::format(
        "python3 -c 'import sys, lzma, bz2\ndata = open(sys.argv[1], \"rb\").read()\n"
        "sys.stdout.buffer.write({})' {}",
        expression, path);
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    const int status = ::pclose(pipe);
    ::unlink(path);
    REQUIRE(status == 0);
    return out;
}

std::string rot13(std::string text) {
    for (char& c : text) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>('a' + (c - 'a' + 13) % 26);
        if (c >= 'A' && c <= 'Z') c = static_cast<char>('A' + (c - 'A' + 13) % 26);
    }
    return text;
}

}  // namespace

TEST_CASE(
    "sandbox verify: a token xz-, bzip2-compressed or rot13'd in a mounted ConfigMap "
    "(attack 56 T3)",
    "[verify][token-places]") {
    harness::TestNamespace project("tok56", false);
    const std::string ns = project.name();
    {
        auto created = harness::rossoctl({"project", "create", ns});
        INFO(created.out << created.err);
        REQUIRE(created.exitCode == 0);
    }
    const std::string token = syntheticToken(ns);
    // As `kubectl create configmap --from-file` keeps them: binary files in binaryData.
    harness::admin().create(
        resources::configMaps(), ns,
        {{"apiVersion", "v1"},
         {"kind", "ConfigMap"},
         {"metadata", {{"name", "atk-blobs"}}},
         {"binaryData",
          {{"a", rossoctl::kube::base64Encode(compressedWith("lzma.compress(data)", token))},
           {"b", rossoctl::kube::base64Encode(compressedWith("bz2.compress(data)", token))}}},
         {"data", {{"c", rot13(token)}}}});
    json sandbox = harness::smallSandbox(ns, "blobs", "busybox:1.36");
    podSpec(sandbox)["volumes"].push_back(
        {{"name", "blobs"}, {"configMap", {{"name", "atk-blobs"}}}});
    agent(sandbox)["volumeMounts"].push_back(
        {{"name", "blobs"}, {"mountPath", "/blobs"}, {"readOnly", true}});
    createReady(ns, sandbox);

    auto verified = harness::rossoctl(
        {"sandbox", "verify", "blobs", "-n", ns, "--no-restart", "-o", "json"}, {}, {}, 300);
    INFO(verified.out << verified.err);
    CHECK(verified.exitCode == 3);
    const json report = json::parse(verified.out);
    const json& check = checkNamed(report, "service-account-token");
    CHECK(check["result"] == "fail");
    const std::string evidence = evidenceOf(check);
    CHECK_THAT(
        evidence,
        Catch::Contains("configmap/atk-blobs key a") && Catch::Contains("xz-compressed") &&
            Catch::Contains("configmap/atk-blobs key b") && Catch::Contains("bzip2-compressed") &&
            Catch::Contains("configmap/atk-blobs key c") && Catch::Contains("rotated by 13"));
    CHECK_FALSE(showsPart(verified.out + verified.err, token));
}

namespace {

// Lets the cluster's "limited" user do in ns what `rules` say (a Role and its binding).
void grantLimited(const std::string& ns, const std::string& name, const json& rules) {
    harness::admin().create({"rbac.authorization.k8s.io", "v1", "roles", "Role", true}, ns,
                            {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                             {"kind", "Role"},
                             {"metadata", {{"name", name}}},
                             {"rules", rules}});
    harness::admin().create(
        {"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true}, ns,
        {{"apiVersion", "rbac.authorization.k8s.io/v1"},
         {"kind", "RoleBinding"},
         {"metadata", {{"name", name}}},
         {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", name}}},
         {"subjects", json::array({{{"apiGroup", "rbac.authorization.k8s.io"},
                                    {"kind", "User"},
                                    {"name", "limited"}}})}});
}

}  // namespace

TEST_CASE(
    "sandbox verify: a token hex-encoded over ExternalName Services, read through the cluster "
    "DNS, is found and never printed (attack 54 T2)",
    "[verify][token-places][outage]") {
    // [outage]: run alone, as the cases that stop a component do: while its Services exist,
    // every pod of the cluster can read the token, and every other verify fails (rightly).
    harness::TestNamespace project("tok54d", false);
    harness::TestNamespace elsewhere("tok54e");
    const std::string ns = project.name();
    harness::createProject(ns);
    // As in the attack: 4 labels of 60 hex digits and "x" in each Service, none in the pod; in
    // another namespace and in the pod's own.
    const std::string token = syntheticToken(ns);
    const std::string hex = hexOf(token);
    const auto labels = parts(hex, 60);
    for (const std::string& in : {elsewhere.name(), ns})
        for (size_t i = 0; i < labels.size(); i += 4) {
            std::string externalName;
            for (size_t j = i; j < std::min(i + 4, labels.size()); ++j)
                externalName += labels[j] + ".";
            harness::admin().create(
                resources::services(), in,
                {{"apiVersion", "v1"},
                 {"kind", "Service"},
                 {"metadata", {{"name", fmt::format("atk-t{}", i / 4)}}},
                 {"spec", {{"type", "ExternalName"}, {"externalName", externalName + "x"}}}});
        }
    createReady(ns, harness::smallSandbox(ns, "dns", "busybox:1.36"));

    // The "no egress" pod reads them: the cluster DNS answers with the externalName.
    const std::string pod = rossoctl::model::sandboxPodName(harness::getSandbox(ns, "dns"));
    auto lookedUp =
        harness::run({harness::kubectlPath(), "exec", "-n", ns, pod, "--", "nslookup",
                      "-type=CNAME", fmt::format("atk-t0.{}.svc.cluster.local", elsewhere.name())},
                     {}, {{"KUBECONFIG", harness::kubeconfigPath()}}, 60);
    INFO(lookedUp.exitCode << ": " << lookedUp.out << lookedUp.err);
    CHECK_THAT(lookedUp.out, Catch::Contains(labels[0]));

    auto verify = [&](const std::map<std::string, std::string>& env) {
        auto verified = harness::rossoctl(
            {"sandbox", "verify", "dns", "-n", ns, "--no-restart", "-o", "json"}, {}, env, 300);
        INFO(verified.out << verified.err);
        CHECK(verified.exitCode == 3);
        const std::string printed = verified.out + verified.err;
        CHECK_FALSE(showsPart(printed, token));
        for (size_t at = 0; at + 16 <= hex.size(); at += 8)
            CHECK(printed.find(hex.substr(at, 16)) == std::string::npos);
        return json::parse(verified.out);
    };
    {
        // Every namespace's, read by the admin.
        const json report = verify({});
        const json& check = checkNamed(report, "service-account-token");
        CHECK(check["result"] == "fail");
        CHECK_THAT(evidenceOf(check),
                   Catch::Contains(fmt::format("Service {}/atk-t", elsewhere.name())) &&
                       Catch::Contains(fmt::format("Service {}/atk-t", ns)));
        CHECK_THAT(evidenceOf(checkNamed(report, "egress")),
                   Catch::Contains("the cluster DNS is also a way in"));
    }
    // A project user who may not list Services anywhere: unproven, never a pass.
    const json reads = json::array(
        {{{"apiGroups", {"agents.x-k8s.io"}},
          {"resources", {"sandboxes"}},
          {"verbs", {"get", "list", "watch"}}},
         {{"apiGroups", {""}},
          {"resources", {"pods", "serviceaccounts", "resourcequotas", "secrets", "configmaps"}},
          {"verbs", {"get", "list", "watch"}}},
         {{"apiGroups", {""}}, {"resources", {"pods/exec"}}, {"verbs", {"create", "get"}}},
         {{"apiGroups", {"networking.k8s.io"}},
          {"resources", {"networkpolicies"}},
          {"verbs", {"get", "list"}}}});
    grantLimited(ns, "verify-reader", reads);
    const std::map<std::string, std::string> limited = {
        {"KUBECONFIG", harness::limitedKubeconfigPath()}};
    {
        const json report = verify(limited);
        const json& check = checkNamed(report, "service-account-token");
        CHECK(check["result"] == "unproven");
        CHECK_THAT(evidenceOf(check),
                   Catch::Contains(fmt::format("the Services of namespace {} could not be", ns)));
    }
    // One who may list its own namespace's: those are read, and the rest is said to be unread.
    grantLimited(
        ns, "verify-services",
        json::array(
            {{{"apiGroups", {""}}, {"resources", {"services"}}, {"verbs", {"get", "list"}}}}));
    {
        const json report = verify(limited);
        const json& check = checkNamed(report, "service-account-token");
        CHECK(check["result"] == "fail");
        const std::string evidence = evidenceOf(check);
        // Alone, or (this user may not read the cluster's issuer) only joined in name order.
        CHECK_THAT(evidence, Catch::Contains(fmt::format("Service {}/atk-t", ns)) ||
                                 Catch::Contains(fmt::format("namespace {}'s", ns)));
        CHECK_THAT(evidence, Catch::Contains(fmt::format(
                                 "Services of namespaces other than {} were not read", ns)));
        CHECK(evidence.find(elsewhere.name()) == std::string::npos);
    }
    // Gone before the shards that verify in parallel start (a namespace goes in its own time).
    for (const std::string& in : {elsewhere.name(), ns})
        for (size_t i = 0; i < labels.size(); i += 4)
            harness::admin().remove(resources::services(), in, fmt::format("atk-t{}", i / 4));
}
