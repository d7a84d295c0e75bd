// kubectl's config precedence: which files, which context, and what the flags override.
#include "rossoctl/kube/config.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "rossoctl/errors.hpp"
#include "text.hpp"

namespace rossoctl::kube {

namespace {

using text::inQuotes;
using text::trimmed;

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
    std::string out;
    for (const auto& part : parts) out += (out.empty() ? "" : separator) + part;
    return out;
}

bool isRegularFile(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool exists(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0;
}

std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> parts;
    std::set<std::string> seen;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(':', start);
        if (end == std::string::npos) end = text.size();
        std::string part = text.substr(start, end - start);
        if (!part.empty() && seen.insert(part).second) parts.push_back(part);
        start = end + 1;
    }
    return parts;
}

// The kubeconfig files in effect and what they hold; files is empty when none exists.
KubeConfig loadConfiguredFiles(const ConfigOverrides& overrides, const Environment& env,
                               std::string& searched) {
    if (!overrides.kubeconfig.empty()) return loadKubeConfigFile(overrides.kubeconfig);
    auto listed = env.getenv ? env.getenv("KUBECONFIG") : std::nullopt;
    std::vector<std::string> candidates;
    if (listed && !listed->empty()) {
        candidates = splitList(*listed);
        searched = "KUBECONFIG=" + *listed;
    } else if (!env.home.empty()) {
        candidates.push_back(env.home + "/.kube/config");
        searched = candidates.back();
    }
    std::vector<KubeConfig> configs;
    for (const auto& path : candidates) {
        if (!exists(path)) continue;  // client-go skips missing files in the list
        configs.push_back(loadKubeConfigFile(path));
    }
    return mergeKubeConfigs(configs);
}

bool isEmptyConfig(const KubeConfig& config) {
    return config.clusters.empty() && config.users.empty() && config.contexts.empty() &&
           config.currentContext.empty();
}

std::optional<std::string> envValue(const Environment& env, const std::string& name) {
    auto value = env.getenv ? env.getenv(name) : std::nullopt;
    if (value && value->empty()) return std::nullopt;
    return value;
}

bool inClusterPossible(const Environment& env) {
    return envValue(env, "KUBERNETES_SERVICE_HOST") && envValue(env, "KUBERNETES_SERVICE_PORT") &&
           isRegularFile(env.inClusterDir + "/token");
}

// A file path from the kubeconfig or a flag, or the already-decoded data, as PEM.
std::string dataOrFile(const std::string& data, const std::string& path, const std::string& what) {
    if (!data.empty()) return data;
    if (path.empty()) return {};
    return readFileOrThrow(path, what + ": cannot read");
}

void applyTlsOverrides(const ConfigOverrides& overrides, RestConfig& rest) {
    // Like kubectl: either flag replaces the file's CA and insecure setting together.
    if (overrides.insecureSkipTlsVerify || !overrides.certificateAuthority.empty()) {
        rest.insecureSkipTlsVerify = overrides.insecureSkipTlsVerify;
        rest.caData = dataOrFile({}, overrides.certificateAuthority, "--certificate-authority");
    }
    if (!overrides.token.empty()) {
        rest.token = overrides.token;
        rest.tokenFile.clear();
        rest.username.clear();
        rest.password.clear();
        rest.exec.reset();
    }
}

void applyNamespace(const ConfigOverrides& overrides, const std::string& fallback,
                    RestConfig& rest) {
    rest.namespaceFromFlag = !overrides.namespaceName.empty();
    rest.namespaceDefaulted = !rest.namespaceFromFlag && fallback.empty();
    rest.namespaceName = rest.namespaceFromFlag ? overrides.namespaceName
                         : fallback.empty()     ? "default"
                                                : fallback;
}

RestConfig inClusterConfig(const ConfigOverrides& overrides, const Environment& env) {
    RestConfig rest;
    std::string host = *envValue(env, "KUBERNETES_SERVICE_HOST");
    if (host.find(':') != std::string::npos) host = "[" + host + "]";  // IPv6 literal
    rest.server = "https://" + host + ":" + *envValue(env, "KUBERNETES_SERVICE_PORT");
    rest.tokenFile = env.inClusterDir + "/token";
    rest.token = trimmed(readFileOrThrow(rest.tokenFile, "in-cluster config: cannot read"));
    std::string caFile = env.inClusterDir + "/ca.crt";
    if (isRegularFile(caFile))
        rest.caData = readFileOrThrow(caFile, "in-cluster config: cannot read");
    if (!overrides.server.empty()) rest.server = overrides.server;
    applyTlsOverrides(overrides, rest);
    std::string namespaceName = envValue(env, "POD_NAMESPACE").value_or("");
    std::string namespaceFile = env.inClusterDir + "/namespace";
    if (namespaceName.empty() && isRegularFile(namespaceFile))
        namespaceName = trimmed(readFileOrThrow(namespaceFile, "in-cluster config: cannot read"));
    applyNamespace(overrides, namespaceName, rest);
    rest.origin = "in-cluster";
    rest.requestTimeout = overrides.requestTimeout;
    return rest;
}

// client-go's default: a server without a scheme is https when TLS settings say so.
std::string normalizedServer(std::string server, bool tls) {
    if (server.find("://") == std::string::npos) server = (tls ? "https://" : "http://") + server;
    while (!server.empty() && server.back() == '/') server.pop_back();
    return server;
}

void applyUser(const UserEntry& user, const std::string& userName, const std::string& label,
               RestConfig& rest) {
    std::string key = "kubeconfig " + (user.sourceFile.empty() ? label : user.sourceFile) +
                      ": users[" + inQuotes(userName) + "].";
    rest.token = user.token;
    rest.tokenFile = user.tokenFile;
    if (rest.token.empty() && !rest.tokenFile.empty())
        rest.token = trimmed(readFileOrThrow(rest.tokenFile, key + "tokenFile: cannot read"));
    rest.clientCertData =
        dataOrFile(user.clientCertificateData, user.clientCertificate, key + "client-certificate");
    rest.clientKeyData = dataOrFile(user.clientKeyData, user.clientKey, key + "client-key");
    if (rest.clientCertData.empty() != rest.clientKeyData.empty()) {
        throw ConfigError(key.substr(0, key.size() - 1) + ": " +
                          (rest.clientKeyData.empty()
                               ? "client-certificate is set but client-key is missing"
                               : "client-key is set but client-certificate is missing"));
    }
    rest.username = user.username;
    rest.password = user.password;
    rest.exec = user.exec;
}

RestConfig fromKubeConfig(const KubeConfig& config, const ConfigOverrides& overrides) {
    std::string files = join(config.files, ":");
    std::string label = "kubeconfig " + (files.empty() ? std::string("(none found)") : files);
    RestConfig rest;
    rest.origin = files.empty() ? "command-line flags" : label;
    rest.requestTimeout = overrides.requestTimeout;

    rest.contextName = overrides.context.empty() ? config.currentContext : overrides.context;
    ContextEntry context;
    if (!rest.contextName.empty()) {
        auto found = config.contexts.find(rest.contextName);
        if (found == config.contexts.end()) {
            std::string message =
                "context " + inQuotes(rest.contextName) + " not found in " + label;
            if (!overrides.context.empty()) throw UsageError(message);
            throw ConfigError("current-" + message + "; use --context to pick another");
        }
        context = found->second;
    }
    std::string contextLabel =
        rest.contextName.empty() ? label : "context " + inQuotes(rest.contextName) + " in " + label;

    std::string clusterName = overrides.cluster.empty() ? context.cluster : overrides.cluster;
    ClusterEntry cluster;
    if (!clusterName.empty()) {
        auto found = config.clusters.find(clusterName);
        if (found == config.clusters.end()) {
            if (!overrides.cluster.empty())
                throw UsageError("cluster " + inQuotes(clusterName) + " not found in " + label);
            throw ConfigError(contextLabel + ": cluster " + inQuotes(clusterName) + " not found");
        }
        cluster = found->second;
    }
    std::string clusterKey = "kubeconfig " +
                             (cluster.sourceFile.empty() ? files : cluster.sourceFile) +
                             ": clusters[" + inQuotes(clusterName) + "].certificate-authority";
    rest.caData =
        dataOrFile(cluster.certificateAuthorityData, cluster.certificateAuthority, clusterKey);
    rest.insecureSkipTlsVerify = cluster.insecureSkipTlsVerify;
    rest.tlsServerName = overrides.server.empty() ? cluster.tlsServerName : "";
    rest.proxyUrl = cluster.proxyUrl;

    std::string userName = overrides.user.empty() ? context.user : overrides.user;
    if (!userName.empty()) {
        auto found = config.users.find(userName);
        if (found == config.users.end()) {
            if (!overrides.user.empty())
                throw UsageError("user " + inQuotes(userName) + " not found in " + label);
            throw ConfigError(contextLabel + ": user " + inQuotes(userName) + " not found");
        }
        applyUser(found->second, userName, files, rest);
    }
    applyTlsOverrides(overrides, rest);
    // kubectl's rule and words: a CA together with insecure would silently verify nothing.
    if (rest.insecureSkipTlsVerify && !rest.caData.empty()) {
        const std::string message =
            "specifying a root certificates file with the insecure flag is not allowed";
        if (overrides.insecureSkipTlsVerify) throw UsageError(message);
        throw ConfigError(contextLabel + ": " + message);
    }

    std::string server = overrides.server.empty() ? cluster.server : overrides.server;
    if (server.empty()) {
        if (rest.contextName.empty() && clusterName.empty())
            throw ConfigError(label +
                              " has no current-context: use --context, or set KUBECONFIG "
                              "or use --kubeconfig to pick another file");
        throw ConfigError(contextLabel +
                          ": no server: use --server, or set KUBECONFIG or use "
                          "--kubeconfig to pick another file");
    }
    bool tls = !rest.caData.empty() || !rest.clientCertData.empty() || rest.insecureSkipTlsVerify;
    rest.server = normalizedServer(server, tls);
    applyNamespace(overrides, context.namespaceName, rest);
    return rest;
}

}  // namespace

std::string readFileOrThrow(const std::string& path, const std::string& what) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw ConfigError(what + " " + path + ": " + std::strerror(errno));
    std::string content;
    char buffer[65536];
    for (;;) {
        ssize_t count = ::read(fd, buffer, sizeof buffer);
        if (count < 0 && errno == EINTR) continue;
        if (count < 0) {
            int error = errno;
            ::close(fd);
            throw ConfigError(what + " " + path + ": " + std::strerror(error));
        }
        if (count == 0) break;
        content.append(buffer, static_cast<size_t>(count));
    }
    ::close(fd);
    return content;
}

Environment Environment::fromProcess() {
    Environment env;
    env.getenv = [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (!value) return std::nullopt;
        return std::string(value);
    };
    if (const char* home = std::getenv("HOME"); home && *home) {
        env.home = home;
    } else {
        struct passwd entry {};
        struct passwd* result = nullptr;
        char buffer[4096];
        if (::getpwuid_r(::getuid(), &entry, buffer, sizeof buffer, &result) == 0 && result)
            env.home = result->pw_dir;
    }
    return env;
}

RestConfig resolveRestConfig(const ConfigOverrides& overrides, const Environment& env) {
    std::string searched;
    KubeConfig config = loadConfiguredFiles(overrides, env, searched);
    bool namesACluster = !overrides.context.empty() || !overrides.cluster.empty() ||
                         !overrides.user.empty() || !overrides.server.empty();
    if (isEmptyConfig(config) && !namesACluster && inClusterPossible(env))
        return inClusterConfig(overrides, env);
    if (config.files.empty() && overrides.server.empty()) {
        std::string where = searched.empty() ? "" : " (looked at " + searched + ")";
        throw ConfigError("no kubeconfig found" + where +
                          ": set KUBECONFIG or use --kubeconfig to point at one");
    }
    return fromKubeConfig(config, overrides);
}

}  // namespace rossoctl::kube
