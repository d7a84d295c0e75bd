// kubeconfig contents: credentials, file references, and malformed input.
#include <catch2/catch.hpp>
#include <string>

#include "config_test_support.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/config.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;
using rossoctl::testing::errorOf;
using rossoctl::testing::fakeEnvironment;
using rossoctl::testing::TempDir;

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
