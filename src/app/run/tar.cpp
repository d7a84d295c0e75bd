#include "rossoctl/app/run/tar.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>

#include "rossoctl/errors.hpp"

namespace rossoctl::app::run {
namespace {

constexpr size_t kBlock = 512;
constexpr uint64_t kMaxOctalSize = 077777777777ULL;  // 11 octal digits

void putOctal(char* field, size_t width, uint64_t value) {
    // width - 1 digits, then NUL
    std::string digits = fmt::format("{:0{}o}", value, width - 1);
    std::memcpy(field, digits.data(), width - 1);
    field[width - 1] = '\0';
}

void putString(char* field, size_t width, const std::string& value) {
    std::memcpy(field, value.data(), std::min(width, value.size()));
}

// "len key=value\n" where len counts the whole record, its own digits included.
std::string paxRecord(const std::string& key, const std::string& value) {
    const size_t body = key.size() + value.size() + 3;  // ' ', '=', '\n'
    size_t length = body + 1;
    while (std::to_string(length).size() + body != length) ++length;
    return fmt::format("{} {}={}\n", length, key, value);
}

// Splits a path into ustar's prefix (155) and name (100) at a '/', if it fits.
bool splitUstar(const std::string& path, std::string& prefix, std::string& name) {
    if (path.size() <= 100) {
        prefix.clear();
        name = path;
        return true;
    }
    for (size_t slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
        if (slash > 155) break;
        if (path.size() - slash - 1 <= 100 && slash > 0) {
            prefix = path.substr(0, slash);
            name = path.substr(slash + 1);
            return !name.empty();
        }
    }
    return false;
}

uint64_t parseNumber(const char* field, size_t width) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(field);
    if (bytes[0] & 0x80) {  // GNU base-256
        uint64_t value = bytes[0] & 0x3F;
        for (size_t i = 1; i < width; ++i) value = (value << 8) | bytes[i];
        return value;
    }
    uint64_t value = 0;
    size_t i = 0;
    while (i < width && field[i] == ' ') ++i;
    for (; i < width && field[i] >= '0' && field[i] <= '7'; ++i)
        value = value * 8 + (field[i] - '0');
    if (i < width && field[i] != '\0' && field[i] != ' ')
        throw Error("tar: a numeric header field is not octal (damaged archive)");
    return value;
}

std::string fieldString(const char* field, size_t width) {
    return std::string(field, strnlen(field, width));
}

std::string stripTrailingSlashes(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

// Decimal digits only, at most 19 of them: a sign, a space or junk is a damaged header, never
// a number that wraps (a negative record length once moved the parser backwards forever).
std::optional<uint64_t> parseDecimal(std::string_view text) {
    if (text.empty() || text.size() > 19) return std::nullopt;
    uint64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    return value;
}

void parsePax(std::string_view body, std::string& path, std::string& link, int64_t& size) {
    while (!body.empty()) {
        const size_t space = body.find(' ');
        const auto length = parseDecimal(body.substr(0, std::min(space, body.size())));
        // Each record is "LEN key=value\n" and LEN counts all of it, so it always moves forward.
        if (space == std::string_view::npos || !length || *length <= space + 1 ||
            *length > body.size() || body[*length - 1] != '\n')
            throw Error("tar: damaged pax header");
        const std::string_view record = body.substr(space + 1, *length - space - 2);
        body.remove_prefix(*length);
        const size_t equals = record.find('=');
        if (equals == std::string_view::npos) throw Error("tar: damaged pax header");
        const std::string_view key = record.substr(0, equals);
        const std::string_view value = record.substr(equals + 1);
        // Values keep any NUL they carry: the extractor refuses such names whole, rather than
        // one check reading the whole value and the file system another cut at the NUL.
        if ((key == "path" || key == "linkpath") && value.size() > PATH_MAX)
            throw Error(fmt::format("tar: a pax {} of {} bytes (over {}); refused", key,
                                    value.size(), PATH_MAX));
        if (key == "path") path = std::string(value);
        if (key == "linkpath") link = std::string(value);
        if (key == "size") {
            const auto bytes = parseDecimal(value);
            if (!bytes || *bytes > static_cast<uint64_t>(INT64_MAX))
                throw Error("tar: damaged pax header (size is not a number)");
            size = static_cast<int64_t>(*bytes);
        }
    }
}

}  // namespace

void TarWriter::writeHeader(const std::string& path, char typeflag, uint64_t size, unsigned mode,
                            const std::string& linkTarget) {
    std::string prefix, name;
    const bool fits = splitUstar(path, prefix, name);
    if (!fits || size > kMaxOctalSize || linkTarget.size() > 100) {
        std::string records;
        if (!fits) records += paxRecord("path", path);
        if (size > kMaxOctalSize) records += paxRecord("size", std::to_string(size));
        if (linkTarget.size() > 100) records += paxRecord("linkpath", linkTarget);
        const std::string base =
            path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
        writeHeader("PaxHeaders/" + base.substr(0, 80), 'x', records.size(), 0644, {});
        out_ += records;
        pad();
        if (!fits) {
            prefix.clear();
            name = path.substr(0, 100);
        }
    }
    char header[kBlock] = {};
    putString(header, 100, name);
    putOctal(header + 100, 8, mode & 07777);
    putOctal(header + 108, 8, 0);
    putOctal(header + 116, 8, 0);
    putOctal(header + 124, 12, std::min(size, kMaxOctalSize));
    putOctal(header + 136, 12, static_cast<uint64_t>(std::max<int64_t>(mtime_, 0)));
    std::memset(header + 148, ' ', 8);
    header[156] = typeflag;
    putString(header + 157, 100, linkTarget);
    std::memcpy(header + 257, "ustar", 6);  // magic with NUL
    std::memcpy(header + 263, "00", 2);
    putString(header + 345, 155, prefix);
    unsigned sum = 0;
    for (unsigned char byte : header) sum += byte;
    putOctal(header + 148, 7, sum);
    header[155] = ' ';
    out_.append(header, kBlock);
}

void TarWriter::pad() {
    if (out_.size() % kBlock) out_.append(kBlock - out_.size() % kBlock, '\0');
}

void TarWriter::addDirectory(const std::string& path, unsigned mode) {
    writeHeader(stripTrailingSlashes(path) + "/", '5', 0, mode, {});
}

void TarWriter::addFile(const std::string& path, std::string_view content, unsigned mode) {
    writeHeader(path, '0', content.size(), mode, {});
    out_.append(content);
    pad();
}

void TarWriter::addFileHeader(const std::string& path, uint64_t size, unsigned mode) {
    writeHeader(path, '0', size, mode, {});
}

std::string TarWriter::padding(uint64_t size) {
    return std::string((kBlock - size % kBlock) % kBlock, '\0');
}

void TarWriter::addSymlink(const std::string& path, const std::string& target) {
    writeHeader(path, '2', 0, 0777, target);
}

void TarWriter::finish() {
    out_.append(2 * kBlock, '\0');
}

void TarReader::onHeader(const char* block) {
    if (std::all_of(block, block + kBlock, [](char c) { return c == '\0'; })) {
        if (++zeroBlocks_ >= 2) ended_ = true;
        return;
    }
    zeroBlocks_ = 0;
    unsigned sum = 0;
    long signedSum = 0;
    for (size_t i = 0; i < kBlock; ++i) {
        const bool inChecksum = i >= 148 && i < 156;
        sum += inChecksum ? ' ' : static_cast<unsigned char>(block[i]);
        signedSum += inChecksum ? ' ' : static_cast<signed char>(block[i]);
    }
    const uint64_t stored = parseNumber(block + 148, 8);
    if (stored != sum && static_cast<long>(stored) != signedSum)
        throw Error("tar: header checksum mismatch (damaged archive)");

    const char typeflag = block[156];
    uint64_t size = parseNumber(block + 124, 12);
    if (typeflag == 'x' || typeflag == 'g' || typeflag == 'L' || typeflag == 'K') {
        // A long name holds one path and its NUL; a pax header a few records.
        const uint64_t cap = typeflag == 'L' || typeflag == 'K' ? PATH_MAX + 1 : kMaxMetadataEntry;
        if (size > cap)
            throw Error(fmt::format("tar: a {} entry of {} bytes (over {}); refused",
                                    typeflag == 'L' || typeflag == 'K' ? "long-name" : "pax", size,
                                    cap));
        if (metadata_) metadata_(kBlock + size);
        metaType_ = typeflag;
        meta_.clear();
        remaining_ = size;
        padding_ = (kBlock - size % kBlock) % kBlock;
        state_ = remaining_ ? State::Meta : (padding_ ? State::Padding : State::Header);
        if (!remaining_) meta_.clear();
        return;
    }

    TarEntry entry;
    std::string name = fieldString(block, 100);
    const std::string prefix = fieldString(block + 345, 155);
    if (std::memcmp(block + 257, "ustar", 5) == 0 && !prefix.empty() && block[263] == '0')
        name = prefix + "/" + name;
    if (!nextPath_.empty()) name = nextPath_;
    entry.linkTarget = nextLink_.empty() ? fieldString(block + 157, 100) : nextLink_;
    if (nextSize_ >= 0) size = static_cast<uint64_t>(nextSize_);
    nextPath_.clear();
    nextLink_.clear();
    nextSize_ = -1;
    entry.mode = static_cast<unsigned>(parseNumber(block + 100, 8)) & 07777;
    const bool trailingSlash = !name.empty() && name.back() == '/';
    entry.path = stripTrailingSlashes(name);
    switch (typeflag) {
        case '0':
        case '\0':
        case '7':
            entry.type = trailingSlash ? TarEntryType::Directory : TarEntryType::File;
            break;
        case '5':
            entry.type = TarEntryType::Directory;
            break;
        case '2':
            entry.type = TarEntryType::Symlink;
            break;
        case '1':
            entry.type = TarEntryType::Hardlink;
            break;
        default:
            entry.type = TarEntryType::Other;
    }
    // Only regular files (and unknown types) carry data blocks.
    if (entry.type != TarEntryType::File && entry.type != TarEntryType::Other) size = 0;
    entry.size = size;
    if (handler_.begin) handler_.begin(entry);
    remaining_ = size;
    padding_ = (kBlock - size % kBlock) % kBlock;
    if (remaining_) {
        state_ = State::Data;
    } else {
        if (handler_.end) handler_.end();
        state_ = padding_ ? State::Padding : State::Header;
    }
}

void TarReader::feed(std::string_view bytes) {
    while (!bytes.empty() && !ended_) {
        switch (state_) {
            case State::Header: {
                const size_t take = std::min(bytes.size(), kBlock - block_.size());
                if (block_.empty() && take == kBlock) {
                    onHeader(bytes.data());
                } else {
                    block_.append(bytes.substr(0, take));
                    if (block_.size() == kBlock) {
                        // A copy, not a move: onHeader may refill block_ (gcc -O2 also
                        // misreads the moved-from small string as out of bounds).
                        std::array<char, kBlock> header{};
                        std::copy_n(block_.data(), kBlock, header.data());
                        block_.clear();
                        onHeader(header.data());
                    }
                }
                bytes.remove_prefix(take);
                break;
            }
            case State::Data:
            case State::Meta: {
                const size_t take =
                    static_cast<size_t>(std::min<uint64_t>(bytes.size(), remaining_));
                if (state_ == State::Data) {
                    if (handler_.data) handler_.data(bytes.substr(0, take));
                } else {
                    meta_.append(bytes.substr(0, take));
                }
                bytes.remove_prefix(take);
                remaining_ -= take;
                if (remaining_ == 0) {
                    if (state_ == State::Data) {
                        if (handler_.end) handler_.end();
                    } else if (metaType_ == 'x') {
                        parsePax(meta_, nextPath_, nextLink_, nextSize_);
                    } else if (metaType_ == 'L' || metaType_ == 'K') {
                        std::string value = meta_.substr(0, strnlen(meta_.data(), meta_.size()));
                        if (value.size() > PATH_MAX)
                            throw Error(
                                fmt::format("tar: a long name of {} bytes (over {}); refused",
                                            value.size(), PATH_MAX));
                        (metaType_ == 'L' ? nextPath_ : nextLink_) = std::move(value);
                    }
                    state_ = padding_ ? State::Padding : State::Header;
                }
                break;
            }
            case State::Padding: {
                const size_t take = static_cast<size_t>(std::min<uint64_t>(bytes.size(), padding_));
                bytes.remove_prefix(take);
                padding_ -= take;
                if (padding_ == 0) state_ = State::Header;
                break;
            }
        }
    }
}

void TarReader::finish() const {
    if (state_ == State::Data || state_ == State::Meta || !block_.empty())
        throw Error("tar: the archive ended inside an entry (truncated)");
}

}  // namespace rossoctl::app::run
