// Attack 53's false passes in the token check (F3, F4) and close variants of them: a token split
// over two env values, its claims alone, and a kubeconfig whose keys and dots are JSON or YAML
// escapes. Each was a pass before. Every token here is synthetic (verify_fixtures::jwt).
#include <catch2/catch.hpp>
#include <chrono>

#include "rossoctl/kube/base64.hpp"
#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::verify;
using namespace rossoctl::testing;

namespace {

const std::string kIssuer = "https://kubernetes.default.svc.cluster.local";

std::string clusterToken() {
    return verify_fixtures::jwt({{"iss", kIssuer},
                                 {"sub", "system:serviceaccount:atk-53:atk-reader"},
                                 {"aud", {kIssuer}},
                                 {"exp", 1765000000},
                                 {"kubernetes.io", {{"namespace", "atk-53"}}}});
}

// A token of another issuer (an OIDC provider): whether the cluster takes it is not known.
std::string otherToken() {
    return verify_fixtures::jwt(
        {{"iss", "https://idp.example"}, {"sub", "alice"}, {"aud", "kube"}, {"exp", 1765000000}});
}

Finding judged(const json& pod, const std::vector<CredentialSource>& sources = {}) {
    return credentialsStatic(pod, sources, kIssuer, std::nullopt);
}

json withEnv(const json& env) {
    json pod = verify_fixtures::hardenedPod("uid");
    pod["spec"]["containers"][0]["env"] = env;
    return pod;
}

json twoValues(const std::string& first, const std::string& second) {
    return withEnv(
        json::array({{{"name", "T1"}, {"value", first}}, {{"name", "T2"}, {"value", second}}}));
}

CredentialSource configMap(const std::string& text) {
    return {"configmap", "atk-kcfg", json{{"data", {{"config", text}}}}, ""};
}

json mountingConfigMap() {
    json pod = verify_fixtures::hardenedPod("uid");
    pod["spec"]["volumes"].push_back({{"name", "cfg"}, {"configMap", {{"name", "atk-kcfg"}}}});
    return pod;
}

Verdict ofConfigMap(const std::string& text) {
    return judged(mountingConfigMap(), {configMap(text)}).verdict;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

// /work/attack53/kcfg.py's output: json.dumps of a kubeconfig, then "users", "clusters" and the
// token's dots \u-escaped. kubectl reads it as is.
std::string escapedKubeconfig(const std::string& token) {
    const std::string text =
        R"({"apiVersion": "v1", "kind": "Config", "current-context": "c", "clusters": [{"name": )"
        R"("k", "cluster": {"server": "https://10.96.0.1", "certificate-authority-data": )"
        R"("TFMwdExTMUNSVWRKVGlCRFJWSlVTVVpKUTBGVVJTMHRMUzB0Q2c9PQ=="}}], "contexts": [{"name": )"
        R"("c", "context": {"cluster": "k", "user": "u"}}], "users": [{"name": "u", "user": )"
        R"({"token": ")" +
        token + R"("}}]})";
    std::string escaped = replaced(text, R"("users")", R"("\u0075sers")");
    escaped = replaced(escaped, R"("clusters")", R"("\u0063lusters")");
    return replaced(escaped, token, replaced(token, ".", "\\u002e"));
}

}  // namespace

TEST_CASE("attack53 F3: a token split over two env values at its first dot", "[verify]") {
    const std::string token = clusterToken();
    const size_t dot = token.find('.');
    const Finding split = judged(twoValues(token.substr(0, dot), token.substr(dot + 1)));
    CHECK(split.verdict == Verdict::Fail);
    CHECK(mentions(split, "container agent env T2 holds"));
    // The claims alone, with no signature after them: they still name the token's owner.
    const size_t second = token.find('.', dot + 1);
    CHECK(judged(twoValues("x", token.substr(dot + 1, second - dot - 1))).verdict == Verdict::Fail);
    // header.payload in one value, the signature in the next.
    CHECK(judged(twoValues(token.substr(0, second), token.substr(second + 1))).verdict ==
          Verdict::Fail);
    // The first dot left out (the pod puts it back): header and claims in one run.
    CHECK(judged(twoValues("x", token.substr(0, dot) + token.substr(dot + 1))).verdict ==
          Verdict::Fail);
}

TEST_CASE("attack53 F3: a token split at any point over adjacent env values", "[verify]") {
    const std::string token = clusterToken();
    // 10 characters into the claims: neither part decodes to them (the tail's base64 is out of
    // step), so only the two joined show the token.
    const size_t inPayload = token.find('.') + 11;
    const std::string head = token.substr(0, inPayload), tail = token.substr(inPayload);
    const Finding joined = judged(twoValues(head, tail));
    CHECK(joined.verdict == Verdict::Fail);
    CHECK(mentions(joined, "container agent env T1 and T2 joined"));
    CHECK(judged(twoValues(tail, head)).verdict == Verdict::Fail);  // the other order
    // Split at both dots, the dots left out: joined with '.' between.
    const size_t dot = token.find('.');
    CHECK(judged(twoValues(token.substr(0, dot) + "." + token.substr(dot + 1, 8),
                           token.substr(dot + 9)))
              .verdict == Verdict::Fail);
}

TEST_CASE("attack53 F3: JWT claims as JSON, plain or base64url, name the token's owner",
          "[verify]") {
    const std::string claims = R"({"aud":[")" + kIssuer + R"("],"exp":1765000000,"iss":")" +
                               kIssuer + R"(","sub":"system:serviceaccount:atk-53:atk-reader"})";
    CHECK(ofConfigMap(claims) == Verdict::Fail);
    CHECK(ofConfigMap("claims: " + claims + "\n") == Verdict::Fail);  // inside other text
    // Another issuer's claims without header: judged as its whole token is, unproven.
    const std::string other = otherToken();
    const size_t dot = other.find('.');
    CHECK(judged(twoValues("x", other.substr(dot + 1))).verdict == Verdict::Unproven);
}

TEST_CASE("attack53 F3 variants: a token in a URL query, percent-encoded", "[verify]") {
    const std::string url =
        "https://api.example/cb?access_token=" + replaced(clusterToken(), ".", "%2E") + "&state=1";
    CHECK(judged(twoValues("x", url)).verdict == Verdict::Fail);
}

TEST_CASE("attack53 F3: ordinary env values still pass, alone or joined", "[verify]") {
    const json env = json::array({{{"name", "PATH"}, {"value", "/usr/local/bin:/usr/bin:/bin"}},
                                  {{"name", "HEADER"}, {"value", "eyJhbGciOiJSUzI1NiJ9"}},
                                  {{"name", "CONFIG"}, {"value", R"({"iss_mode":"none"})"}},
                                  {{"name", "HOME"}, {"value", "/workspace"}},
                                  {{"name", "URL"}, {"value", "https://x/?q=a%20b"}}});
    CHECK(judged(withEnv(env)).verdict == Verdict::Pass);
}

TEST_CASE("attack53 F4: a kubeconfig with \\u-escaped keys and dots (kcfg.py)", "[verify]") {
    const std::string escaped = escapedKubeconfig(clusterToken());
    REQUIRE(escaped.find(R"("\u0075sers")") != std::string::npos);
    REQUIRE(escaped.find("\\u002e") != std::string::npos);
    CHECK(ofConfigMap(escaped) == Verdict::Fail);
    // The token no JWT (a static token file's): the kubeconfig's keys alone fail it.
    CHECK(ofConfigMap(escapedKubeconfig("0123456789abcdef0123456789abcdef")) == Verdict::Fail);
}

TEST_CASE("attack53 F4 variants: YAML escapes, surrogate pairs, flow style, single quotes",
          "[verify]") {
    // YAML double-quoted keys: \x, \U, and a surrogate pair before them for good measure.
    CHECK(ofConfigMap("\"\\U00000063lusters\": [{name: k, cluster: {server: \"https://k\"}}]\n"
                      "\"\\ud83d\\ude00\\x75sers\": []\n\"\\x75sers\": [{name: u, user: "
                      "{\"\\x74oken\": abc}}]\n") == Verdict::Fail);
    // Flow style, one line; the token under user in single quotes.
    CHECK(ofConfigMap("{clusters: [{name: k, cluster: {server: 'https://k'}}], users: [{name: "
                      "u, user: {'token': 'abc'}}]}") == Verdict::Fail);
    // A token folded over lines of a YAML double-quoted scalar (an escaped line break).
    const std::string token = clusterToken();
    CHECK(ofConfigMap("t: \"" + token.substr(0, 30) + "\\\n    " + token.substr(30) + "\"\n") ==
          Verdict::Fail);
    // The same kubeconfig kept as a JSON string inside JSON: escapes twice.
    const std::string twice = json(escapedKubeconfig(token)).dump();
    CHECK(ofConfigMap(R"({"kubeconfig": )" + twice + "}") == Verdict::Fail);
}

TEST_CASE("attack53: the escape and claims layers stay linear in a hostile value", "[verify]") {
    // 8 MiB of escapes, of eyJ runs and of "iss": keys: each read in one pass.
    std::string escapes, runs, keys;
    while (escapes.size() < (8u << 20)) escapes += "\\u0075\\\\u0075\\ud83d%2e";
    while (runs.size() < (8u << 20)) runs += "eyJpc3MiOiJ4In0.eyJ";
    while (keys.size() < (8u << 20)) keys += "{\"iss\": \"https://kubernetes.default.svc.";
    const auto start = std::chrono::steady_clock::now();
    for (const auto* value : {&escapes, &runs, &keys}) CHECK(ofConfigMap(*value) != Verdict::Fail);
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(took < std::chrono::seconds(20));
}
