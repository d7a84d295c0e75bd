#pragma once
// A minimal POSIX tar (ustar + pax) writer and an incremental reader, enough to move files
// into a pod (`tar -x`) and artifacts out of it (`tar -c`, GNU or busybox) over exec.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace rossoctl::app::run {

enum class TarEntryType { File, Directory, Symlink, Hardlink, Other };

struct TarEntry {
    std::string path;  // as stored, trailing '/' removed
    TarEntryType type = TarEntryType::File;
    uint64_t size = 0;
    unsigned mode = 0644;
    std::string linkTarget;
};

// Appends a ustar archive to `out`; a name or size ustar cannot hold gets a pax header.
class TarWriter {
  public:
    TarWriter(std::string& out, int64_t mtime) : out_(out), mtime_(mtime) {}
    void addDirectory(const std::string& path, unsigned mode = 0755);
    void addFile(const std::string& path, std::string_view content, unsigned mode = 0644);
    void addSymlink(const std::string& path, const std::string& target);
    // Only the header of a file of `size` bytes: the caller appends the contents, then
    // padding(size), for a file too large to hold in memory.
    void addFileHeader(const std::string& path, uint64_t size, unsigned mode = 0644);
    static std::string padding(uint64_t size);
    // The two zero blocks that end an archive.
    void finish();

  private:
    void writeHeader(const std::string& path, char typeflag, uint64_t size, unsigned mode,
                     const std::string& linkTarget);
    void pad();
    std::string& out_;
    int64_t mtime_;
};

// Feed bytes in any split; entries come out through the callbacks. Handles ustar, pax
// ('x' path/linkpath/size), GNU long names ('L', 'K') and base-256 sizes. Throws Error on a
// damaged header, a name or link target over PATH_MAX, or a metadata entry over
// kMaxMetadataEntry (the stream is an adversary's: what it makes us hold is bounded).
inline constexpr uint64_t kMaxMetadataEntry = 64 * 1024;
class TarReader {
  public:
    struct Handler {
        std::function<void(const TarEntry&)> begin;
        std::function<void(std::string_view)> data;  // file contents, in pieces
        std::function<void()> end;
    };
    explicit TarReader(Handler handler) : handler_(std::move(handler)) {}
    // Called as a pax or GNU long-name entry's header arrives with its bytes (header block and
    // body), for the caller to count against its byte cap before the body is read.
    void onMetadata(std::function<void(uint64_t bytes)> count) { metadata_ = std::move(count); }
    void feed(std::string_view bytes);
    // Throws Error when the stream stopped inside an entry.
    void finish() const;
    bool ended() const { return ended_; }

  private:
    void onHeader(const char* block);
    enum class State { Header, Data, Meta, Padding };
    Handler handler_;
    std::function<void(uint64_t)> metadata_;
    State state_ = State::Header;
    std::string block_;  // a partial header block
    uint64_t remaining_ = 0;
    uint64_t padding_ = 0;
    char metaType_ = 0;
    std::string meta_;  // body of a pax or GNU long-name entry
    std::string nextPath_, nextLink_;
    int64_t nextSize_ = -1;
    int zeroBlocks_ = 0;
    bool ended_ = false;
};

}  // namespace rossoctl::app::run
