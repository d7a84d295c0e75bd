// sandbox cp out of a pod: a tar stream (or, without tar, a listing and one cat per file turned
// into one) through the safe extractor.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "copy_internal.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "rossoctl/errors.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "rossoctl/unique_fd.hpp"

namespace rossoctl::app::copy {
namespace {

namespace fs = std::filesystem;
using run::TarWriter;

constexpr size_t kMaxStderr = 4096;
// The tree listing of the tar-less path, all records together.
constexpr uint64_t kMaxListing = 16ULL << 20;

// Lists the tree below "$1" as records TYPE\0PATH\0 (d dir, o other), f|x\0PATH\0MODE\0 for a
// file (x: executable; MODE from stat, empty without one) and l\0PATH\0TARGET\0 for a symlink:
// only sh builtins, plus readlink and stat when the image has them.
constexpr const char* kListScript =
    "walk() { for e in \"$1\"/* \"$1\"/.[!.]* \"$1\"/..?*; do "
    "if [ -L \"$e\" ]; then "
    "if l=$(readlink \"$e\" 2>/dev/null); then printf 'l\\000%s\\000%s\\000' \"$e\" \"$l\"; "
    "else printf 'o\\000%s\\000' \"$e\"; fi; "
    "elif [ -d \"$e\" ]; then printf 'd\\000%s\\000' \"$e\"; walk \"$e\"; "
    "elif [ -f \"$e\" ]; then m=$(stat -c %a \"$e\" 2>/dev/null) || m=; "
    "if [ -x \"$e\" ]; then t=x; else t=f; fi; printf '%s\\000%s\\000%s\\000' \"$t\" \"$e\" "
    "\"$m\"; "
    "elif [ -e \"$e\" ]; then printf 'o\\000%s\\000' \"$e\"; fi; done; }; "
    "cd \"$1\" && walk .";
constexpr const char* kTarDirectoryScript = "cd \"$1\" && exec tar cf - .";
constexpr const char* kTarFileScript = "cd \"$1\" && exec tar cf - \"./$2\"";
constexpr const char* kCatScript = "cd \"$1\" && exec cat \"$2\"";

void appendCapped(std::string& text, std::string_view bytes) {
    text.append(bytes.substr(0, kMaxStderr - std::min(kMaxStderr, text.size())));
}

struct Record {
    char type = 'o';
    std::string path;  // as listed, "./a/b"
    std::string target;
};

// The listing, parsed record by record as it streams in: a field over PATH_MAX, a damaged
// record or one record past --max-files stops the exec there (whatever the pod still sends
// is never held).
class ListingParser {
  public:
    explicit ListingParser(uint64_t maxEntries) : maxEntries_(maxEntries) {}

    void feed(std::string_view bytes) {
        if ((total_ += bytes.size()) > kMaxListing)
            throw Error("the pod's file listing is over 16 MiB; refused");
        while (!bytes.empty()) {
            const size_t end = bytes.find('\0');
            const std::string_view piece = bytes.substr(0, end);
            if (field_.size() + piece.size() > PATH_MAX)
                throw Error(fmt::format("the pod's file listing has a name over {} bytes; refused",
                                        PATH_MAX));
            field_.append(piece);
            if (end == std::string_view::npos) return;
            bytes.remove_prefix(end + 1);
            endField();
        }
    }
    std::vector<Record> finish() {
        if (!field_.empty() || !fields_.empty())
            throw Error("the pod's file listing ended mid-record");
        return std::move(records_);
    }

  private:
    void endField() {
        fields_.push_back(std::move(field_));
        field_.clear();
        const std::string& type = fields_.front();
        if (type.size() != 1 || std::string_view("dfxlo").find(type[0]) == std::string::npos)
            throw Error("the pod's file listing is damaged");
        const size_t wanted = std::string_view("lfx").find(type[0]) != std::string::npos ? 3 : 2;
        if (fields_.size() < wanted) return;
        if (records_.size() >= maxEntries_)
            throw Error(
                fmt::format("the pod lists more than {} entries; raise the limit with --max-files",
                            maxEntries_));
        Record record;
        record.type = type[0];
        record.path = std::move(fields_[1]);
        if (wanted == 3) record.target = std::move(fields_[2]);  // link target, or file mode
        records_.push_back(std::move(record));
        fields_.clear();
    }

    uint64_t maxEntries_;
    uint64_t total_ = 0;
    std::string field_;
    std::vector<std::string> fields_;  // of the record being read
    std::vector<Record> records_;
};

// The mode stat printed (octal), else what the executable bit says.
unsigned fileMode(const Record& record) {
    const std::string& text = record.target;
    if (!text.empty() && text.size() <= 4 &&
        text.find_first_not_of("01234567") == std::string::npos)
        return static_cast<unsigned>(std::stoul(text, nullptr, 8)) & 0777;
    return record.type == 'x' ? 0755 : 0644;
}

struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
};

class Feeder {
  public:
    Feeder(kube::Client& client, const PodTarget& target, TarExtractor& extractor,
           const ExtractLimits& limits)
        : client_(client), target_(target), extractor_(extractor), limits_(limits) {}

    void directory(const std::string& name) {
        writer_.addDirectory(name);
        flush();
    }
    void symlink(const std::string& name, const std::string& linkTarget) {
        writer_.addSymlink(name, linkTarget);
        flush();
    }
    // One cat of podDir/podPath, staged so its size is known before the header goes out.
    void file(const std::string& podDir, const std::string& podPath, const std::string& name,
              unsigned mode) {
        std::unique_ptr<std::FILE, FileCloser> staged(std::tmpfile());
        if (!staged)
            throw Error(fmt::format("cannot create a temporary file: {}", strerror(errno)));
        uint64_t size = 0;
        std::string errors;
        kube::ExecIo io;
        io.onStdout = [&](std::string_view bytes) {
            size += bytes.size();
            if (size > limits_.maxFileBytes)
                throw Error(
                    fmt::format("{} is over the limit of {} bytes; raise it with "
                                "{}file-bytes",
                                name, limits_.maxFileBytes, limits_.flagPrefix));
            if (std::fwrite(bytes.data(), 1, bytes.size(), staged.get()) != bytes.size())
                throw Error(fmt::format("cannot stage {}: {}", name, strerror(errno)));
        };
        io.onStderr = [&](std::string_view bytes) { appendCapped(errors, bytes); };
        const auto result = kube::execInPod(
            client_,
            execRequest(client_.clock(), target_, shCommand(kCatScript, {podDir, podPath})), io);
        checkExit(result, errors, "cat of " + name);
        std::rewind(staged.get());
        writer_.addFileHeader(name, size, mode);
        flush();
        std::vector<char> buffer(64 * 1024);
        for (uint64_t left = size; left > 0;) {
            const size_t n = std::fread(buffer.data(), 1, buffer.size(), staged.get());
            if (n == 0) throw Error(fmt::format("cannot read back the staged {}", name));
            extractor_.feed(std::string_view(buffer.data(), std::min<uint64_t>(n, left)));
            left -= std::min<uint64_t>(n, left);
        }
        extractor_.feed(TarWriter::padding(size));
    }
    void finish() {
        writer_.finish();
        flush();
    }

  private:
    void flush() {
        extractor_.feed(buffer_);
        buffer_.clear();
    }
    kube::Client& client_;
    const PodTarget& target_;
    TarExtractor& extractor_;
    const ExtractLimits& limits_;
    std::string buffer_;
    TarWriter writer_{buffer_, 0};
};

// A tar stream from a command in the pod, straight into the extractor.
void extractFromExec(kube::Client& client, const PodTarget& target,
                     std::vector<std::string> command, TarExtractor& extractor) {
    std::string errors;
    kube::ExecIo io;
    io.onStdout = [&](std::string_view bytes) { extractor.feed(bytes); };
    io.onStderr = [&](std::string_view bytes) { appendCapped(errors, bytes); };
    const auto result =
        kube::execInPod(client, execRequest(client.clock(), target, std::move(command)), io);
    checkExit(result, errors, "tar");
}

void listAndFeed(kube::Client& client, const PodTarget& target, const std::string& podDir,
                 Feeder& feeder, const ExtractLimits& limits, std::vector<std::string>& rejected,
                 uint64_t& refused) {
    std::string errors;
    ListingParser listing(limits.maxEntries);
    kube::ExecIo io;
    io.onStdout = [&](std::string_view bytes) { listing.feed(bytes); };
    io.onStderr = [&](std::string_view bytes) { appendCapped(errors, bytes); };
    const auto result = kube::execInPod(
        client, execRequest(client.clock(), target, shCommand(kListScript, {podDir})), io);
    checkExit(result, errors, "listing the directory");
    uint64_t unlisted = 0;
    const auto refuse = [&](std::string line) {
        ++refused;
        addRefusal(rejected, unlisted, std::move(line));
    };
    for (const auto& record : listing.finish()) {
        const auto name = safeRelativePath(record.path);
        if (!name || name->empty()) {
            refuse(record.path + ": absolute, contains \"..\" or a NUL");
            continue;
        }
        switch (record.type) {
            case 'd':
                feeder.directory(*name);
                break;
            case 'l':
                feeder.symlink(*name, record.target);
                break;
            case 'f':
            case 'x':
                feeder.file(podDir, record.path, *name, fileMode(record));
                break;
            default:
                refuse(*name +
                       ": not a regular file, directory or symlink (or the image has no "
                       "readlink)");
        }
    }
}

// A directory of our own next to `localTarget`, for a file to land in before it is renamed.
fs::path makeStaging(kube::Client& client, const fs::path& parent) {
    for (int attempt = 0; attempt < 16; ++attempt) {
        const fs::path dir = parent / fmt::format(".rossoctl-cp-{:08x}", client.random().next());
        if (::mkdir(dir.c_str(), 0700) == 0) return dir;
        if (errno != EEXIST)
            throw Error(fmt::format("cannot create a directory in {}: {}", parent.string(),
                                    strerror(errno)));
    }
    throw Error(fmt::format("cannot create a staging directory in {}", parent.string()));
}

// A single-file copy lands a regular file or nothing: the tar may have replaced the file by a
// symlink (made last, checked only against the staging directory) that would point into the
// user's own files once renamed out. Checked on the staged name itself, right before the
// rename, through the staging directory's descriptor.
void landRegularFile(const fs::path& stagingDir, const std::string& base,
                     const std::string& localTarget) {
    UniqueFd dir(::open(stagingDir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (dir.get() < 0)
        throw Error(fmt::format("cannot open the staging directory {}: {}", stagingDir.string(),
                                strerror(errno)));
    struct stat staged {};
    if (::fstatat(dir.get(), base.c_str(), &staged, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(staged.st_mode))
        throw Error(
            fmt::format("the pod sent {} as a symlink or something else than a regular file; "
                        "nothing was copied",
                        ui::escapeForTerminal(base)));
    if (::renameat(dir.get(), base.c_str(), AT_FDCWD, localTarget.c_str()) != 0)
        throw Error(fmt::format("cannot move the copy into {}: {}", localTarget, strerror(errno)));
}

struct RemoveAll {
    fs::path dir;
    ~RemoveAll() {
        std::error_code ignored;
        if (!dir.empty()) fs::remove_all(dir, ignored);
    }
};

}  // namespace

CopyStats copyFromPod(kube::Client& client, const PodTarget& target, const std::string& remotePath,
                      const RemoteInfo& info, const std::string& localTarget,
                      const ExtractLimits& limits) {
    CopyStats stats;
    stats.usedTar = info.hasTar;
    const bool directory = info.type == RemoteType::Directory;
    const std::string base = remoteBase(remotePath);
    RemoveAll staging;
    fs::path extractDir = localTarget;
    if (!directory) {
        fs::path parent = fs::absolute(localTarget).parent_path();
        staging.dir = makeStaging(client, parent);
        extractDir = staging.dir;
    }
    TarExtractor extractor(extractDir.string(), limits);
    try {
        if (info.hasTar) {
            extractFromExec(client, target,
                            directory ? shCommand(kTarDirectoryScript, {remotePath})
                                      : shCommand(kTarFileScript, {remoteParent(remotePath), base}),
                            extractor);
        } else {
            Feeder feeder(client, target, extractor, limits);
            if (directory)
                listAndFeed(client, target, remotePath, feeder, limits, stats.rejected,
                            stats.refused);
            else
                feeder.file(remoteParent(remotePath), "./" + base, base,
                            info.executable ? 0755 : 0644);
            feeder.finish();
        }
        extractor.finish();
    } catch (...) {
        extractor.abandon();
        throw;
    }
    stats.rejected.insert(stats.rejected.end(), extractor.rejected().begin(),
                          extractor.rejected().end());
    stats.refused += extractor.refusedCount();
    for (const auto& file : extractor.files()) {
        if (!directory && file.path != base) continue;
        ++stats.files;
        stats.bytes += file.bytes;
    }
    if (!directory) {
        if (stats.files != 1)
            throw Error(
                fmt::format("the pod sent no regular file named {}; nothing was copied", base));
        landRegularFile(staging.dir, base, localTarget);
    }
    return stats;
}

}  // namespace rossoctl::app::copy
