#include "rossoctl/kube/discovery.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "rossoctl/kube/json_depth.hpp"

namespace rossoctl::kube {

namespace {

constexpr std::chrono::minutes kCacheTtl{10};
constexpr const char* kSandboxGroup = "agents.x-k8s.io";

long long unixSeconds(std::chrono::system_clock::time_point when) {
    return std::chrono::duration_cast<std::chrono::seconds>(when.time_since_epoch()).count();
}

// APIGroup (/apis/GROUP) or APIVersions (/api) into versions plus the preferred one.
ApiGroupInfo parseGroup(const json& body) {
    ApiGroupInfo info;
    if (auto versions = body.find("versions"); versions != body.end() && versions->is_array()) {
        for (const auto& version : *versions) {
            if (version.is_string()) {
                info.versions.push_back(version.get<std::string>());
            } else if (version.is_object()) {
                info.versions.push_back(version.value("version", std::string{}));
            }
        }
    }
    if (auto preferred = body.find("preferredVersion");
        preferred != body.end() && preferred->is_object()) {
        info.preferredVersion = preferred->value("version", std::string{});
    }
    if (info.preferredVersion.empty() && !info.versions.empty()) {
        info.preferredVersion = info.versions.front();
    }
    return info;
}

// mkdir -p where each directory created is private to the user.
bool makePrivateDirs(const std::string& path) {
    for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
        std::string prefix = path.substr(0, slash);
        if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return false;
        if (slash == std::string::npos) break;
    }
    return chmod(path.c_str(), 0700) == 0;
}

std::string cacheFileName(const std::string& group) {
    return (group.empty() ? std::string("core") : group) + ".json";
}

}  // namespace

Discovery::Discovery(Client& client, const Clock& clock, std::string cacheDir)
    : client_(client), clock_(clock), cacheDir_(std::move(cacheDir)) {}

std::optional<std::string> Discovery::readCache(const std::string& group) const {
    if (cacheDir_.empty()) return std::nullopt;
    std::ifstream in(cacheDir_ + "/" + cacheFileName(group));
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    // The cache holds what a server sent: as deep a body is refused here as from the server.
    json entry = nestsDeeperThan(text.str())
                     ? json()
                     : json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (!entry.is_object() || !entry.contains("fetchedAt") || !entry.contains("body")) {
        return std::nullopt;
    }
    long long fetchedAt = entry.value("fetchedAt", 0LL);
    long long age = unixSeconds(clock_.now()) - fetchedAt;
    // A timestamp from the future (clock moved back) is as untrustworthy as an old one.
    if (age < 0 || age >= std::chrono::seconds(kCacheTtl).count()) return std::nullopt;
    if (!entry["body"].is_string()) return std::nullopt;
    return entry["body"].get<std::string>();
}

void Discovery::writeCache(const std::string& group, const std::string& body) const {
    if (cacheDir_.empty() || !makePrivateDirs(cacheDir_)) return;
    json entry = {{"fetchedAt", unixSeconds(clock_.now())}, {"body", body}};
    std::string text = entry.dump();
    std::string finalPath = cacheDir_ + "/" + cacheFileName(group);
    std::string tempPath = finalPath + ".XXXXXX";
    // mkstemp creates the file 0600; rename makes the new content appear all at once.
    int fd = mkstemp(tempPath.data());
    if (fd < 0) return;
    bool ok = fchmod(fd, 0600) == 0;
    for (size_t written = 0; ok && written < text.size();) {
        ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) continue;
        ok = n > 0;
        if (ok) written += static_cast<size_t>(n);
    }
    ok = ::close(fd) == 0 && ok;
    if (!ok || std::rename(tempPath.c_str(), finalPath.c_str()) != 0) unlink(tempPath.c_str());
}

std::optional<ApiGroupInfo> Discovery::group(const std::string& name, bool fresh) {
    if (auto memo = memo_.find(name); !fresh && memo != memo_.end()) return memo->second;
    std::optional<std::string> body = fresh ? std::nullopt : readCache(name);
    if (!body) {
        try {
            json fetched =
                client_.getPath(name.empty() ? "/api" : "/apis/" + name, kMaxObjectBodyBytes);
            body = fetched.dump();
        } catch (const ApiError& error) {
            // Not served is remembered for this run only, so installing it shows up at once.
            if (!error.isNotFound()) throw;
            memo_[name] = std::nullopt;
            return std::nullopt;
        }
        writeCache(name, *body);
    }
    json parsed =
        nestsDeeperThan(*body) ? json() : json::parse(*body, nullptr, /*allow_exceptions=*/false);
    std::optional<ApiGroupInfo> info;
    if (parsed.is_object()) info = parseGroup(parsed);
    if (info && info->versions.empty()) info.reset();
    memo_[name] = info;
    return info;
}

std::optional<std::string> Discovery::pickVersion(const std::string& groupName,
                                                  const std::vector<std::string>& wanted) {
    auto info = group(groupName);
    if (!info) return std::nullopt;
    for (const auto& version : wanted) {
        for (const auto& served : info->versions) {
            if (served == version) return version;
        }
    }
    return std::nullopt;
}

ResourceRef Discovery::sandboxes() {
    if (auto version = pickVersion(kSandboxGroup, {"v1beta1", "v1alpha1"})) {
        return resources::sandboxes(*version);
    }
    throw Error(std::string("the ") + kSandboxGroup +
                " API is not served by this cluster; install agent-sandbox");
}

std::string defaultDiscoveryCacheDir(const Environment& env, const std::string& server) {
    std::string base;
    if (env.getenv) {
        if (auto xdg = env.getenv("XDG_CACHE_HOME"); xdg && !xdg->empty()) base = *xdg;
    }
    if (base.empty()) {
        if (env.home.empty()) return {};
        base = env.home + "/.cache";
    }
    std::string host = server;
    if (auto scheme = host.find("://"); scheme != std::string::npos) host.erase(0, scheme + 3);
    // One directory per server: everything but letters, digits, '.' and '-' becomes '_'.
    for (char& c : host) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
    }
    return base + "/rossoctl/discovery/" + host;
}

}  // namespace rossoctl::kube
