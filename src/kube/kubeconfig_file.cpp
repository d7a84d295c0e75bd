// Reading one kubeconfig file (client-go's v1 Config schema) and merging several.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>
#include <system_error>

#include "rossoctl/errors.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/config.hpp"
#include "text.hpp"

namespace rossoctl::kube {

namespace {

using text::inQuotes;

constexpr const char* kExecApiV1 = "client.authentication.k8s.io/v1";
constexpr const char* kExecApiV1beta1 = "client.authentication.k8s.io/v1beta1";

// Walks the YAML tree; every complaint names the file, the line and the key path.
class KubeConfigReader {
  public:
    KubeConfigReader(const std::string& origin, const std::string& baseDir)
        : origin_(origin), baseDir_(baseDir) {}

    KubeConfig read(const YAML::Node& root) {
        KubeConfig config;
        config.files.push_back(origin_);
        if (!root || root.IsNull()) return config;  // an empty file is an empty config
        if (!root.IsMap()) fail(root, "", "expected a mapping at the top level");
        readList(root, "clusters", "cluster",
                 [&](const std::string& name, const YAML::Node& node, const std::string& path) {
                     if (config.clusters.count(name))
                         fail(node, path, "duplicate name " + inQuotes(name));
                     config.clusters[name] = readCluster(node, path);
                 });
        readList(root, "users", "user",
                 [&](const std::string& name, const YAML::Node& node, const std::string& path) {
                     if (config.users.count(name))
                         fail(node, path, "duplicate name " + inQuotes(name));
                     config.users[name] = readUser(node, path);
                 });
        readList(root, "contexts", "context",
                 [&](const std::string& name, const YAML::Node& node, const std::string& path) {
                     if (config.contexts.count(name))
                         fail(node, path, "duplicate name " + inQuotes(name));
                     ContextEntry context;
                     context.cluster = string(node, "cluster", path);
                     context.user = string(node, "user", path);
                     context.namespaceName = string(node, "namespace", path);
                     config.contexts[name] = context;
                 });
        config.currentContext = string(root, "current-context", "");
        return config;
    }

    [[noreturn]] void fail(const YAML::Node& node, const std::string& path,
                           const std::string& reason) const {
        std::string message = "kubeconfig " + origin_ + ": ";
        if (node.IsDefined() && node.Mark().line >= 0)
            message += "line " + std::to_string(node.Mark().line + 1) + ": ";
        if (!path.empty()) message += path + ": ";
        throw ConfigError(message + reason);
    }

  private:
    template <typename OnEntry>
    void readList(const YAML::Node& root, const char* key, const char* itemKey,
                  OnEntry onEntry) const {
        const YAML::Node list = root[key];
        if (!list || list.IsNull()) return;
        if (!list.IsSequence()) fail(list, key, "expected a list");
        for (size_t i = 0; i < list.size(); ++i) {
            const YAML::Node item = list[i];
            std::string itemPath = std::string(key) + "[" + std::to_string(i) + "]";
            if (!item.IsMap())
                fail(item, itemPath, "expected a mapping with name and " + std::string(itemKey));
            std::string name = string(item, "name", itemPath);
            if (name.empty()) fail(item, itemPath, "missing name");
            std::string namedPath = std::string(key) + "[" + inQuotes(name) + "]";
            const YAML::Node body = item[itemKey];
            if (!body || body.IsNull()) {
                onEntry(name, YAML::Node(YAML::NodeType::Map), namedPath);
                continue;
            }
            if (!body.IsMap()) fail(body, namedPath + "." + itemKey, "expected a mapping");
            onEntry(name, body, namedPath);
        }
    }

    ClusterEntry readCluster(const YAML::Node& node, const std::string& path) const {
        ClusterEntry cluster;
        cluster.server = string(node, "server", path);
        cluster.certificateAuthority = localPath(string(node, "certificate-authority", path));
        cluster.certificateAuthorityData = base64Field(node, "certificate-authority-data", path);
        cluster.tlsServerName = string(node, "tls-server-name", path);
        cluster.proxyUrl = string(node, "proxy-url", path);
        cluster.insecureSkipTlsVerify = boolean(node, "insecure-skip-tls-verify", path);
        cluster.sourceFile = origin_;
        return cluster;
    }

    UserEntry readUser(const YAML::Node& node, const std::string& path) const {
        UserEntry user;
        user.token = string(node, "token", path);
        user.tokenFile = localPath(string(node, "tokenFile", path));
        user.clientCertificate = localPath(string(node, "client-certificate", path));
        user.clientCertificateData = base64Field(node, "client-certificate-data", path);
        user.clientKey = localPath(string(node, "client-key", path));
        user.clientKeyData = base64Field(node, "client-key-data", path);
        user.username = string(node, "username", path);
        user.password = string(node, "password", path);
        const YAML::Node exec = node["exec"];
        if (exec && !exec.IsNull()) user.exec = readExec(exec, path + ".exec");
        user.sourceFile = origin_;
        return user;
    }

    ExecConfig readExec(const YAML::Node& node, const std::string& path) const {
        if (!node.IsMap()) fail(node, path, "expected a mapping");
        ExecConfig exec;
        exec.apiVersion = string(node, "apiVersion", path);
        if (exec.apiVersion != kExecApiV1 && exec.apiVersion != kExecApiV1beta1) {
            fail(node, path + ".apiVersion",
                 exec.apiVersion.empty()
                     ? std::string("missing; use ") + kExecApiV1
                     : "unsupported " + inQuotes(exec.apiVersion) + "; use " + kExecApiV1);
        }
        exec.command = string(node, "command", path);
        if (exec.command.empty()) fail(node, path + ".command", "missing");
        // Only a command with a slash is a path; a bare name is looked up in PATH.
        if (exec.command.find('/') != std::string::npos) exec.command = localPath(exec.command);
        const YAML::Node args = node["args"];
        if (args && !args.IsNull()) {
            if (!args.IsSequence()) fail(args, path + ".args", "expected a list of strings");
            for (size_t i = 0; i < args.size(); ++i)
                exec.args.push_back(scalar(args[i], path + ".args[" + std::to_string(i) + "]"));
        }
        const YAML::Node env = node["env"];
        if (env && !env.IsNull()) {
            if (!env.IsSequence()) fail(env, path + ".env", "expected a list of {name, value}");
            for (size_t i = 0; i < env.size(); ++i) {
                std::string itemPath = path + ".env[" + std::to_string(i) + "]";
                if (!env[i].IsMap())
                    fail(env[i], itemPath, "expected a mapping with name and value");
                std::string name = string(env[i], "name", itemPath);
                if (name.empty()) fail(env[i], itemPath, "missing name");
                exec.env.emplace_back(name, string(env[i], "value", itemPath));
            }
        }
        exec.installHint = string(node, "installHint", path);
        exec.provideClusterInfo = boolean(node, "provideClusterInfo", path);
        return exec;
    }

    std::string scalar(const YAML::Node& node, const std::string& path) const {
        if (!node || node.IsNull()) return {};
        if (!node.IsScalar()) fail(node, path, "expected a string");
        return node.Scalar();
    }

    std::string string(const YAML::Node& map, const char* key, const std::string& path) const {
        return scalar(map[key], path.empty() ? key : path + "." + key);
    }

    bool boolean(const YAML::Node& map, const char* key, const std::string& path) const {
        const YAML::Node node = map[key];
        std::string keyPath = path + "." + key;
        if (!node || node.IsNull()) return false;
        static const std::set<std::string> kTrue = {"true", "True", "TRUE", "yes", "Yes", "on"};
        static const std::set<std::string> kFalse = {"false", "False", "FALSE", "no", "No", "off"};
        if (node.IsScalar() && kTrue.count(node.Scalar())) return true;
        if (node.IsScalar() && kFalse.count(node.Scalar())) return false;
        fail(node, keyPath, "expected true or false");
    }

    std::string base64Field(const YAML::Node& map, const char* key, const std::string& path) const {
        std::string text = string(map, key, path);
        if (text.empty()) return {};
        auto decoded = base64Decode(text);
        if (!decoded) fail(map[key], path + "." + key, "not valid base64");  // never echo it
        return *decoded;
    }

    std::string localPath(const std::string& path) const {
        if (path.empty() || path[0] == '/' || baseDir_.empty()) return path;
        return baseDir_.back() == '/' ? baseDir_ + path : baseDir_ + "/" + path;
    }

    const std::string& origin_;
    const std::string& baseDir_;
};

int yamlLine(const YAML::Mark& mark) {
    return mark.line >= 0 ? mark.line + 1 : 0;
}

}  // namespace

KubeConfig parseKubeConfig(const std::string& yamlText, const std::string& origin,
                           const std::string& baseDir) {
    KubeConfigReader reader(origin, baseDir);
    try {
        return reader.read(YAML::Load(yamlText));
    } catch (const ConfigError&) {
        throw;
    } catch (const YAML::Exception& e) {
        std::string message = "kubeconfig " + origin + ": ";
        if (yamlLine(e.mark) > 0) message += "line " + std::to_string(yamlLine(e.mark)) + ": ";
        throw ConfigError(message + (e.msg.empty() ? "not valid YAML" : e.msg));
    } catch (const std::exception& e) {
        throw ConfigError("kubeconfig " + origin + ": not valid YAML (" + e.what() + ")");
    }
}

KubeConfig loadKubeConfigFile(const std::string& path) {
    std::string text = readFileOrThrow(path, "cannot read kubeconfig");
    auto slash = path.rfind('/');
    std::string baseDir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    if (baseDir.empty() || baseDir[0] != '/') {
        std::error_code ignored;
        std::string cwd = std::filesystem::current_path(ignored).string();
        if (!cwd.empty()) baseDir = cwd + "/" + baseDir;
    }
    return parseKubeConfig(text, path, baseDir);
}

KubeConfig mergeKubeConfigs(const std::vector<KubeConfig>& configs) {
    KubeConfig merged;
    for (const auto& config : configs) {
        merged.clusters.insert(config.clusters.begin(), config.clusters.end());  // keeps first
        merged.users.insert(config.users.begin(), config.users.end());
        merged.contexts.insert(config.contexts.begin(), config.contexts.end());
        if (merged.currentContext.empty()) merged.currentContext = config.currentContext;
        merged.files.insert(merged.files.end(), config.files.begin(), config.files.end());
    }
    return merged;
}

}  // namespace rossoctl::kube
