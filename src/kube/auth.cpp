// Credentials per request: token, token file, basic auth, or an exec plugin's cached reply.
#include "rossoctl/kube/auth.hpp"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "rossoctl/errors.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/timestamp.hpp"
#include "text.hpp"

namespace rossoctl::kube {

namespace {

using text::trimmed;

// client-go re-reads a token file at least this often even when it looks unchanged.
constexpr auto kTokenFileMaxAge = std::chrono::minutes(1);

// Reads an optional string field of the reply's status; type errors name only the field.
std::string statusString(const nlohmann::json& status, const char* field) {
    auto found = status.find(field);
    if (found == status.end() || found->is_null()) return {};
    if (!found->is_string())
        throw ConfigError(std::string("exec plugin reply: status.") + field + " is not a string");
    return found->get<std::string>();
}

std::string execInfoJson(const RestConfig& config) {
    nlohmann::json spec = {{"interactive", false}};
    if (config.exec->provideClusterInfo) {
        nlohmann::json cluster = {{"server", config.server}};
        if (!config.tlsServerName.empty()) cluster["tls-server-name"] = config.tlsServerName;
        if (config.insecureSkipTlsVerify) cluster["insecure-skip-tls-verify"] = true;
        if (!config.caData.empty())
            cluster["certificate-authority-data"] = base64Encode(config.caData);
        if (!config.proxyUrl.empty()) cluster["proxy-url"] = config.proxyUrl;
        spec["cluster"] = cluster;
    }
    nlohmann::json info = {
        {"apiVersion", config.exec->apiVersion}, {"kind", "ExecCredential"}, {"spec", spec}};
    return info.dump();
}

}  // namespace

ExecCredential parseExecCredential(const std::string& json, const std::string& expectedApiVersion) {
    // The reply may hold secrets: parse errors must not quote any of it.
    nlohmann::json reply = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (reply.is_discarded() || !reply.is_object())
        throw ConfigError("exec plugin reply is not a JSON ExecCredential object");
    if (reply.value("kind", nlohmann::json()) != "ExecCredential")
        throw ConfigError("exec plugin reply: kind is not ExecCredential");
    if (reply.value("apiVersion", nlohmann::json()) != expectedApiVersion)
        throw ConfigError("exec plugin reply: apiVersion does not match the kubeconfig's \"" +
                          expectedApiVersion + "\"");
    auto status = reply.find("status");
    if (status == reply.end() || !status->is_object())
        throw ConfigError("exec plugin reply has no status");

    ExecCredential credential;
    credential.token = statusString(*status, "token");
    credential.clientCertificateData = statusString(*status, "clientCertificateData");
    credential.clientKeyData = statusString(*status, "clientKeyData");
    std::string expiration = statusString(*status, "expirationTimestamp");
    if (!expiration.empty()) {
        credential.expiration = parseTimestamp(expiration);
        if (!credential.expiration)
            throw ConfigError(
                "exec plugin reply: status.expirationTimestamp is not an RFC 3339 time");
    }
    if (credential.clientCertificateData.empty() != credential.clientKeyData.empty())
        throw ConfigError(
            "exec plugin reply: status.clientCertificateData and status.clientKeyData must be "
            "set together");
    if (credential.token.empty() && credential.clientCertificateData.empty())
        throw ConfigError("exec plugin reply has neither a token nor a client certificate");
    return credential;
}

Authenticator::Authenticator(const RestConfig& config, const Clock& clock,
                             std::unique_ptr<ExecPluginRunner> runner)
    : config_(config), clock_(clock), runner_(std::move(runner)) {}

bool Authenticator::usesPlugin() const {
    // Like client-go, a plugin only runs when no static credential is configured.
    return config_.exec.has_value() && config_.token.empty() && config_.tokenFile.empty() &&
           config_.username.empty() && config_.password.empty();
}

const std::string& Authenticator::currentFileToken(bool force) {
    struct stat info {};
    if (::stat(config_.tokenFile.c_str(), &info) != 0) {
        if (!fileToken_.empty()) return fileToken_;  // keep the last good token, as client-go
        if (!config_.token.empty()) return fileToken_ = config_.token;
        fileToken_ = trimmed(readFileOrThrow(config_.tokenFile, "cannot read token file"));
        return fileToken_;
    }
    long long mtime =
        static_cast<long long>(info.st_mtim.tv_sec) * 1000000000LL + info.st_mtim.tv_nsec;
    bool changed = mtime != fileTokenMtime_ ||
                   static_cast<long long>(info.st_size) != fileTokenSize_ ||
                   static_cast<unsigned long long>(info.st_ino) != fileTokenInode_;
    bool stale = clock_.now() - fileTokenReadAt_ >= kTokenFileMaxAge;
    if (force || changed || stale || fileToken_.empty()) {
        fileToken_ = trimmed(readFileOrThrow(config_.tokenFile, "cannot read token file"));
        fileTokenMtime_ = mtime;
        fileTokenSize_ = static_cast<long long>(info.st_size);
        fileTokenInode_ = static_cast<unsigned long long>(info.st_ino);
        fileTokenReadAt_ = clock_.now();
    }
    return fileToken_;
}

std::optional<std::string> Authenticator::authorization() {
    if (!config_.tokenFile.empty()) {
        const std::string& token = currentFileToken(false);
        if (!token.empty()) return "Bearer " + token;
    }
    if (!config_.token.empty()) return "Bearer " + config_.token;
    if (!config_.username.empty() || !config_.password.empty())
        return "Basic " + base64Encode(config_.username + ":" + config_.password);
    if (!usesPlugin()) return std::nullopt;
    refreshPluginIfNeeded();
    if (pluginCredential_->token.empty()) return std::nullopt;
    return "Bearer " + pluginCredential_->token;
}

std::optional<ClientCertificate> Authenticator::pluginCertificate() {
    if (!usesPlugin()) return std::nullopt;
    refreshPluginIfNeeded();
    if (pluginCredential_->clientCertificateData.empty()) return std::nullopt;
    return ClientCertificate{pluginCredential_->clientCertificateData,
                             pluginCredential_->clientKeyData};
}

bool Authenticator::invalidate() {
    if (usesPlugin()) {
        pluginCredential_.reset();
        return true;
    }
    if (!config_.tokenFile.empty()) {
        std::string before = fileToken_;
        try {
            return currentFileToken(true) != before;  // retrying helps only with a new token
        } catch (const Error&) {
            return false;
        }
    }
    return false;
}

void Authenticator::refreshPluginIfNeeded() {
    if (pluginCredential_ &&
        (!pluginCredential_->expiration || clock_.now() < *pluginCredential_->expiration))
        return;
    pluginCredential_.reset();
    std::string reply = runner_->run(*config_.exec, execInfoJson(config_));
    pluginCredential_ = parseExecCredential(reply, config_.exec->apiVersion);
}

}  // namespace rossoctl::kube
