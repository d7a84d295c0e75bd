#include "rossoctl/app/extract.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <utility>

#include "rossoctl/app/run/tar.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/kube/digest.hpp"
#include "rossoctl/unique_fd.hpp"

namespace rossoctl::app {
namespace {

using run::TarEntry;
using run::TarEntryType;
using run::TarReader;

std::vector<std::string> splitPath(std::string_view path) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= path.size()) {
        size_t slash = path.find('/', start);
        if (slash == std::string_view::npos) slash = path.size();
        std::string part(path.substr(start, slash - start));
        if (!part.empty() && part != ".") parts.push_back(part);
        start = slash + 1;
    }
    return parts;
}

// openat2 below `dir`; kernels before 5.6 lack it, and then a single component opened with
// O_NOFOLLOW is just as safe (names never hold '/' or "..": safeRelativePath saw to that).
int openBeneath(int dir, const char* path, uint64_t flags, uint64_t mode, uint64_t resolve) {
    open_how how{};
    how.flags = flags | O_CLOEXEC;
    how.mode = mode;
    how.resolve = resolve;
    for (;;) {
        const long fd = ::syscall(SYS_openat2, dir, path, &how, sizeof how);
        if (fd >= 0 || errno != EINTR) {
            if (fd < 0 && errno == ENOSYS && (resolve & RESOLVE_NO_SYMLINKS))
                return ::openat(dir, path, static_cast<int>(flags | O_CLOEXEC | O_NOFOLLOW),
                                static_cast<mode_t>(mode));
            return static_cast<int>(fd);
        }
    }
}

constexpr uint64_t kNoLinks = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;

// Whether `path` (links followed) names an existing object below the directory `root`.
bool resolvesBeneath(int root, const std::string& rootPath, const std::string& path) {
    UniqueFd fd(
        openBeneath(root, path.c_str(), O_PATH, 0, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS));
    if (fd.get() >= 0) return true;
    if (errno != ENOSYS) return false;
    // Old kernels: compare canonical paths (nothing else writes here while we check).
    std::error_code error;
    const auto base = std::filesystem::canonical(rootPath, error);
    const auto full = std::filesystem::canonical(rootPath + "/" + path, error);
    if (error) return false;
    const auto relative = full.lexically_relative(base).string();
    return !relative.empty() && relative != ".." && !relative.starts_with("../");
}

// A link target, read as text from the link's own directory, stays inside: not absolute, no
// NUL, never above the top. The on-disk check after all links exist is the one that counts.
bool targetLooksInside(const std::string& linkPath, const std::string& target) {
    if (target.empty() || target.front() == '/' || target.find('\0') != std::string::npos)
        return false;
    long depth = static_cast<long>(splitPath(linkPath).size()) - 1;
    for (const auto& part : splitPath(target))
        if ((depth += part == ".." ? -1 : 1) < 0) return false;
    return true;
}

}  // namespace

void addRefusal(std::vector<std::string>& refusals, uint64_t& unlisted, std::string line) {
    constexpr size_t kMaxLine = 300;
    if (refusals.size() < kMaxRefusalsListed) {
        if (line.size() > kMaxLine) line = line.substr(0, kMaxLine) + "...";
        refusals.push_back(std::move(line));
        return;
    }
    const std::string counted = fmt::format("and {} more entries refused", ++unlisted);
    if (unlisted == 1)
        refusals.push_back(counted);
    else
        refusals.back() = counted;
}

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
    kube::Sha256 digest;
    digest.update(bytes);
    return digest.hexDigest();
}

struct TarExtractor::Impl {
    std::string dir;
    ExtractLimits limits;
    UniqueFd root;
    TarReader reader{{}};
    uint64_t entries = 0;
    uint64_t totalBytes = 0;
    bool active = false;  // the current entry is a file being written or hashed
    ExtractedFile current;
    std::optional<kube::Sha256> digest;
    UniqueFd file;
    std::vector<std::pair<std::string, std::string>> symlinks;  // path, target
    std::vector<std::string> createdLinks;
    bool linksDone = false;

    // Opens (creating) the first `count` directories of `parts` below root, never through a
    // symlink; -1 when one of them is a link or a file.
    UniqueFd openDirectory(const std::vector<std::string>& parts, size_t count,
                           const std::string& path) {
        UniqueFd current(::fcntl(root.get(), F_DUPFD_CLOEXEC, 0));
        for (size_t i = 0; i < count; ++i) {
            if (::mkdirat(current.get(), parts[i].c_str(), 0755) != 0 && errno != EEXIST)
                throw Error(fmt::format("artifact {}: cannot create directory: {}", path,
                                        std::strerror(errno)));
            UniqueFd next(
                openBeneath(current.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY, 0, kNoLinks));
            if (next.get() < 0) return UniqueFd();
            current = std::move(next);
        }
        return current;
    }

    [[noreturn]] void overLimit(const std::string& what, uint64_t limit, const char* unit,
                                const char* flag) const {
        throw Error(fmt::format("{} is over the limit of {} {}; raise it with {}{}", what, limit,
                                unit, limits.flagPrefix, flag));
    }

    // Pax and long-name headers are bytes the stream makes us read and hold: they count.
    void countMetadata(uint64_t bytes) {
        if (bytes > limits.maxBytes - std::min(totalBytes, limits.maxBytes))
            overLimit(fmt::format("the archive's metadata headers (all entries together {} bytes)",
                                  totalBytes + bytes),
                      limits.maxBytes, "bytes", "bytes");
        totalBytes += bytes;
    }

    void countEntry(const TarEntry& entry, const std::string& shown) {
        if (++entries > limits.maxEntries)
            overLimit(fmt::format("the archive's entry {} ({})", entries, shown), limits.maxEntries,
                      "entries", "files");
        if (entry.size > limits.maxFileBytes)
            overLimit(fmt::format("{} ({} bytes)", shown, entry.size), limits.maxFileBytes, "bytes",
                      "file-bytes");
        if (entry.size > limits.maxBytes - std::min(totalBytes, limits.maxBytes))
            overLimit(
                fmt::format("{} (all files together {} bytes)", shown, totalBytes + entry.size),
                limits.maxBytes, "bytes", "bytes");
        totalBytes += entry.size;
    }

    // Links last, so nothing above was written through one; then every link must resolve to
    // something that exists below the directory. Removing a link can only make others dangle,
    // never escape, so repeat until a pass removes nothing.
    void createLinks(const std::function<void(std::string)>& refuse) {
        if (linksDone || dir.empty()) return;
        linksDone = true;
        for (const auto& [path, target] : symlinks) {
            if (!targetLooksInside(path, target)) {
                refuse(fmt::format("{}: symlink to {} leaves the directory", path,
                                   std::string_view(target.c_str())));
                continue;
            }
            const auto parts = splitPath(path);
            UniqueFd parent = openDirectory(parts, parts.size() - 1, path);
            // As with files, what is in the way (a file or link, never a directory) goes.
            if (parent.get() >= 0) ::unlinkat(parent.get(), parts.back().c_str(), 0);
            if (parent.get() < 0 ||
                ::symlinkat(target.c_str(), parent.get(), parts.back().c_str()) != 0) {
                refuse(fmt::format("{}: cannot create symlink", path));
                continue;
            }
            createdLinks.push_back(path);
        }
        for (bool removed = true; removed;) {
            removed = false;
            for (auto it = createdLinks.begin(); it != createdLinks.end();) {
                if (resolvesBeneath(root.get(), dir, *it)) {
                    ++it;
                    continue;
                }
                const auto parts = splitPath(*it);
                UniqueFd parent = openDirectory(parts, parts.size() - 1, *it);
                if (parent.get() >= 0) ::unlinkat(parent.get(), parts.back().c_str(), 0);
                refuse(fmt::format("{}: symlink does not resolve to anything inside the directory",
                                   *it));
                it = createdLinks.erase(it);
                removed = true;
            }
        }
    }
};

TarExtractor::TarExtractor(std::string dir, ExtractLimits limits)
    : impl_(std::make_unique<Impl>()) {
    Impl& impl = *impl_;
    impl.dir = std::move(dir);
    impl.limits = std::move(limits);
    if (!impl.dir.empty()) {
        std::error_code error;
        std::filesystem::create_directories(impl.dir, error);
        impl.root = UniqueFd(::open(impl.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (impl.root.get() < 0)
            throw Error(
                fmt::format("{}: cannot open directory: {}", impl.dir, std::strerror(errno)));
    }
    TarReader::Handler handler;
    handler.begin = [this, &impl](const TarEntry& entry) {
        impl.active = false;
        const auto path = safeRelativePath(entry.path);
        impl.countEntry(entry, path ? *path : std::string(entry.path.c_str()));
        if (!path) {
            refuse(fmt::format("{}: absolute, contains \"..\" or a NUL", entry.path));
            return;
        }
        if (path->empty()) return;  // the archive's "."
        const auto parts = splitPath(*path);
        if (entry.type == TarEntryType::Directory) {
            if (!impl.dir.empty() && impl.openDirectory(parts, parts.size(), *path).get() < 0)
                refuse(fmt::format("{}: a symlink or file is in the way", *path));
            return;
        }
        if (entry.type == TarEntryType::Symlink) {
            if (!impl.dir.empty()) impl.symlinks.emplace_back(*path, entry.linkTarget);
            return;
        }
        if (entry.type != TarEntryType::File) {
            refuse(fmt::format("{}: not a regular file, directory or symlink", *path));
            return;
        }
        impl.current = ExtractedFile{*path, 0, {}};
        impl.digest.emplace();
        if (!impl.dir.empty()) {
            UniqueFd parent = impl.openDirectory(parts, parts.size() - 1, *path);
            if (parent.get() < 0) {
                refuse(fmt::format("{}: a parent is a symlink or a file", *path));
                return;
            }
            // A new inode each time: never truncate a file that may be a hard link to another
            // one; never setuid, setgid or sticky.
            ::unlinkat(parent.get(), parts.back().c_str(), 0);
            impl.file = UniqueFd(openBeneath(parent.get(), parts.back().c_str(),
                                             O_WRONLY | O_CREAT | O_EXCL,
                                             (entry.mode & 0755) | 0600, kNoLinks));
            if (impl.file.get() < 0) {
                refuse(fmt::format("{}: cannot write ({})", *path, std::strerror(errno)));
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
        files_.push_back(impl.current);
    };
    impl.reader = TarReader(std::move(handler));
    impl.reader.onMetadata([&impl](uint64_t bytes) { impl.countMetadata(bytes); });
}

TarExtractor::~TarExtractor() = default;

void TarExtractor::feed(std::string_view bytes) {
    impl_->reader.feed(bytes);
}

void TarExtractor::finish() {
    impl_->reader.finish();
    impl_->createLinks([this](std::string line) { refuse(std::move(line)); });
}

void TarExtractor::abandon() {
    impl_->file.reset();
    impl_->linksDone = true;  // a refused archive gets none of its links
}

ExtractResult extractTar(const std::string& dir, const ByteSource& source,
                         const ExtractLimits& limits) {
    TarExtractor extractor(dir, limits);
    std::vector<char> buffer(64 * 1024);
    try {
        for (;;) {
            const size_t n = source(buffer.data(), buffer.size());
            if (n == 0) break;
            extractor.feed(std::string_view(buffer.data(), n));
        }
        extractor.finish();
    } catch (...) {
        extractor.abandon();
        throw;
    }
    return {extractor.files(), extractor.rejected()};
}

}  // namespace rossoctl::app
