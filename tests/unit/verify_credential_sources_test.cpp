// Credentials the pod holds where verify's first reading did not look (issue 35, review 35):
// a token put together by $(VAR) expansion, Secrets deleted or rewritten after the containers
// read them, bootstrap tokens, an HTTP probe's path, volumes whose content no Secret shows, and
// base64 kept indented in a YAML block, hex, quoted YAML keys, a kubeconfig kept as a JSON
// string, and cloud access keys. Each was a pass before.
#include <catch2/catch.hpp>

#include "rossoctl/kube/base64.hpp"
#include "rossoctl/verify/checks.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "verify_fixtures.hpp"

using nlohmann::json;
using namespace rossoctl::verify;
using namespace rossoctl::testing;
using rossoctl::kube::base64Encode;

namespace {

// A token the cluster issued, as verify_credentials_test builds it.
std::string clusterToken() {
    return verify_fixtures::jwt({{"iss", "https://kubernetes.default.svc.cluster.local"},
                                 {"sub", "system:serviceaccount:team1:agent-bot"},
                                 {"kubernetes.io", {{"namespace", "team1"}}}});
}

json pod() {
    return verify_fixtures::hardenedPod("uid");
}

// What Verification::tokenStaticOf judges: the mount settings, legacy token Secrets (none
// in the namespace, and the list was allowed), and credentials by shape.
Finding tokenBoundary(const json& pod, const std::vector<CredentialSource>& sources = {},
                      const std::optional<std::string>& authorities = std::nullopt) {
    Finding finding = tokenStatic(pod, std::nullopt, std::vector<std::string>{});
    absorb(finding, credentialsStatic(pod, sources, "https://kubernetes.default.svc.cluster.local",
                                      authorities));
    return finding;
}

// A Secret `name` whose data holds `plain` (bytes) under each key.
CredentialSource secret(const std::string& name, const json& plain,
                        const std::string& type = "Opaque") {
    json data = json::object();
    for (const auto& [key, value] : plain.items())
        data[key] = base64Encode(value.get<std::string>());
    return {"secret", name, json{{"type", type}, {"data", data}}, ""};
}

json withVolume(json pod, const json& volume) {
    pod["spec"]["volumes"].push_back(volume);
    return pod;
}

json withEnv(json pod, const json& env) {
    pod["spec"]["containers"][0]["env"] = env;
    return pod;
}

std::string kubeconfigWith(const std::string& user) {
    return "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "
           "\"https://10.0.0.1:6443\"}\nusers:\n- name: u\n  user:\n" +
           user + "contexts: []\n";
}

}  // namespace

TEST_CASE("credentials: a token composed from two env values by $(VAR) expansion", "[verify]") {
    // The kubelet expands $(HEAD)$(TAIL): the container's environment holds the whole token
    // in FULL (and its /proc/1/cmdline in args), though no one value verify reads does.
    const std::string token = clusterToken();
    const size_t half = token.find('.') + 12;
    json composed =
        withEnv(pod(), json::array({{{"name", "HEAD"}, {"value", token.substr(0, half)}},
                                    {{"name", "TAIL"}, {"value", token.substr(half)}},
                                    {{"name", "FULL"}, {"value", "$(HEAD)$(TAIL)"}}}));
    CHECK(tokenBoundary(composed).verdict == Verdict::Fail);
    composed["spec"]["containers"][0]["args"] = {"--token=$(HEAD)$(TAIL)"};
    CHECK(tokenBoundary(composed).verdict == Verdict::Fail);
}

TEST_CASE("credentials: a Secret deleted after the container read it into env", "[verify]") {
    // A running container whose env takes a non-optional secretKeyRef started only because the
    // Secret existed then; env is fixed at start, so its value is still in the environment.
    const json reader = withEnv(
        pod(),
        json::array({{{"name", "KUBE_TOKEN"},
                      {"valueFrom", {{"secretKeyRef", {{"name", "deploy"}, {"key", "t"}}}}}}}));
    const std::vector<CredentialSource> gone = {{"secret", "deploy", std::nullopt, "not found"}};
    CHECK(tokenBoundary(reader, gone).verdict != Verdict::Pass);

    // Same with a Secret re-created (rotated) after the container started: what env holds is
    // the old value, which verify never saw.
    json started = reader;
    started["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] =
        "2023-11-14T22:00:10Z";
    CredentialSource rotated = secret("deploy", {{"t", "harmless"}});
    (*rotated.object)["metadata"] = {{"name", "deploy"},
                                     {"creationTimestamp", "2023-11-15T09:00:00Z"}};
    CHECK(tokenBoundary(started, {rotated}).verdict != Verdict::Pass);
}

TEST_CASE("credentials: a bootstrap token authenticates and is not a JWT", "[verify]") {
    // abcdef.0123456789abcdef: system:bootstrappers may create node CSRs, which the
    // controller-manager approves: a node's client certificate.
    const json inEnv =
        withEnv(pod(), json::array({{{"name", "JOIN"}, {"value", "abcdef.0123456789abcdef"}}}));
    CHECK(tokenBoundary(inEnv).verdict == Verdict::Fail);

    // A copy of kube-system's Secret, by type, mounted.
    const json mounting = withVolume(
        pod(), {{"name", "join"}, {"secret", {{"secretName", "bootstrap-token-abcdef"}}}});
    const auto copy = secret("bootstrap-token-abcdef",
                             {{"token-id", "abcdef"},
                              {"token-secret", "0123456789abcdef"},
                              {"usage-bootstrap-authentication", "true"}},
                             "bootstrap.kubernetes.io/token");
    CHECK(tokenBoundary(mounting, {copy}).verdict != Verdict::Pass);
}

TEST_CASE("credentials: a token in an HTTP probe's or hook's path reaches the pod", "[verify]") {
    // The kubelet sends GET /healthz?token=... to the pod's own server: the pod reads the path
    // exactly as it reads the headers, which are checked.
    json probe = pod();
    probe["spec"]["containers"][0]["readinessProbe"] = {
        {"httpGet", {{"path", "/healthz?token=" + clusterToken()}, {"port", 8080}}}};
    CHECK(tokenBoundary(probe).verdict == Verdict::Fail);

    json hook = pod();
    hook["spec"]["containers"][0]["lifecycle"] = {
        {"postStart", {{"httpGet", {{"path", "/start/" + clusterToken()}, {"port", 8080}}}}}};
    CHECK(tokenBoundary(hook).verdict == Verdict::Fail);
}

TEST_CASE("credentials: volumes whose content verify cannot see hold credentials", "[verify]") {
    // The Secrets Store CSI driver mounts cloud secrets (a kubeconfig, a cloud key) that no
    // Secret verify reads holds.
    const json csi =
        withVolume(pod(), {{"name", "vault"},
                           {"csi",
                            {{"driver", "secrets-store.csi.k8s.io"},
                             {"readOnly", true},
                             {"volumeAttributes", {{"secretProviderClass", "cluster-admin"}}}}}});
    CHECK(tokenBoundary(csi).verdict != Verdict::Pass);

    // podCertificate (1.34+): the kubelet writes a private key and the chain a signer issued;
    // a signer whose CA the API server trusts for clients makes it a client credential.
    const json certificate =
        withVolume(pod(), {{"name", "id"},
                           {"projected",
                            {{"sources",
                              {{{"podCertificate",
                                 {{"signerName", "example.com/cluster-client"},
                                  {"keyType", "ED25519"},
                                  {"credentialBundlePath", "bundle.pem"}}}}}}}}});
    CHECK(tokenBoundary(certificate).verdict != Verdict::Pass);

    // The node's kubelet client credential through hostPath (host-isolation fails it; the
    // token boundary still says "no credential").
    const json kubelet = withVolume(
        pod(),
        {{"name", "pki"}, {"hostPath", {{"path", "/var/lib/kubelet/pki"}, {"type", "Directory"}}}});
    CHECK(tokenBoundary(kubelet).verdict != Verdict::Pass);
}

TEST_CASE("credentials: a base64 kubeconfig wrapped and indented in a YAML block scalar",
          "[verify]") {
    // Helm values, Argo CD and Flux manifests keep a base64 blob indented under `key: |`.
    std::string encoded = base64Encode(kubeconfigWith("    token: " + clusterToken() + "\n"));
    std::string block;
    for (size_t at = 0; at < encoded.size(); at += 76)
        block += "    " + encoded.substr(at, 76) + "\n";
    const json mounting = withVolume(pod(), {{"name", "c"}, {"configMap", {{"name", "values"}}}});
    const CredentialSource values{
        "configmap", "values",
        json{{"data", {{"values.yaml", "cluster:\n  kubeconfig: |\n" + block}}}}, ""};
    CHECK(tokenBoundary(mounting, {values}).verdict == Verdict::Fail);
}

TEST_CASE("credentials: the controls beside the new readings still pass", "[verify]") {
    // Expansion as the kubelet does it: $$ is a '$', an undefined name stays as written, and
    // halves from two Secrets join as two literals do.
    const std::string token = clusterToken();
    const size_t half = token.find('.') + 12;
    const json escaped =
        withEnv(pod(), json::array({{{"name", "HEAD"}, {"value", token.substr(0, half)}},
                                    {{"name", "FULL"}, {"value", "$$(HEAD)$(NOWHERE)"}}}));
    CHECK(tokenBoundary(escaped).verdict == Verdict::Pass);
    const json fromSecrets = withEnv(
        pod(),
        json::array(
            {{{"name", "A"}, {"valueFrom", {{"secretKeyRef", {{"name", "a"}, {"key", "k"}}}}}},
             {{"name", "B"}, {"valueFrom", {{"secretKeyRef", {{"name", "b"}, {"key", "k"}}}}}},
             {{"name", "T"}, {"value", "$(A)$(B)"}}}));
    CHECK(tokenBoundary(fromSecrets, {secret("a", {{"k", token.substr(0, half)}}),
                                      secret("b", {{"k", token.substr(half)}})})
              .verdict == Verdict::Fail);

    // A template's pod (no container has started) with a Secret not there: nothing mounted.
    json unstarted = withEnv(
        pod(), json::array({{{"name", "T"},
                             {"valueFrom", {{"secretKeyRef", {{"name", "d"}, {"key", "t"}}}}}}}));
    unstarted.erase("status");
    CHECK(tokenBoundary(unstarted, {{"secret", "d", std::nullopt, "not found"}}).verdict ==
          Verdict::Pass);
    // A Secret last written before the container started: what env holds is what verify read.
    json started = unstarted;
    started["status"] = {
        {"phase", "Running"},
        {"containerStatuses",
         {{{"name", "agent"}, {"state", {{"running", {{"startedAt", "2023-11-15T10:00:00Z"}}}}}}}}};
    CredentialSource earlier = secret("d", {{"t", "harmless"}});
    (*earlier.object)["metadata"] = {
        {"name", "d"},
        {"creationTimestamp", "2023-11-14T09:00:00Z"},
        {"managedFields", {{{"manager", "kubectl"}, {"time", "2023-11-15T09:59:59Z"}}}}};
    CHECK(tokenBoundary(started, {earlier}).verdict == Verdict::Pass);
    // ... and written by a manager after it: unproven.
    (*earlier.object)["metadata"]["managedFields"].push_back(
        {{"manager", "rotator"}, {"time", "2023-11-15T10:00:01Z"}});
    CHECK(tokenBoundary(started, {earlier}).verdict == Verdict::Unproven);

    // Six and sixteen characters of something else are no bootstrap token.
    const json lookalikes =
        withEnv(pod(), json::array({{{"name", "HOST"}, {"value", "images.Cloudfront0123456"}},
                                    {{"name", "VERSION"}, {"value", "abcdef.0123456789abcdef0"}}}));
    CHECK(tokenBoundary(lookalikes).verdict == Verdict::Pass);
}

TEST_CASE("credentials: an expansion that doubles at each step stays bounded", "[verify]") {
    // E1=$(E0)$(E0), E2=$(E1)$(E1), ...: 2^200 bytes as written; no process could start with
    // more than ARG_MAX of env, so expanding stops there and the scan ends.
    json env = json::array({{{"name", "E0"}, {"value", std::string(1024, 'x')}}});
    for (int i = 1; i < 200; ++i)
        env.push_back({{"name", fmt::format("E{}", i)},
                       {"value", fmt::format("$(E{})$(E{})", i - 1, i - 1)}});
    CHECK(tokenBoundary(withEnv(pod(), env)).verdict == Verdict::Pass);
    const auto values = readableValues(withEnv(pod(), env), {});
    size_t bytes = 0;
    for (const auto& value : values) bytes += value.value.size();
    CHECK(bytes < 8 * 1024 * 1024);
}

TEST_CASE("credentials: cloud keys in env and in a mounted credentials file", "[verify]") {
    // On EKS an access key mapped in aws-auth is a cluster credential too (aws eks get-token).
    const json aws = withEnv(
        pod(), json::array({{{"name", "AWS_ACCESS_KEY_ID"}, {"value", "AKIAIOSFODNN7EXAMPLE"}},
                            {{"name", "AWS_SECRET_ACCESS_KEY"},
                             {"value", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}}}));
    CHECK(tokenBoundary(aws).verdict != Verdict::Pass);

    const json mounting = withVolume(pod(), {{"name", "aws"}, {"secret", {{"secretName", "aws"}}}});
    const auto file =
        secret("aws", {{"credentials",
                        "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
                        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"}});
    CHECK(tokenBoundary(mounting, {file}).verdict != Verdict::Pass);
}

TEST_CASE("credentials: a token hex-encoded", "[verify]") {
    std::string hex;
    for (unsigned char c : clusterToken()) hex += fmt::format("{:02x}", c);
    const json inEnv = withEnv(pod(), json::array({{{"name", "TOKEN_HEX"}, {"value", hex}}}));
    CHECK(tokenBoundary(inEnv).verdict == Verdict::Fail);
    CHECK(mentions(tokenBoundary(inEnv), "hex-encoded"));
    // A digest is hex too, and no credential.
    const json digest = withEnv(
        pod(),
        json::array(
            {{{"name", "IMAGE_DIGEST"},
              {"value",
               "sha256:" +
                   std::string(
                       "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")}}}));
    CHECK(tokenBoundary(digest).verdict == Verdict::Pass);
}

TEST_CASE("credentials: a kubeconfig whose token is no JWT, written as YAML and JSON allow",
          "[verify]") {
    // AKS's local-account kubeconfig: a static token, 64 hex characters, not a JWT.
    const std::string staticToken =
        "8f3b1c2e9a7d4f6b0c5e1a2d3f4b6c8e8f3b1c2e9a7d4f6b0c5e1a2d3f4b6c8e";
    const json mounting = withVolume(pod(), {{"name", "c"}, {"configMap", {{"name", "cfg"}}}});
    auto configMap = [](const std::string& key, const std::string& text) {
        return CredentialSource{"configmap", "cfg", json{{"data", {{key, text}}}}, ""};
    };
    // The plain YAML is found (the control).
    REQUIRE(tokenBoundary(mounting,
                          {configMap("config", kubeconfigWith("    token: " + staticToken + "\n"))})
                .verdict == Verdict::Fail);

    // Quoted keys, as YAML writers quote them.
    const std::string quoted =
        "'apiVersion': v1\n'clusters':\n- 'name': c\n  'cluster': {'server': "
        "'https://10.0.0.1:6443'}\n'users':\n- 'name': u\n  'user':\n    'token': '" +
        staticToken + "'\n";
    CHECK(tokenBoundary(mounting, {configMap("config", quoted)}).verdict == Verdict::Fail);

    // The kubeconfig as a JSON string (Terraform state's kube_admin_config_raw): "\n" escapes.
    const std::string state =
        json{{"outputs",
              {{"kube_admin_config_raw",
                {{"value", kubeconfigWith("    token: " + staticToken + "\n")}}}}}}
            .dump();
    CHECK(tokenBoundary(mounting, {configMap("terraform.tfstate", state)}).verdict ==
          Verdict::Fail);
}
