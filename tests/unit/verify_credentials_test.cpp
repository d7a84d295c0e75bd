// Credentials the pod can read beyond mounted tokens and env values (issue 35, review H2):
// annotations the downward API shows, command lines, probe commands and headers, PEM client keys
// that the cluster's CA signed, and kubeconfigs or tokens kept base64-encoded.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <regex>

#include "pki_fixtures.hpp"
#include "rossoctl/kube/x509.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::verify;
using namespace rossoctl::testing;
using rossoctl::kube::base64Encode;
using rossoctl::testing::verify_fixtures::jwt;

namespace {

std::string serviceAccountToken() {
    return jwt({{"iss", "https://kubernetes.default.svc.cluster.local"},
                {"sub", "system:serviceaccount:team1:agent-bot"},
                {"kubernetes.io", {{"namespace", "team1"}}}});
}

const std::string kKubeconfig = R"(apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443"}
users:
- name: u
  user:
    client-key-data: c2VjcmV0
contexts: []
)";

json pod() {
    return verify_fixtures::hardenedPod("uid");
}

Finding judged(const json& pod, const std::vector<CredentialSource>& sources = {},
               const std::optional<std::string>& authorities = std::nullopt) {
    return credentialsStatic(pod, sources, "", authorities);
}

CredentialSource secretWith(const std::string& name, const json& plainData) {
    json data = json::object();
    for (const auto& [key, value] : plainData.items())
        data[key] = base64Encode(value.get<std::string>());
    // Created before the pod started, as a server says it (without a time: unproven).
    return {
        "secret", name,
        json{{"type", "kubernetes.io/tls"},
             {"metadata",
              {{"name", name},
               {"creationTimestamp", "2023-01-01T00:00:00Z"},
               {"managedFields", {{{"manager", "kubectl"}, {"time", "2023-01-01T00:00:00Z"}}}}}},
             {"data", data}},
        ""};
}

// A pod that mounts `secret` as a volume, so the secret is among its sources.
json podMounting(const std::string& secret) {
    json mounting = pod();
    mounting["spec"]["volumes"].push_back({{"name", "tls"}, {"secret", {{"secretName", secret}}}});
    return mounting;
}

}  // namespace

TEST_CASE("credentials: annotations the downward API shows the pod", "[verify]") {
    json withAnnotation = pod();
    withAnnotation["metadata"]["annotations"] = {{"ci/deploy-token", serviceAccountToken()},
                                                 {"note", "hello"}};
    // Not shown to the pod: an annotation is not readable from inside by itself.
    CHECK(judged(withAnnotation).verdict == Verdict::Pass);

    json env = withAnnotation;
    env["spec"]["containers"][0]["env"] = json::array(
        {{{"name", "DEPLOY"},
          {"valueFrom",
           {{"fieldRef", {{"fieldPath", "metadata.annotations['ci/deploy-token']"}}}}}}});
    const Finding byEnv = judged(env);
    CHECK(byEnv.verdict == Verdict::Fail);
    CHECK(mentions(byEnv,
                   "the pod's annotation ci/deploy-token (through container agent env "
                   "DEPLOY) holds a Kubernetes service-account token"));

    json volume = withAnnotation;
    volume["spec"]["volumes"].push_back(
        {{"name", "podinfo"},
         {"downwardAPI",
          {{"items",
            {{{"path", "annotations"}, {"fieldRef", {{"fieldPath", "metadata.annotations"}}}}}}}}});
    CHECK(judged(volume).verdict == Verdict::Fail);

    json projected = withAnnotation;
    projected["spec"]["volumes"].push_back(
        {{"name", "all"},
         {"projected",
          {{"sources",
            {{{"downwardAPI",
               {{"items",
                 {{{"path", "t"},
                   {"fieldRef",
                    {{"fieldPath", "metadata.annotations['ci/deploy-token']"}}}}}}}}}}}}}});
    CHECK(judged(projected).verdict == Verdict::Fail);

    // Another key shown: the token's annotation is not.
    json other = withAnnotation;
    other["spec"]["containers"][0]["env"] = json::array(
        {{{"name", "NOTE"},
          {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.annotations['note']"}}}}}}});
    CHECK(judged(other).verdict == Verdict::Pass);
}

TEST_CASE("credentials: command, args, probe and hook commands and headers", "[verify]") {
    json args = pod();
    args["spec"]["containers"][0]["args"] = {"--server", "https://k", "--token",
                                             serviceAccountToken()};
    const Finding byArgs = judged(args);
    CHECK(byArgs.verdict == Verdict::Fail);
    CHECK(mentions(byArgs, "container agent args holds a Kubernetes service-account token"));

    json command = pod();
    command["spec"]["initContainers"] =
        json::array({{{"name", "setup"},
                      {"command", {"sh", "-c", "echo " + serviceAccountToken() + " > /t"}}}});
    CHECK(judged(command).verdict == Verdict::Fail);

    json probe = pod();
    probe["spec"]["containers"][0]["readinessProbe"] = {
        {"httpGet",
         {{"path", "/"},
          {"port", 8080},
          {"httpHeaders",
           {{{"name", "Authorization"}, {"value", "Bearer " + serviceAccountToken()}}}}}}};
    CHECK(mentions(judged(probe), "container agent readinessProbe header Authorization holds"));

    json hook = pod();
    hook["spec"]["containers"][0]["lifecycle"] = {
        {"postStart",
         {{"exec", {{"command", {"sh", "-c", "printf '%s' '" + kKubeconfig + "'"}}}}}}};
    CHECK(mentions(judged(hook), "container agent postStart hook holds a kubeconfig"));
}

TEST_CASE("credentials: a kubeconfig or token kept base64-encoded", "[verify]") {
    json env = pod();
    env["spec"]["containers"][0]["env"] =
        json::array({{{"name", "KUBECONFIG_B64"}, {"value", base64Encode(kKubeconfig)}}});
    const Finding once = judged(env);
    CHECK(once.verdict == Verdict::Fail);
    CHECK(mentions(once,
                   "env KUBECONFIG_B64 holds a kubeconfig with a user's credentials, "
                   "base64-encoded"));

    // Wrapped at 76 columns, after a shell assignment, in a ConfigMap file.
    std::string wrapped = base64Encode(kKubeconfig);
    for (size_t at = 76; at < wrapped.size(); at += 77) wrapped.insert(at, "\n");
    json mounting = pod();
    mounting["spec"]["volumes"].push_back({{"name", "c"}, {"configMap", {{"name", "boot"}}}});
    const std::vector<CredentialSource> file = {
        {"configmap", "boot",
         json{{"data", {{"env.sh", "export KUBECONFIG_B64=" + wrapped + "\n"}}}}, ""}};
    CHECK(judged(mounting, file).verdict == Verdict::Fail);

    // A token base64-encoded twice, in a Secret (whose data is base64 a third time).
    json secretPod = pod();
    secretPod["spec"]["containers"][0]["envFrom"] = json::array({{{"secretRef", {{"name", "s"}}}}});
    const std::vector<CredentialSource> twice = {
        {"secret", "s",
         json{{"data", {{"T", base64Encode(base64Encode(base64Encode(serviceAccountToken())))}}}},
         ""}};
    const Finding deep = judged(secretPod, twice);
    CHECK(deep.verdict == Verdict::Fail);
    CHECK(mentions(deep, "base64-encoded twice"));

    // Base64 of nothing of note stays a pass.
    env["spec"]["containers"][0]["env"][0]["value"] = base64Encode(std::string(300, 'x'));
    CHECK(judged(env).verdict == Verdict::Pass);
}

TEST_CASE("credentials: a client key whose certificate the cluster's CA signed", "[verify]") {
    const json mounting = podMounting("tls");
    // kubernetes.io/tls: tls.crt holds the leaf and the intermediate, tls.key the key.
    const std::vector<CredentialSource> signedPair = {secretWith(
        "tls",
        {{"tls.crt", pki::kLeafCertificate + pki::kIntermediate}, {"tls.key", pki::kLeafKey}})};
    const Finding ours = judged(mounting, signedPair, pki::kClusterCa);
    CHECK(ours.verdict == Verdict::Fail);
    CHECK(mentions(ours, "secret/tls key tls.key holds a private key whose client certificate"));
    CHECK(mentions(ours, "agent-admin"));
    // The older EC form of the same key.
    const std::vector<CredentialSource> sec1 = {secretWith(
        "tls",
        {{"tls.crt", pki::kLeafCertificate + pki::kIntermediate}, {"tls.key", pki::kLeafKeySec1}})};
    CHECK(judged(mounting, sec1, pki::kClusterCa).verdict == Verdict::Fail);
    // Without the intermediate there is no chain to the CA.
    const std::vector<CredentialSource> noChain = {
        secretWith("tls", {{"tls.crt", pki::kLeafCertificate}, {"tls.key", pki::kLeafKey}})};
    CHECK(judged(mounting, noChain, pki::kClusterCa).verdict == Verdict::Pass);
    // Another CA's pair (an ingress certificate) is no credential of this cluster.
    const std::vector<CredentialSource> ingress = {
        secretWith("tls", {{"tls.crt", pki::kOtherCertificate}, {"tls.key", pki::kOtherKey}})};
    const Finding foreign = judged(mounting, ingress, pki::kClusterCa);
    CHECK(foreign.verdict == Verdict::Pass);
    CHECK(mentions(foreign, "did not sign"));
    // The client CA unknown: nothing is ruled out.
    CHECK(judged(mounting, ingress, std::nullopt).verdict == Verdict::Unproven);
    // A key alone (a signing key?) and a key under a passphrase: unproven.
    const std::vector<CredentialSource> lone = {secretWith("tls", {{"k", pki::kLoneKey}})};
    CHECK(mentions(judged(mounting, lone, pki::kClusterCa), "no certificate beside it"));
    CHECK(judged(mounting, lone, pki::kClusterCa).verdict == Verdict::Unproven);
    const std::vector<CredentialSource> locked = {secretWith("tls", {{"k", pki::kEncryptedKey}})};
    CHECK(mentions(judged(mounting, locked, pki::kClusterCa), "could not be read"));
    // The pair base64-encoded inside a ConfigMap, and the certificate in another source.
    json both = podMounting("tls");
    both["spec"]["volumes"].push_back({{"name", "c"}, {"configMap", {{"name", "certs"}}}});
    const std::vector<CredentialSource> split = {
        secretWith("tls", {{"key.b64", base64Encode(pki::kLeafKey)}}),
        {"configmap", "certs",
         json{{"data", {{"chain", pki::kIntermediate + pki::kLeafCertificate}}}}, ""}};
    CHECK(judged(both, split, pki::kClusterCa).verdict == Verdict::Fail);
    CHECK(holdsPrivateKey(both, split));
    CHECK_FALSE(holdsPrivateKey(both, {}));
}

TEST_CASE("credentials: PEM scanning is linear in what the pod wrote", "[verify]") {
    // 200,000 BEGIN lines never closed, and one label that never ends: each search stays
    // before the next BEGIN (quadratic before: 10^10 steps, a hang the suite's time-out shows).
    std::string many;
    for (int i = 0; i < 200'000; ++i) many += "-----BEGIN EC PRIVATE KEY-----x";
    const auto scan =
        rossoctl::kube::scanPrivateKeys({many, "-----BEGIN " + std::string(1 << 20, 'A')}, "");
    CHECK(scan.overLimit);
    CHECK(scan.keys.size() == 64);
    CHECK_FALSE(scan.keys.front().readable);
}

TEST_CASE("credentials: the count of values read is worded as a count", "[verify][wording]") {
    // walk4: "in 1 values the pod can read"
    for (const size_t values : {0, 1, 3}) {
        json shaped = pod();
        shaped["spec"]["containers"][0].erase("command");
        shaped["spec"]["containers"][0].erase("args");
        shaped["spec"]["containers"][0]["env"] = json::array();
        for (size_t i = 0; i < values; ++i)
            shaped["spec"]["containers"][0]["env"].push_back(
                {{"name", "V" + std::to_string(i)}, {"value", "plain"}});
        const Finding finding = judged(shaped);
        REQUIRE(finding.verdict == Verdict::Pass);
        std::string text;
        for (const auto& line : finding.evidence) text += line + "\n";
        INFO(text);
        std::smatch said;
        REQUIRE(std::regex_search(text, said, std::regex(R"(in (\d+) (values?) the pod)")));
        CHECK(said[2] == (said[1] == "1" ? "value" : "values"));
        REQUIRE(std::regex_search(text, said,
                                  std::regex(R"(key names of (\d+) (Secrets?)/(ConfigMaps?))")));
        CHECK(said[2] == (said[1] == "1" ? "Secret" : "Secrets"));
    }
}

using rossoctl::testing::verify_fixtures::asDecimal;

TEST_CASE("credentials: a token written as one decimal number (attack 65 T2)", "[verify]") {
    json env = pod();
    env["spec"]["containers"][0]["env"] =
        json::array({{{"name", "BUILD_SEED"}, {"value", asDecimal(serviceAccountToken())}}});
    const Finding decimal = judged(env);
    CHECK(decimal.verdict == Verdict::Fail);
    CHECK(mentions(decimal, "env BUILD_SEED holds"));
    CHECK(mentions(decimal, "written as one decimal number"));

    // Behind a tag and inside a ConfigMap file, base64-encoded before it was written as digits.
    json mounting = pod();
    mounting["spec"]["volumes"].push_back({{"name", "c"}, {"configMap", {{"name", "seed"}}}});
    const std::vector<CredentialSource> file = {
        {"configmap", "seed",
         json{{"data",
               {{"seed.txt", "seed=" + asDecimal(base64Encode(serviceAccountToken())) + ";\n"}}}},
         ""}};
    CHECK(judged(mounting, file).verdict == Verdict::Fail);

    // A run too long to convert is not read: unproven, never a pass.
    env["spec"]["containers"][0]["env"][0]["value"] = std::string(64 * 1024 + 1, '7');
    CHECK(judged(env).verdict == Verdict::Unproven);

    // Runs each short enough, but more than the pod's budget converts (review 67 L1): the
    // work grows as a run's square, and MiBs of digits cost seconds.
    json many = pod();
    std::string digits(60000, '7');
    digits.push_back('x');  // each value its own run, in a join of adjacent values too
    for (int i = 0; i < 6; ++i)
        many["spec"]["containers"][0]["env"].push_back(
            {{"name", fmt::format("SEED_{}", i)}, {"value", digits}});
    const Finding costly = judged(many);
    CHECK(costly.verdict == Verdict::Unproven);
    CHECK(mentions(costly, "not read"));

    // Numbers of no note (a build id, a long counter) stay a pass.
    env["spec"]["containers"][0]["env"][0]["value"] = std::string(60, '1') + " " + "20261207";
    CHECK(judged(env).verdict == Verdict::Pass);
}
