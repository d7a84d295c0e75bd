#pragma once
// The safe tar extractor: a stream written by an adversary (a sandbox's artifacts, a
// `sandbox cp` from a pod) is written below one directory and nowhere else, whatever the
// order of its entries. Every entry is created relative to a directory descriptor with
// openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so nothing is written through a symlink;
// symlinks are created last, after every other entry, and each one that does not resolve to
// an existing object below the directory (escaping, absolute, dangling, a loop) is removed
// again, until none is left that does. Caps on bytes, entries and per-file size stop a
// stream before it fills the disk.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rossoctl::app {

struct ExtractedFile {
    std::string path;  // relative to the directory
    uint64_t bytes = 0;
    std::string sha256;  // lower-case hex
};

struct ExtractLimits {
    uint64_t maxBytes = 1ULL << 30;        // all file contents together
    uint64_t maxEntries = 10'000;          // files, directories and links
    uint64_t maxFileBytes = 512ULL << 20;  // one file
    // Named in the error so the user knows how to raise a cap, e.g. "--artifacts-max-bytes".
    std::string flagPrefix = "--artifacts-max-";
};

// A refusal report the stream cannot flood: the first kMaxRefusalsListed lines (each cut to
// 300 bytes), then one line counting the rest.
inline constexpr size_t kMaxRefusalsListed = 20;
void addRefusal(std::vector<std::string>& refusals, uint64_t& unlisted, std::string line);

// "./a/b" -> "a/b"; "." -> ""; nullopt for an absolute path, a ".." component or a NUL.
std::optional<std::string> safeRelativePath(const std::string& tarPath);

std::string sha256Hex(std::string_view bytes);

// Push interface: feed() the stream in any split, then finish(). Throws Error on a damaged
// archive or a cap exceeded (what was written so far stays, every link in it checked).
class TarExtractor {
  public:
    // dir empty: hash and list only (the caps still apply).
    explicit TarExtractor(std::string dir, ExtractLimits limits = {});
    ~TarExtractor();
    TarExtractor(const TarExtractor&) = delete;
    TarExtractor& operator=(const TarExtractor&) = delete;

    void feed(std::string_view bytes);
    // Creates the symlinks, then removes every one that resolves outside; throws Error on a
    // truncated stream.
    void finish();
    // After an error: no link of a refused archive is ever created.
    void abandon();

    const std::vector<ExtractedFile>& files() const { return files_; }
    // One line per entry refused, saying why (pod-controlled text: escape before printing);
    // bounded as addRefusal says.
    const std::vector<std::string>& rejected() const { return rejected_; }
    // How many entries were refused, listed or not.
    uint64_t refusedCount() const { return rejected_.size() - (unlisted_ ? 1 : 0) + unlisted_; }

  private:
    void refuse(std::string line) { addRefusal(rejected_, unlisted_, std::move(line)); }
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::vector<ExtractedFile> files_;
    std::vector<std::string> rejected_;
    uint64_t unlisted_ = 0;
};

struct ExtractResult {
    std::vector<ExtractedFile> files;
    std::vector<std::string> rejected;
};

// Pull interface: reads `source` until it returns 0, extracting into `dir`.
using ByteSource = std::function<size_t(char* buffer, size_t size)>;
ExtractResult extractTar(const std::string& dir, const ByteSource& source,
                         const ExtractLimits& limits = {});

}  // namespace rossoctl::app
