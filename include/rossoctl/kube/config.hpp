#pragma once
// kubeconfig loading and merging with kubectl's precedence rules, and the resolved
// connection settings (RestConfig) every request uses.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rossoctl::kube {

struct ExecConfig {
    std::string apiVersion;
    std::string command;
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> env;
    std::string installHint;
    bool provideClusterInfo = false;
};

struct ClusterEntry {
    std::string server;
    std::string certificateAuthority;      // path, made absolute at load
    std::string certificateAuthorityData;  // PEM (decoded from base64)
    std::string tlsServerName;
    std::string proxyUrl;
    bool insecureSkipTlsVerify = false;
    std::string sourceFile;  // the kubeconfig that defined it, for error messages
};

struct UserEntry {
    std::string token;
    std::string tokenFile;
    std::string clientCertificate;
    std::string clientCertificateData;  // PEM
    std::string clientKey;
    std::string clientKeyData;  // PEM
    std::string username;
    std::string password;
    std::optional<ExecConfig> exec;
    std::string sourceFile;  // the kubeconfig that defined it, for error messages
};

struct ContextEntry {
    std::string cluster;
    std::string user;
    std::string namespaceName;
};

struct KubeConfig {
    std::map<std::string, ClusterEntry> clusters;
    std::map<std::string, UserEntry> users;
    std::map<std::string, ContextEntry> contexts;
    std::string currentContext;
    std::vector<std::string> files;  // where it came from, for error messages
};

// Parses one kubeconfig file; relative paths inside it resolve against its directory.
// Throws ConfigError naming the file and the key.
KubeConfig loadKubeConfigFile(const std::string& path);
KubeConfig parseKubeConfig(const std::string& yamlText, const std::string& origin,
                           const std::string& baseDir);

// client-go's merge: the first file to define a named cluster/user/context wins, and the
// first non-empty current-context wins.
KubeConfig mergeKubeConfigs(const std::vector<KubeConfig>& configs);

// Global flags of DESIGN.md section 2; empty means "not given".
struct ConfigOverrides {
    std::string kubeconfig;
    std::string context;
    std::string cluster;
    std::string user;
    std::string namespaceName;
    std::string server;
    std::string token;
    std::string certificateAuthority;
    bool insecureSkipTlsVerify = false;
    std::chrono::milliseconds requestTimeout{0};
};

// What the process environment provides; injectable for tests.
struct Environment {
    std::function<std::optional<std::string>(const std::string&)> getenv;
    std::string home;
    std::string inClusterDir = "/var/run/secrets/kubernetes.io/serviceaccount";
    static Environment fromProcess();
};

struct RestConfig {
    std::string server;  // https://host:port, no trailing slash
    std::string caData;  // PEM; empty = system trust store
    std::string tlsServerName;
    std::string proxyUrl;
    bool insecureSkipTlsVerify = false;
    std::string token;
    std::string tokenFile;
    std::string clientCertData;  // PEM
    std::string clientKeyData;   // PEM
    std::string username;
    std::string password;
    std::optional<ExecConfig> exec;
    std::string namespaceName;  // -n, else the context's, else "default"
    bool namespaceFromFlag = false;
    bool namespaceDefaulted = false;  // neither -n nor the context (nor in-cluster) named one
    std::string contextName;
    std::string origin;  // "kubeconfig a:b", "in-cluster", for messages
    std::chrono::milliseconds requestTimeout{0};
};

// kubectl's order: --kubeconfig (that file only), else KUBECONFIG (':'-separated, merged),
// else ~/.kube/config, else in-cluster config; then flags override.
RestConfig resolveRestConfig(const ConfigOverrides& overrides, const Environment& env);

// Reads a whole file or throws ConfigError("<what> PATH: reason").
std::string readFileOrThrow(const std::string& path, const std::string& what);

}  // namespace rossoctl::kube
