#include "rossoctl/kube/config.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "rossoctl/errors.hpp"
#include "rossoctl/kube/base64.hpp"
#include "temp_dir.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;
using rossoctl::testing::TempDir;

namespace {

// An Environment with only the given variables and a home with no ~/.kube/config.
Environment fakeEnvironment(const TempDir& dir, std::map<std::string, std::string> vars = {}) {
    Environment env;
    env.getenv = [vars](const std::string& name) -> std::optional<std::string> {
        auto found = vars.find(name);
        if (found == vars.end()) return std::nullopt;
        return found->second;
    };
    env.home = dir.file("home");
    env.inClusterDir = dir.file("no-serviceaccount");
    return env;
}

const char* kFileA = R"(apiVersion: v1
kind: Config
clusters:
- name: shared
  cluster:
    server: https://a.example:6443
- name: only-a
  cluster:
    server: https://only-a.example
users:
- name: shared-user
  user:
    token: token-from-a
contexts:
- name: ctx-a
  context:
    cluster: shared
    user: shared-user
    namespace: team-a
- name: ctx-shared
  context:
    cluster: only-a
)";

const char* kFileB = R"(apiVersion: v1
kind: Config
clusters:
- name: shared
  cluster:
    server: https://b.example:6443
- name: only-b
  cluster:
    server: https://only-b.example/
users:
- name: shared-user
  user:
    token: token-from-b
contexts:
- name: ctx-b
  context:
    cluster: only-b
    user: shared-user
- name: ctx-shared
  context:
    cluster: only-b
current-context: ctx-b
)";

std::string errorOf(const std::function<void()>& action) {
    try {
        action();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("KUBECONFIG merges files: first definition wins, first current-context wins",
          "[config]") {
    TempDir dir;
    std::string a = dir.write("a/config", kFileA);
    std::string b = dir.write("b/config", kFileB);
    auto env = fakeEnvironment(dir, {{"KUBECONFIG", a + ":" + dir.file("missing") + ":" + b}});

    RestConfig rest = resolveRestConfig({}, env);
    CHECK(rest.contextName == "ctx-b");  // a sets none, so b's is the first set
    CHECK(rest.server == "https://only-b.example");
    CHECK(rest.token == "token-from-a");  // the user named shared-user comes from a
    CHECK(rest.namespaceName == "default");
    CHECK(rest.origin == "kubeconfig " + a + ":" + b);

    ConfigOverrides overrides;
    overrides.context = "ctx-a";
    rest = resolveRestConfig(overrides, env);
    CHECK(rest.server == "https://a.example:6443");  // cluster "shared" from a, not b
    CHECK(rest.namespaceName == "team-a");

    overrides.context = "ctx-shared";
    CHECK(resolveRestConfig(overrides, env).server == "https://only-a.example");

    SECTION("a current-context in the first file beats the second's") {
        dir.write("a/config", std::string(kFileA) + "current-context: ctx-a\n");
        CHECK(resolveRestConfig({}, env).contextName == "ctx-a");
    }
    SECTION("merge keeps both files' unique names") {
        KubeConfig merged = mergeKubeConfigs({loadKubeConfigFile(a), loadKubeConfigFile(b)});
        CHECK(merged.clusters.size() == 3);
        CHECK(merged.contexts.size() == 3);
        CHECK(merged.clusters.at("shared").server == "https://a.example:6443");
        CHECK(merged.users.at("shared-user").sourceFile == a);
        CHECK(merged.files == std::vector<std::string>{a, b});
    }
}

TEST_CASE("--kubeconfig uses that file only, and a missing one is an error", "[config]") {
    TempDir dir;
    std::string a = dir.write("a/config", kFileA);
    std::string b = dir.write("b/config", kFileB);
    auto env = fakeEnvironment(dir, {{"KUBECONFIG", a}});
    ConfigOverrides overrides;
    overrides.kubeconfig = b;
    CHECK(resolveRestConfig(overrides, env).server == "https://only-b.example");

    overrides.kubeconfig = dir.file("nope");
    CHECK_THROWS_AS(resolveRestConfig(overrides, env), ConfigError);
    CHECK(errorOf([&] { resolveRestConfig(overrides, env); }) ==
          "cannot read kubeconfig " + dir.file("nope") + ": No such file or directory");
}

TEST_CASE("~/.kube/config is used when KUBECONFIG is unset", "[config]") {
    TempDir dir;
    dir.write("home/.kube/config", kFileB);
    auto env = fakeEnvironment(dir);
    CHECK(resolveRestConfig({}, env).server == "https://only-b.example");

    env = fakeEnvironment(dir, {{"KUBECONFIG", dir.write("a", kFileA)}});
    ConfigOverrides overrides;
    overrides.context = "ctx-b";  // only in the home file, which KUBECONFIG hides
    CHECK_THROWS_AS(resolveRestConfig(overrides, env), UsageError);
}

TEST_CASE("no kubeconfig anywhere tells the user what to set", "[config]") {
    TempDir dir;
    auto env = fakeEnvironment(dir);
    std::string message = errorOf([&] { resolveRestConfig({}, env); });
    CHECK_THROWS_AS(resolveRestConfig({}, env), ConfigError);
    CHECK_THAT(message, Catch::Contains("KUBECONFIG") && Catch::Contains("--kubeconfig"));

    env = fakeEnvironment(dir, {{"KUBECONFIG", dir.file("gone1") + ":" + dir.file("gone2")}});
    CHECK_THAT(errorOf([&] { resolveRestConfig({}, env); }), Catch::Contains("--kubeconfig"));

    ConfigOverrides overrides;
    overrides.server = "https://flag.example:6443";
    CHECK(resolveRestConfig(overrides, env).server == "https://flag.example:6443");
}

TEST_CASE("context, cluster, user and namespace precedence", "[config]") {
    TempDir dir;
    auto env = fakeEnvironment(dir, {{"KUBECONFIG", dir.write("config", kFileB)}});
    ConfigOverrides overrides;

    SECTION("an unknown --context is a usage error naming the file") {
        overrides.context = "nope";
        CHECK_THROWS_AS(resolveRestConfig(overrides, env), UsageError);
        CHECK(errorOf([&] { resolveRestConfig(overrides, env); }) ==
              "context \"nope\" not found in kubeconfig " + dir.file("config"));
    }
    SECTION("an unknown current-context is a config error") {
        dir.write("config", std::string(kFileA) + "current-context: gone\n");
        CHECK_THROWS_AS(resolveRestConfig(overrides, env), ConfigError);
        CHECK_THAT(errorOf([&] { resolveRestConfig(overrides, env); }),
                   Catch::Contains("\"gone\" not found"));
    }
    SECTION("-n beats the context's namespace, which beats default") {
        overrides.context = "ctx-b";
        CHECK(resolveRestConfig(overrides, env).namespaceName == "default");
        dir.write("config", kFileA);
        overrides.context = "ctx-a";
        RestConfig rest = resolveRestConfig(overrides, env);
        CHECK(rest.namespaceName == "team-a");
        CHECK_FALSE(rest.namespaceFromFlag);
        overrides.namespaceName = "flag-ns";
        rest = resolveRestConfig(overrides, env);
        CHECK(rest.namespaceName == "flag-ns");
        CHECK(rest.namespaceFromFlag);
    }
    SECTION("--cluster and --user replace the context's") {
        overrides.cluster = "shared";
        RestConfig rest = resolveRestConfig(overrides, env);
        CHECK(rest.server == "https://b.example:6443");
        CHECK(rest.contextName == "ctx-b");
        overrides.user = "ghost";
        CHECK_THROWS_AS(resolveRestConfig(overrides, env), UsageError);
        overrides.user = "";
        overrides.cluster = "ghost";
        CHECK(errorOf([&] { resolveRestConfig(overrides, env); }) ==
              "cluster \"ghost\" not found in kubeconfig " + dir.file("config"));
    }
    SECTION("--server and --token replace the file's values") {
        overrides.server = "https://override.example:443/";
        overrides.token = "flag-token";
        RestConfig rest = resolveRestConfig(overrides, env);
        CHECK(rest.server == "https://override.example:443");
        CHECK(rest.token == "flag-token");
    }
}

TEST_CASE("TLS settings and their flags", "[config]") {
    TempDir dir;
    std::string ca = "-----BEGIN CERTIFICATE-----\nfile-ca\n-----END CERTIFICATE-----\n";
    dir.write("conf/ca.crt", ca);
    dir.write("flag-ca.crt", "flag-ca-pem");
    std::string config = R"(clusters:
- name: c
  cluster:
    server: https://c.example
    certificate-authority: ca.crt
    tls-server-name: api.internal
    proxy-url: http://proxy:3128
contexts:
- name: x
  context: {cluster: c}
current-context: x
)";
    auto env = fakeEnvironment(dir, {{"KUBECONFIG", dir.write("conf/config", config)}});
    RestConfig rest = resolveRestConfig({}, env);
    CHECK(rest.caData == ca);  // relative to the kubeconfig's directory
    CHECK(rest.tlsServerName == "api.internal");
    CHECK(rest.proxyUrl == "http://proxy:3128");
    CHECK_FALSE(rest.insecureSkipTlsVerify);

    ConfigOverrides overrides;
    overrides.insecureSkipTlsVerify = true;
    rest = resolveRestConfig(overrides, env);
    CHECK(rest.insecureSkipTlsVerify);
    CHECK(rest.caData.empty());

    overrides = {};
    overrides.certificateAuthority = dir.file("flag-ca.crt");
    CHECK(resolveRestConfig(overrides, env).caData == "flag-ca-pem");

    overrides.server = "https://other.example";
    CHECK(resolveRestConfig(overrides, env).tlsServerName.empty());  // kubectl clears it too

    std::string withData = R"(clusters:
- name: c
  cluster:
    server: c.example:6443
    certificate-authority-data: )" +
                           base64Encode("data-ca") + R"(
    insecure-skip-tls-verify: false
contexts: [{name: x, context: {cluster: c}}]
current-context: x
)";
    dir.write("conf/config", withData);
    rest = resolveRestConfig({}, env);
    CHECK(rest.caData == "data-ca");
    CHECK(rest.server == "https://c.example:6443");  // no scheme: https when TLS is configured
}

TEST_CASE("user credentials: token, tokenFile, basic, client certificates, exec", "[config]") {
    TempDir dir;
    dir.write("kube/certs/client.crt", "CERT-PEM");
    dir.write("kube/certs/client.key", "KEY-PEM");
    dir.write("kube/token", "file-token\n");
    std::string config = R"(clusters: [{name: c, cluster: {server: https://c.example}}]
users:
- name: token
  user: {token: static-token}
- name: token-file
  user: {tokenFile: token}
- name: basic
  user: {username: admin, password: s3cret}
- name: cert-files
  user:
    client-certificate: certs/client.crt
    client-key: certs/client.key
- name: cert-data
  user:
    client-certificate-data: )" +
                         base64Encode("DATA-CERT") + R"(
    client-key-data: )" + base64Encode("DATA-KEY") +
                         R"(
- name: exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./bin/plugin
      args: [get-token, --cluster, c]
      env:
      - name: PLUGIN_MODE
        value: fast
      installHint: brew install plugin
      provideClusterInfo: true
- name: exec-on-path
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}
- name: half-cert
  user: {client-certificate: certs/client.crt}
contexts:
- {name: token, context: {cluster: c, user: token}}
- {name: token-file, context: {cluster: c, user: token-file}}
- {name: basic, context: {cluster: c, user: basic}}
- {name: cert-files, context: {cluster: c, user: cert-files}}
- {name: cert-data, context: {cluster: c, user: cert-data}}
- {name: exec, context: {cluster: c, user: exec}}
- {name: exec-on-path, context: {cluster: c, user: exec-on-path}}
- {name: half-cert, context: {cluster: c, user: half-cert}}
)";
    auto env = fakeEnvironment(dir, {{"KUBECONFIG", dir.write("kube/config", config)}});
    auto resolve = [&](const std::string& context) {
        ConfigOverrides overrides;
        overrides.context = context;
        return resolveRestConfig(overrides, env);
    };

    CHECK(resolve("token").token == "static-token");
    RestConfig rest = resolve("token-file");
    CHECK(rest.tokenFile == dir.file("kube/token"));
    CHECK(rest.token == "file-token");
    rest = resolve("basic");
    CHECK(rest.username == "admin");
    CHECK(rest.password == "s3cret");
    rest = resolve("cert-files");
    CHECK(rest.clientCertData == "CERT-PEM");
    CHECK(rest.clientKeyData == "KEY-PEM");
    rest = resolve("cert-data");
    CHECK(rest.clientCertData == "DATA-CERT");
    CHECK(rest.clientKeyData == "DATA-KEY");

    rest = resolve("exec");
    REQUIRE(rest.exec);
    CHECK(rest.exec->apiVersion == "client.authentication.k8s.io/v1beta1");
    CHECK(rest.exec->command == dir.file("kube/./bin/plugin"));
    CHECK(rest.exec->args == std::vector<std::string>{"get-token", "--cluster", "c"});
    CHECK(rest.exec->env ==
          std::vector<std::pair<std::string, std::string>>{{"PLUGIN_MODE", "fast"}});
    CHECK(rest.exec->installHint == "brew install plugin");
    CHECK(rest.exec->provideClusterInfo);
    CHECK(resolve("exec-on-path").exec->command == "aws");  // a bare name stays a PATH lookup

    CHECK_THAT(errorOf([&] { resolve("half-cert"); }), Catch::Contains("client-key is missing"));

    ConfigOverrides overrides;
    overrides.context = "basic";
    overrides.token = "flag-token";
    rest = resolveRestConfig(overrides, env);
    CHECK(rest.token == "flag-token");
    CHECK(rest.username.empty());
}

TEST_CASE("a missing certificate file names the file and the key", "[config]") {
    TempDir dir;
    std::string config = R"(clusters: [{name: c, cluster: {server: https://c.example}}]
users:
- name: admin
  user: {client-certificate: /nope.crt, client-key: /nope.key, client-certificate-data: Q0VSVA==}
contexts: [{name: x, context: {cluster: c, user: admin}}]
current-context: x
)";
    std::string path = dir.write("x/config", config);
    auto env = fakeEnvironment(dir, {{"KUBECONFIG", path}});
    CHECK_THROWS_AS(resolveRestConfig({}, env), ConfigError);
    CHECK(errorOf([&] { resolveRestConfig({}, env); }) ==
          "kubeconfig " + path +
              ": users[\"admin\"].client-key: cannot read /nope.key: No such file or directory");
}

TEST_CASE("in-cluster config from the service account directory", "[config]") {
    TempDir dir;
    dir.write("sa/token", "sa-token\n");
    dir.write("sa/ca.crt", "CLUSTER-CA");
    dir.write("sa/namespace", "agents\n");
    auto env = fakeEnvironment(
        dir, {{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
    env.inClusterDir = dir.file("sa");

    RestConfig rest = resolveRestConfig({}, env);
    CHECK(rest.server == "https://[fd00::1]:443");
    CHECK(rest.token == "sa-token");
    CHECK(rest.tokenFile == dir.file("sa/token"));
    CHECK(rest.caData == "CLUSTER-CA");
    CHECK(rest.namespaceName == "agents");
    CHECK(rest.origin == "in-cluster");

    ConfigOverrides overrides;
    overrides.namespaceName = "other";
    overrides.token = "flag-token";
    rest = resolveRestConfig(overrides, env);
    CHECK(rest.namespaceName == "other");
    CHECK(rest.token == "flag-token");
    CHECK(rest.tokenFile.empty());

    env = fakeEnvironment(
        dir, {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"KUBERNETES_SERVICE_PORT", "6443"}});
    env.inClusterDir = dir.file("sa");
    CHECK(resolveRestConfig({}, env).server == "https://10.0.0.1:6443");

    SECTION("a kubeconfig, when one exists, wins over in-cluster") {
        dir.write("home/.kube/config", kFileB);
        CHECK(resolveRestConfig({}, env).server == "https://only-b.example");
    }
}

TEST_CASE("malformed kubeconfigs give one line naming the file", "[config]") {
    TempDir dir;
    std::string path = dir.file("bad");
    auto env = fakeEnvironment(dir, {{"KUBECONFIG", path}});
    auto failure = [&](const std::string& content) {
        dir.write("bad", content);
        return errorOf([&] { resolveRestConfig({}, env); });
    };

    std::string message = failure("clusters:\n- name: a\n  cluster: {server: [unclosed\n");
    CHECK_THAT(message, Catch::StartsWith("kubeconfig " + path + ": line "));
    CHECK(message.find('\n') == std::string::npos);

    CHECK(failure("clusters: just-a-string\n") ==
          "kubeconfig " + path + ": line 1: clusters: expected a list");
    CHECK(failure("clusters:\n- name: a\n  cluster:\n    server: [1, 2]\n") ==
          "kubeconfig " + path + ": line 4: clusters[\"a\"].server: expected a string");
    CHECK_THAT(failure("users:\n- name: u\n  user:\n    exec: {command: x, apiVersion: v9}\n"),
               Catch::Contains("users[\"u\"].exec.apiVersion: unsupported \"v9\""));
    CHECK_THAT(failure("clusters:\n- name: a\n  cluster: {insecure-skip-tls-verify: maybe}\n"),
               Catch::Contains("expected true or false"));
    CHECK_THAT(failure("- just\n- a list\n"), Catch::Contains("expected a mapping"));
    CHECK_THAT(failure("clusters:\n- name: a\n- name: a\n"), Catch::Contains("duplicate name"));

    std::string secretKey = "users:\n- name: u\n  user: {client-key-data: 'sec!ret*key'}\n";
    message = failure(secretKey);
    CHECK_THAT(message, Catch::Contains("client-key-data: not valid base64"));
    CHECK_THAT(message, !Catch::Contains("sec!ret"));

    SECTION("binary junk never crashes") {
        std::string junk;
        unsigned state = 12345;
        for (int round = 0; round < 50; ++round) {
            junk.clear();
            for (int i = 0; i < 512; ++i) {
                state = state * 1103515245 + 12345;
                junk += static_cast<char>(state >> 16);
            }
            dir.write("bad", junk);
            CHECK_THROWS_AS(resolveRestConfig({}, env), ConfigError);
        }
        for (std::string bad : {std::string("\0\xff\xfe{[", 5), std::string(5000, '['),
                                std::string("\xef\xbb\xbf\t- :\x01")}) {
            message = failure(bad);
            CHECK_THAT(message, Catch::StartsWith("kubeconfig " + path + ": "));
            CHECK(message.find('\n') == std::string::npos);
        }
    }
}

TEST_CASE("an empty kubeconfig file is an empty config", "[config]") {
    KubeConfig config = parseKubeConfig("", "/x/config", "/x");
    CHECK(config.clusters.empty());
    CHECK(config.files == std::vector<std::string>{"/x/config"});
}
