// sandbox cp into a pod: one tar stream into `tar xf -`, or without tar `mkdir -p`, then
// `cat > NAME` and `chmod` per file. Files are read as they are sent, never held whole.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "copy_internal.hpp"
#include "rossoctl/app/run/tar.hpp"
#include "rossoctl/errors.hpp"

namespace rossoctl::app::copy {
namespace {

namespace fs = std::filesystem;
using run::TarWriter;

constexpr size_t kChunk = 64 * 1024;
constexpr size_t kMaxUntarStderr = 4096;
constexpr size_t kDirectoriesPerExec = 200;

// Told the length ($3), not sent an end of input (see writeExactlyScript), and the archive's last
// entry ($4, named at random) proves it was read whole: tar takes one cut at a header as whole.
const std::string kUntarScript =
    "if [ \"$2\" = create ]; then [ -d \"$1\" ] || mkdir -p \"$1\" || exit 1; fi; " +
    directoryMustExist("\"$1\"") +
    "cd \"$1\" || exit 1; command -v head >/dev/null || { echo 'rossoctl: the image has tar but "
    "no head' >&2; exit 1; }; head -c \"$3\" | tar xf - || exit 1; [ -f \"$4\" ] || { echo "
    "'rossoctl: the archive was cut short in the pod' >&2; exit 1; }; rm -f \"$4\"";
// One file: extracted beside its target, in a directory of its own, and renamed over it only
// once whole: a copy cut short (Ctrl-C, a broken stream) leaves what the pod had (walk 6 M2: a
// 13-byte file replaced by 38.7 MB of 150).
const std::string kUntarFileScript =
    directoryMustExist("\"$1\"") +
    "cd \"$1\" || exit 1; command -v head >/dev/null || { echo 'rossoctl: the image has tar but "
    "no head' >&2; exit 1; }; s=\".rossoctl-staging-${4##*-}\"; mkdir \"$s\" || exit 1; "
    "( cd \"$s\" && head -c \"$3\" | tar xf - ) || { rm -rf \"$s\"; exit 1; }; "
    "[ -f \"$s/$4\" ] || { rm -rf \"$s\"; echo 'rossoctl: the archive was cut short in the pod' "
    ">&2; exit 1; }; mv -f \"$s/$5\" \"./$5\" || { rm -rf \"$s\"; exit 1; }; rm -rf \"$s\"";
constexpr const char* kMkdirScript =
    "[ -d \"$1\" ] || mkdir -p \"$1\" || exit 1; cd \"$1\" || exit 1; shift; "
    "[ $# -eq 0 ] || exec mkdir -p \"$@\"";
// Told the length; see writeExactlyScript for why it is neither `cat > F` alone nor an EOF.
std::string headScript() {
    return directoryMustExist("\"$1\"") + "cd \"$1\" || exit 1; " +
           writeExactlyScript("\"$2\"", "\"$4\"") + "; chmod \"$3\" \"$2\" 2>/dev/null || :";
}
constexpr const char* kLinkScript = "cd \"$1\" && ln -sf \"$3\" \"$2\"";

struct LocalEntry {
    enum Type { File, Directory, Symlink } type = File;
    fs::path local;
    std::string name;  // relative to the directory in the pod
    uint64_t size = 0;
    unsigned mode = 0644;
    std::string linkTarget;
};

// Permission bits only: no setuid, setgid or sticky bit leaves this machine.
unsigned modeOf(const fs::path& path) {
    return static_cast<unsigned>(fs::status(path).permissions()) & 0777;
}

LocalEntry entryFor(const fs::path& path, std::string name) {
    LocalEntry entry;
    entry.local = path;
    entry.name = std::move(name);
    const auto status = fs::symlink_status(path);
    if (fs::is_symlink(status)) {
        entry.type = LocalEntry::Symlink;
        entry.linkTarget = fs::read_symlink(path).string();
    } else if (fs::is_directory(status)) {
        entry.type = LocalEntry::Directory;
        entry.mode = modeOf(path);
    } else if (fs::is_regular_file(status)) {
        entry.size = fs::file_size(path);
        entry.mode = modeOf(path);
    } else {
        throw Error(fmt::format("{}: not a regular file, directory or symlink", path.string()));
    }
    return entry;
}

// A file source: one entry named as the target. A directory: its contents, depth first.
std::vector<LocalEntry> enumerate(const fs::path& source, const std::string& fileName) {
    if (!fs::is_directory(fs::symlink_status(source))) return {entryFor(source, fileName)};
    std::vector<LocalEntry> entries;
    for (auto it = fs::recursive_directory_iterator(source); it != fs::end(it); ++it) {
        // lexically: fs::relative would follow a symlink to its target's name.
        entries.push_back(
            entryFor(it->path(), "./" + it->path().lexically_relative(source).string()));
    }
    return entries;
}

void readStderr(std::string& text, std::string_view bytes) {
    text.append(bytes.substr(0, kMaxUntarStderr - std::min(kMaxUntarStderr, text.size())));
}

// The tar stream of `entries`, produced as the exec reads it.
class TarSource {
  public:
    TarSource(const std::vector<LocalEntry>& entries, CopyStats& stats, int64_t mtime,
              std::string endMarker)
        : entries_(entries),
          stats_(stats),
          writer_(pending_, mtime),
          endMarker_(std::move(endMarker)) {}

    // The bytes read() gives in all: the same headers, each file's size padded, the end.
    static uint64_t length(const std::vector<LocalEntry>& entries, int64_t mtime,
                           const std::string& endMarker) {
        std::string headers;
        TarWriter writer(headers, mtime);
        uint64_t data = 0;
        for (const auto& entry : entries) {
            if (entry.type == LocalEntry::Directory) {
                writer.addDirectory(entry.name, entry.mode);
            } else if (entry.type == LocalEntry::Symlink) {
                writer.addSymlink(entry.name, entry.linkTarget);
            } else {
                writer.addFileHeader(entry.name, entry.size, entry.mode);
                data += entry.size + TarWriter::padding(entry.size).size();
            }
        }
        writer.addFile(endMarker, "", 0600);
        writer.finish();
        return headers.size() + data;
    }

    size_t read(char* out, size_t size) {
        while (pending_.size() == offset_) {
            pending_.clear();
            offset_ = 0;
            if (!refill()) return 0;
        }
        const size_t n = std::min(size, pending_.size() - offset_);
        std::copy_n(pending_.data() + offset_, n, out);
        offset_ += n;
        return n;
    }

  private:
    bool refill() {
        if (left_ > 0) {
            // Past the end of a file that shrank while it was read: zeros make up the size its
            // header said, since the pod reads exactly the length it was told.
            std::string chunk(static_cast<size_t>(std::min<uint64_t>(kChunk, left_)), '\0');
            if (file_.is_open()) {
                file_.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
                if (static_cast<size_t>(file_.gcount()) < chunk.size()) {
                    std::fill(chunk.begin() + static_cast<long>(file_.gcount()), chunk.end(), '\0');
                    stats_.rejected.push_back(current_ +
                                              ": changed while it was copied (cut short)");
                    ++stats_.refused;
                    file_.close();
                }
            }
            left_ -= chunk.size();
            pending_ = std::move(chunk);
            if (left_ == 0) {
                file_.close();
                pending_ += TarWriter::padding(size_);
            }
            return true;
        }
        if (next_ == entries_.size()) {
            if (finished_) return false;
            finished_ = true;
            writer_.addFile(endMarker_, "", 0600);
            writer_.finish();
            return true;
        }
        const LocalEntry& entry = entries_[next_++];
        if (entry.type == LocalEntry::Directory) {
            writer_.addDirectory(entry.name, entry.mode);
        } else if (entry.type == LocalEntry::Symlink) {
            writer_.addSymlink(entry.name, entry.linkTarget);
        } else {
            writer_.addFileHeader(entry.name, entry.size, entry.mode);
            ++stats_.files;
            stats_.bytes += entry.size;
            if (entry.size > 0) {
                file_.open(entry.local, std::ios::binary);
                if (!file_) throw Error(fmt::format("cannot read {}", entry.local.string()));
                current_ = entry.local.string();
                left_ = size_ = entry.size;
            }
        }
        return true;
    }

    const std::vector<LocalEntry>& entries_;
    CopyStats& stats_;
    std::string pending_;
    size_t offset_ = 0;
    TarWriter writer_;
    std::string endMarker_;
    size_t next_ = 0;
    bool finished_ = false;
    std::ifstream file_;
    std::string current_;
    uint64_t left_ = 0, size_ = 0;
};

void runChecked(kube::Client& client, const PodTarget& target, const std::string& podDir,
                std::vector<std::string> command, const std::string& what,
                std::function<size_t(char*, size_t)> input = {}, bool halfCloseStdin = true) {
    std::string errors;
    kube::ExecIo io;
    io.readStdin = std::move(input);
    io.halfCloseStdin = halfCloseStdin;
    io.onStderr = [&](std::string_view bytes) { readStderr(errors, bytes); };
    const auto result =
        kube::execInPod(client, execRequest(client.clock(), target, std::move(command)), io);
    checkWriteExit(result, errors, what, podDir);
}

void copyFileByFile(kube::Client& client, const PodTarget& target, const std::string& podDir,
                    bool createDir, const std::vector<LocalEntry>& entries, CopyStats& stats) {
    std::vector<std::string> directories;
    for (const auto& entry : entries)
        if (entry.type == LocalEntry::Directory) directories.push_back(entry.name);
    if (createDir || !directories.empty()) {
        size_t at = 0;
        do {
            const size_t end = std::min(directories.size(), at + kDirectoriesPerExec);
            std::vector<std::string> args{podDir};
            args.insert(args.end(), directories.begin() + static_cast<long>(at),
                        directories.begin() + static_cast<long>(end));
            runChecked(client, target, podDir, shCommand(kMkdirScript, args), "mkdir -p");
            at = end;
        } while (at < directories.size());
    }
    for (const auto& entry : entries) {
        if (entry.type == LocalEntry::Symlink) {
            runChecked(client, target, podDir,
                       shCommand(kLinkScript, {podDir, entry.name, entry.linkTarget}),
                       "ln -s " + entry.name);
        } else if (entry.type == LocalEntry::File) {
            std::ifstream file(entry.local, std::ios::binary);
            if (!file) throw Error(fmt::format("cannot read {}", entry.local.string()));
            // Exactly the size enumerated: a file that shrank meanwhile is padded with zeros
            // and said so, one that grew is cut there (as the tar stream does).
            uint64_t sent = 0;
            bool shrank = false;
            runChecked(
                client, target, podDir,
                shCommand(headScript(), {podDir, entry.name, fmt::format("{:o}", entry.mode),
                                         std::to_string(entry.size)}),
                "head -c " + std::to_string(entry.size) + " > " + entry.name,
                [&](char* out, size_t size) -> size_t {
                    const auto want =
                        static_cast<size_t>(std::min<uint64_t>(size, entry.size - sent));
                    size_t got = 0;
                    if (!shrank) {
                        file.read(out, static_cast<std::streamsize>(want));
                        got = static_cast<size_t>(file.gcount());
                        shrank = got < want;
                    }
                    std::fill(out + got, out + want, '\0');
                    sent += want;
                    return want;
                },
                /*halfCloseStdin=*/false);
            if (shrank) {
                stats.rejected.push_back(entry.local.string() +
                                         ": changed while it was copied (cut short)");
                ++stats.refused;
            }
            ++stats.files;
            stats.bytes += sent;
        }
    }
}

}  // namespace

CopyStats copyToPod(kube::Client& client, const PodTarget& target, const std::string& localSource,
                    const std::string& remoteTarget, bool useTar) {
    CopyStats stats;
    stats.usedTar = useTar;
    const bool directory = fs::is_directory(fs::symlink_status(localSource));
    const std::string podDir = directory ? remoteTarget : remoteParent(remoteTarget);
    const auto entries = enumerate(localSource, remoteBase(remoteTarget));
    if (!useTar) {
        copyFileByFile(client, target, podDir, directory, entries, stats);
        return stats;
    }
    const auto now =
        static_cast<int64_t>(std::chrono::system_clock::to_time_t(client.clock().now()));
    const uint32_t high = client.random().next(), low = client.random().next();
    const std::string endMarker = fmt::format("./.rossoctl-copied-{:08x}{:08x}", high, low);
    const uint64_t length = TarSource::length(entries, now, endMarker);
    TarSource source(entries, stats, now, endMarker);
    runChecked(
        client, target, podDir,
        directory ? shCommand(kUntarScript, {podDir, "create", std::to_string(length), endMarker})
                  : shCommand(kUntarFileScript, {podDir, "keep", std::to_string(length), endMarker,
                                                 remoteBase(remoteTarget)}),
        "tar", [&](char* out, size_t size) { return source.read(out, size); },
        /*halfCloseStdin=*/false);
    return stats;
}

}  // namespace rossoctl::app::copy
