#include "rossoctl/app/run/report.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/errors.hpp"

namespace rossoctl::app::run {

using nlohmann::json;

namespace {

// The server wrote these objects: a member of the wrong type reads as absent, never throws.
json memberOf(const json& object, const char* key, json::value_t type) {
    if (!object.is_object()) return json(type);
    const auto found = object.find(key);
    return found != object.end() && found->type() == type ? *found : json(type);
}
json objectAt(const json& object, const char* key) {
    return memberOf(object, key, json::value_t::object);
}
json arrayAt(const json& object, const char* key) {
    return memberOf(object, key, json::value_t::array);
}
std::string textAt(const json& object, const char* key) {
    return memberOf(object, key, json::value_t::string).get<std::string>();
}
long numberAt(const json& object, const char* key) {
    const json value = object.is_object() && object.contains(key) ? object[key] : json();
    return value.is_number_integer() ? value.get<long>() : 0;
}

}  // namespace

std::string imageDigest(const std::string& imageID) {
    const auto at = imageID.rfind("sha256:");
    if (at == std::string::npos) return {};
    std::string digest = imageID.substr(at);
    if (digest.size() != 7 + 64) return {};
    for (char c : digest.substr(7))
        if (!std::isxdigit(static_cast<unsigned char>(c))) return {};
    return digest;
}

RanPod ranPodOf(const json& pod, const std::string& container) {
    RanPod ran;
    const json spec = objectAt(pod, "spec");
    ran.node = textAt(spec, "nodeName");
    ran.runtimeClass = textAt(spec, "runtimeClassName");
    for (const auto& item : arrayAt(spec, "containers"))
        if (textAt(item, "name") == container) ran.image = textAt(item, "image");
    for (const auto& item : arrayAt(objectAt(pod, "status"), "containerStatuses")) {
        if (textAt(item, "name") != container) continue;
        ran.imageID = textAt(item, "imageID");
        if (ran.image.empty()) ran.image = textAt(item, "image");
    }
    return ran;
}

std::string claimShutdownTime(const json& claim) {
    return textAt(objectAt(objectAt(claim, "spec"), "lifecycle"), "shutdownTime");
}

std::string claimColdStartReason(const json& claim, const std::optional<json>& pool) {
    const json spec = objectAt(claim, "spec");
    if (!arrayAt(spec, "env").empty() || !arrayAt(spec, "volumeClaimTemplates").empty())
        return "the claim sets env or volumeClaimTemplates, so the claim controller bypasses the "
               "warm pool";
    const std::string name = textAt(objectAt(spec, "warmPoolRef"), "name");
    if (!pool)
        return fmt::format(
            "the claim controller created a Sandbox from SandboxWarmPool {}'s "
            "template: none of its sandboxes could be adopted",
            name);
    const json poolStatus = objectAt(*pool, "status");
    const WarmPoolStatus status{static_cast<int>(numberAt(poolStatus, "replicas")),
                                static_cast<int>(numberAt(poolStatus, "readyReplicas"))};
    if (status.ready == 0)
        return fmt::format(
            "SandboxWarmPool {} had no ready sandbox ({} of {} ready when the run "
            "asked); the claim controller created one from its template",
            name, status.ready, status.replicas);
    return fmt::format(
        "SandboxWarmPool {} had {} of {} sandboxes ready when the run asked, but "
        "none could be adopted (taken by another claim, or no pod IP within the "
        "controller's grace period); the claim controller created one from its "
        "template",
        name, status.ready, status.replicas);
}

json runReportJson(const std::string& namespaceName, const RunOutcome& outcome) {
    json artifacts = json::array();
    for (const auto& artifact : outcome.artifacts)
        artifacts.push_back(
            {{"path", artifact.path}, {"bytes", artifact.bytes}, {"sha256", artifact.sha256}});
    const auto& d = outcome.durations;
    json ended = {{"reason", outcome.ended.reason}};
    if (!outcome.ended.message.empty()) ended["message"] = outcome.ended.message;
    if (!outcome.ended.memoryLimit.empty()) ended["memoryLimit"] = outcome.ended.memoryLimit;
    json report = {{"exitCode", outcome.exitCode},
                   {"ended", ended},
                   {"timedOut", outcome.timedOut},
                   {"pod", outcome.pod},
                   {"image", outcome.ran.image},
                   {"imageID", outcome.ran.imageID},
                   {"imageDigest", imageDigest(outcome.ran.imageID)},
                   {"runtimeClass", outcome.ran.runtimeClass},
                   {"node", outcome.ran.node},
                   {"start", outcome.warm ? "warm" : "cold"},
                   {"warm", outcome.warm},
                   {"artifacts", artifacts},
                   {"artifactsPartial", !outcome.artifactsPartial.empty()},
                   {"durations",
                    {{"schedule", d.schedule.count()},
                     {"upload", d.upload.count()},
                     {"run", d.run.count()},
                     {"collect", d.collect.count()},
                     {"cleanup", d.cleanup.count()},
                     {"total", (d.schedule + d.upload + d.run + d.collect + d.cleanup).count()}}}};
    if (!namespaceName.empty()) report["namespace"] = namespaceName;
    if (!outcome.claim.empty()) report["claim"] = outcome.claim;
    if (!outcome.warm && !outcome.coldStartReason.empty())
        report["coldStartReason"] = outcome.coldStartReason;
    if (!outcome.rejected.empty()) report["rejectedArtifacts"] = outcome.rejected;
    if (!outcome.artifactsPartial.empty())
        report["artifactsPartialReason"] = outcome.artifactsPartial;
    return report;
}

json runResultJson(const RunOutcome& outcome, const CappedText& stdoutText,
                   const CappedText& stderrText, const std::string& namespaceName) {
    json result = runReportJson(namespaceName, outcome);
    result["stdout"] = stdoutText.text;
    result["stderr"] = stderrText.text;
    for (const auto& [name, capped] :
         {std::pair{"stdout", &stdoutText}, std::pair{"stderr", &stderrText}}) {
        if (capped->dropped == 0) continue;
        result[std::string(name) + "Truncated"] = true;
        result[std::string(name) + "DroppedBytes"] = capped->dropped;
    }
    return result;
}

namespace {

// Closes a descriptor and removes the temporary file unless it was renamed into place.
class TempFile {
  public:
    TempFile(int dir, std::string name, int fd) : dir_(dir), name_(std::move(name)), fd_(fd) {}
    ~TempFile() {
        if (fd_ >= 0) ::close(fd_);
        if (!renamed_) ::unlinkat(dir_, name_.c_str(), 0);
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    int fd() const { return fd_; }
    const std::string& name() const { return name_; }
    void closeFile() {
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) throw std::system_error(errno, std::generic_category(), "close");
    }
    void markRenamed() { renamed_ = true; }

  private:
    int dir_;
    std::string name_;
    int fd_;
    bool renamed_ = false;
};

class Descriptor {
  public:
    explicit Descriptor(int fd) : fd_(fd) {}
    ~Descriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    int get() const { return fd_; }

  private:
    int fd_;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw Error(fmt::format("--report {}: {}: {}", path, what, std::strerror(errno)));
}

}  // namespace

void writeReportFile(const std::string& path, const std::string& text, Random& random) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const std::string base = target.filename().string();
    fs::path directory = target.parent_path();
    if (directory.empty()) directory = ".";
    const Descriptor dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0) fail(path, "cannot open its directory");
    // O_EXCL with a fresh name: the file is ours from its first byte, and no link is followed.
    std::optional<TempFile> temp;
    for (int attempt = 0; !temp; ++attempt) {
        const std::string name = fmt::format(".{}.{:08x}.tmp", base, random.next());
        const int fd = ::openat(dir.get(), name.c_str(),
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0)
            temp.emplace(dir.get(), name, fd);
        else if (errno != EEXIST || attempt >= 100)
            fail(path, "cannot create a file beside it");
    }
    // The mode is the report's whatever the umask: CI readers are other users.
    if (::fchmod(temp->fd(), 0644) != 0) fail(path, "cannot set its mode");
    for (size_t written = 0; written < text.size();) {
        const ssize_t n = ::write(temp->fd(), text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(path, "cannot write it");
        written += static_cast<size_t>(n);
    }
    if (::fsync(temp->fd()) != 0) fail(path, "cannot write it");
    try {
        temp->closeFile();
    } catch (const std::system_error&) {
        fail(path, "cannot write it");
    }
    // rename replaces a symlink at the path itself: what it pointed to is left alone.
    if (::renameat(dir.get(), temp->name().c_str(), dir.get(), base.c_str()) != 0)
        fail(path, "cannot put it in place");
    temp->markRenamed();
    ::fsync(dir.get());
}

std::string interruptedRunTarget(const RunOutcome& outcome, const std::string& state) {
    if (!outcome.pod.empty() || outcome.claim.empty())
        return fmt::format("pod {} {}", outcome.pod.empty() ? "(none yet)" : outcome.pod, state);
    return fmt::format("sandboxclaim {} {} (the pool had not given it a pod yet)", outcome.claim,
                       state);
}

}  // namespace rossoctl::app::run
