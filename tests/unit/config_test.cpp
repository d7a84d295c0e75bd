#include "rossoctl/kube/config.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "config_test_support.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/base64.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;
using rossoctl::testing::errorOf;
using rossoctl::testing::fakeEnvironment;
using rossoctl::testing::TempDir;

namespace {

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

TEST_CASE("a CA together with insecure-skip-tls-verify is refused, as kubectl does", "[config]") {
    TempDir dir;
    dir.write("conf/ca.crt", "-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n");
    dir.write("flag-ca.crt", "flag-ca-pem");
    std::string both = R"(clusters:
- name: c
  cluster:
    server: https://c.example
    certificate-authority: ca.crt
    insecure-skip-tls-verify: true
contexts: [{name: x, context: {cluster: c}}]
current-context: x
)";
    auto env = fakeEnvironment(dir, {{"KUBECONFIG", dir.write("conf/config", both)}});
    const std::string kubectlSays =
        "specifying a root certificates file with the insecure flag is not allowed";
    CHECK_THROWS_WITH(resolveRestConfig({}, env), Catch::Contains(kubectlSays));

    ConfigOverrides flags;
    flags.insecureSkipTlsVerify = true;
    flags.certificateAuthority = dir.file("flag-ca.crt");
    CHECK_THROWS_AS(resolveRestConfig(flags, env), rossoctl::UsageError);
    CHECK_THROWS_WITH(resolveRestConfig(flags, env), Catch::Contains(kubectlSays));

    // The flag alone clears the file's CA (kubectl's override), so it is not refused.
    flags.certificateAuthority.clear();
    const RestConfig rest = resolveRestConfig(flags, env);
    CHECK(rest.insecureSkipTlsVerify);
    CHECK(rest.caData.empty());
    // A CA flag replaces the file's insecure setting.
    flags = {};
    flags.certificateAuthority = dir.file("flag-ca.crt");
    CHECK_FALSE(resolveRestConfig(flags, env).insecureSkipTlsVerify);
}
