#include "rossoctl/app/run/artifacts.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "rossoctl/errors.hpp"

namespace rossoctl::app::run {
namespace {

std::vector<std::string> splitPath(const std::string& path) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        if (slash == std::string::npos) slash = path.size();
        std::string part = path.substr(start, slash - start);
        if (!part.empty() && part != ".") parts.push_back(part);
        start = slash + 1;
    }
    return parts;
}

std::string hex(const unsigned char* bytes, size_t size) {
    std::string out;
    for (size_t i = 0; i < size; ++i) out += fmt::format("{:02x}", bytes[i]);
    return out;
}

class Sha256 {
  public:
    Sha256() : context_(EVP_MD_CTX_new()) {
        if (!context_ || EVP_DigestInit_ex(context_, EVP_sha256(), nullptr) != 1)
            throw Error("sha256: OpenSSL could not start a digest");
    }
    ~Sha256() { EVP_MD_CTX_free(context_); }
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(std::string_view bytes) { EVP_DigestUpdate(context_, bytes.data(), bytes.size()); }
    std::string hexDigest() {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned length = 0;
        EVP_DigestFinal_ex(context_, digest, &length);
        return hex(digest, length);
    }

  private:
    EVP_MD_CTX* context_;
};

class Fd {
  public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    ~Fd() { reset(); }
    Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset();
            fd_ = std::exchange(other.fd_, -1);
        }
        return *this;
    }
    int get() const { return fd_; }
    void reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

  private:
    int fd_;
};

}  // namespace

std::optional<std::string> safeRelativePath(const std::string& tarPath) {
    if (tarPath.empty() || tarPath.front() == '/' || tarPath.find('\0') != std::string::npos)
        return std::nullopt;
    std::string joined;
    for (const auto& part : splitPath(tarPath)) {
        if (part == "..") return std::nullopt;
        joined += (joined.empty() ? "" : "/") + part;
    }
    return joined;
}

std::string sha256Hex(std::string_view bytes) {
    Sha256 digest;
    digest.update(bytes);
    return digest.hexDigest();
}

struct ArtifactCollector::Impl {
    std::string dir;
    Fd root;
    TarReader reader{{}};
    // the entry being read
    bool active = false;
    Artifact current;
    std::optional<Sha256> digest;
    Fd file;
    std::vector<std::pair<std::string, std::string>> symlinks;  // path, target

    // Opens (creating) the directory chain below root without following any symlink.
    Fd openDirectory(const std::vector<std::string>& parts, size_t count, const std::string& path) {
        Fd current(::dup(root.get()));
        for (size_t i = 0; i < count; ++i) {
            if (::mkdirat(current.get(), parts[i].c_str(), 0755) != 0 && errno != EEXIST)
                throw Error(fmt::format("artifact {}: cannot create directory: {}", path,
                                        std::strerror(errno)));
            Fd next(::openat(current.get(), parts[i].c_str(),
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (next.get() < 0) return Fd();
            current = std::move(next);
        }
        return current;
    }
};

ArtifactCollector::ArtifactCollector(std::string dir) : impl_(std::make_unique<Impl>()) {
    impl_->dir = std::move(dir);
    if (!impl_->dir.empty()) {
        std::error_code error;
        std::filesystem::create_directories(impl_->dir, error);
        impl_->root = Fd(::open(impl_->dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (impl_->root.get() < 0)
            throw Error(fmt::format("--artifacts {}: cannot open directory: {}", impl_->dir,
                                    std::strerror(errno)));
    }
    Impl& impl = *impl_;
    TarReader::Handler handler;
    handler.begin = [this, &impl](const TarEntry& entry) {
        impl.active = false;
        const auto path = safeRelativePath(entry.path);
        if (!path) {
            rejected_.push_back(fmt::format("{}: absolute or contains \"..\"", entry.path));
            return;
        }
        if (path->empty()) return;  // the archive's "."
        const auto parts = splitPath(*path);
        if (entry.type == TarEntryType::Directory) {
            if (!impl.dir.empty() && impl.openDirectory(parts, parts.size(), *path).get() < 0)
                rejected_.push_back(fmt::format("{}: a symlink or file is in the way", *path));
            return;
        }
        if (entry.type == TarEntryType::Symlink) {
            if (!impl.dir.empty()) impl.symlinks.emplace_back(*path, entry.linkTarget);
            return;
        }
        if (entry.type != TarEntryType::File) {
            rejected_.push_back(fmt::format("{}: not a regular file, directory or symlink", *path));
            return;
        }
        impl.current = Artifact{*path, 0, {}};
        impl.digest.emplace();
        if (!impl.dir.empty()) {
            Fd parent = impl.openDirectory(parts, parts.size() - 1, *path);
            if (parent.get() < 0) {
                rejected_.push_back(fmt::format("{}: a parent is a symlink or a file", *path));
                return;
            }
            // Never through a symlink; never setuid, setgid or sticky.
            impl.file = Fd(::openat(parent.get(), parts.back().c_str(),
                                    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                                    (entry.mode & 0755) | 0600));
            if (impl.file.get() < 0) {
                rejected_.push_back(
                    fmt::format("{}: cannot write ({})", *path, std::strerror(errno)));
                return;
            }
        }
        impl.active = true;
    };
    handler.data = [&impl](std::string_view bytes) {
        if (!impl.active) return;
        impl.current.bytes += bytes.size();
        impl.digest->update(bytes);
        while (impl.file.get() >= 0 && !bytes.empty()) {
            const ssize_t n = ::write(impl.file.get(), bytes.data(), bytes.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
                throw Error(fmt::format("artifact {}: write failed: {}", impl.current.path,
                                        std::strerror(errno)));
            bytes.remove_prefix(static_cast<size_t>(n));
        }
    };
    handler.end = [this, &impl] {
        if (!impl.active) return;
        impl.active = false;
        impl.file.reset();
        impl.current.sha256 = impl.digest->hexDigest();
        artifacts_.push_back(impl.current);
    };
    impl_->reader = TarReader(std::move(handler));
}

ArtifactCollector::~ArtifactCollector() = default;

void ArtifactCollector::feed(std::string_view bytes) {
    impl_->reader.feed(bytes);
}

void ArtifactCollector::finish() {
    impl_->reader.finish();
    // Symlinks last, so no file above was written through one; each target is walked on disk
    // and refused when it leaves the directory or passes through another symlink.
    for (const auto& [path, target] : impl_->symlinks) {
        auto parts = splitPath(path);
        std::vector<std::string> resolved(parts.begin(), parts.end() - 1);
        bool escapes = target.empty() || target.front() == '/';
        for (const auto& part : splitPath(target)) {
            if (escapes) break;
            if (part == "..") {
                if (resolved.empty())
                    escapes = true;
                else
                    resolved.pop_back();
                continue;
            }
            resolved.push_back(part);
            std::string sofar;
            for (const auto& p : resolved) sofar += (sofar.empty() ? "" : "/") + p;
            struct stat info {};
            if (::fstatat(impl_->root.get(), sofar.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISLNK(info.st_mode))
                escapes = true;
        }
        if (escapes) {
            rejected_.push_back(
                fmt::format("{}: symlink to {} leaves the directory", path, target));
            continue;
        }
        Fd parent = impl_->openDirectory(parts, parts.size() - 1, path);
        if (parent.get() < 0 ||
            ::symlinkat(target.c_str(), parent.get(), parts.back().c_str()) != 0)
            rejected_.push_back(fmt::format("{}: cannot create symlink", path));
    }
}

}  // namespace rossoctl::app::run
