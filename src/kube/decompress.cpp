#include "rossoctl/kube/decompress.hpp"

#include <bzlib.h>
#include <lzma.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "shared_library.hpp"

namespace rossoctl::kube {

namespace {

// What a decoder may allocate: xz -9 needs 65 MiB; a header asking for more is not decoded.
constexpr uint64_t kDecoderMemory = 96 * 1024 * 1024;

struct LzmaFunctions {
    decltype(&::lzma_stream_decoder) streamDecoder;
    decltype(&::lzma_alone_decoder) aloneDecoder;
    decltype(&::lzma_code) code;
    decltype(&::lzma_end) end;
};

const LzmaFunctions& lzmaFunctions() {
    static const SharedLibrary library("liblzma.so.5", "liblzma5");
    static const LzmaFunctions loaded = [] {
        LzmaFunctions f{};
        f.streamDecoder = library.function<decltype(f.streamDecoder)>("lzma_stream_decoder");
        f.aloneDecoder = library.function<decltype(f.aloneDecoder)>("lzma_alone_decoder");
        f.code = library.function<decltype(f.code)>("lzma_code");
        f.end = library.function<decltype(f.end)>("lzma_end");
        return f;
    }();
    return loaded;
}

struct Bzip2Functions {
    decltype(&::BZ2_bzDecompressInit) init;
    decltype(&::BZ2_bzDecompress) decompress;
    decltype(&::BZ2_bzDecompressEnd) end;
};

const Bzip2Functions& bzip2Functions() {
    static const SharedLibrary library("libbz2.so.1.0", "libbz2-1.0");
    static const Bzip2Functions loaded = [] {
        Bzip2Functions f{};
        f.init = library.function<decltype(f.init)>("BZ2_bzDecompressInit");
        f.decompress = library.function<decltype(f.decompress)>("BZ2_bzDecompress");
        f.end = library.function<decltype(f.end)>("BZ2_bzDecompressEnd");
        return f;
    }();
    return loaded;
}

uint64_t littleEndian(std::string_view bytes, size_t at, size_t count) {
    uint64_t value = 0;
    for (size_t i = count; i-- > 0;)
        value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
    return value;
}

bool isBzip2(std::string_view bytes) {
    // "BZh", the block size 1-9, then pi's digits (a block) or sqrt(pi)'s (an empty stream).
    return bytes.size() >= 10 && bytes.compare(0, 3, "BZh") == 0 && bytes[3] >= '1' &&
           bytes[3] <= '9' &&
           (bytes.compare(4, 6, "\x31\x41\x59\x26\x53\x59") == 0 ||
            bytes.compare(4, 6, "\x17\x72\x45\x38\x50\x90") == 0);
}

bool isLzmaAlone(std::string_view bytes) {
    if (bytes.size() < 13 || static_cast<unsigned char>(bytes[0]) >= 9 * 5 * 5) return false;
    const uint64_t dictionary = littleEndian(bytes, 1, 4);
    const uint64_t size = littleEndian(bytes, 5, 8);
    bool written = false;  // a dictionary size xz and lzma_alone_encoder write
    for (int bits = 12; bits <= 30 && !written; ++bits)
        written = dictionary == (uint64_t{1} << bits) ||
                  dictionary == (uint64_t{1} << bits) + (uint64_t{1} << (bits - 1));
    return written && (size == UINT64_MAX || size < (uint64_t{1} << 38));
}

// Appends up to `room` of `produced` bytes; false when they did not all fit.
bool keep(Inflated& out, const char* chunk, size_t produced, size_t maxBytes) {
    const size_t room = maxBytes - out.bytes.size();
    out.bytes.append(chunk, std::min(produced, room));
    return produced <= room;
}

Inflated unxz(std::string_view compressed, bool alone, size_t maxBytes) {
    const auto& f = lzmaFunctions();
    lzma_stream stream = LZMA_STREAM_INIT;
    Inflated out;
    const lzma_ret started = alone ? f.aloneDecoder(&stream, kDecoderMemory)
                                   : f.streamDecoder(&stream, kDecoderMemory, LZMA_CONCATENATED);
    if (started != LZMA_OK) {
        out.truncated = true;
        return out;
    }
    stream.next_in = reinterpret_cast<const uint8_t*>(compressed.data());
    stream.avail_in = compressed.size();
    char chunk[16384];
    lzma_ret status = LZMA_OK;
    while (status == LZMA_OK) {
        stream.next_out = reinterpret_cast<uint8_t*>(chunk);
        stream.avail_out = sizeof chunk;
        status = f.code(&stream, LZMA_FINISH);  // all the input is given
        if (!keep(out, chunk, sizeof chunk - stream.avail_out, maxBytes) ||
            (out.bytes.size() == maxBytes && status == LZMA_OK)) {
            out.truncated = true;
            break;
        }
    }
    if (status != LZMA_OK && status != LZMA_STREAM_END) out.truncated = true;
    f.end(&stream);
    return out;
}

Inflated bunzip2(std::string_view compressed, size_t maxBytes) {
    const auto& f = bzip2Functions();
    Inflated out;
    size_t at = 0;
    // Streams one after another (bzip2 -c a b > c) are read on, as bzcat does.
    while (at < compressed.size() && isBzip2(compressed.substr(at)) && !out.truncated) {
        bz_stream stream{};
        if (f.init(&stream, 0, 0) != BZ_OK) {
            out.truncated = true;
            break;
        }
        const size_t given = std::min<size_t>(compressed.size() - at, UINT_MAX);
        stream.next_in = const_cast<char*>(compressed.data() + at);
        stream.avail_in = static_cast<unsigned>(given);
        char chunk[16384];
        int status = BZ_OK;
        while (status == BZ_OK) {
            stream.next_out = chunk;
            stream.avail_out = sizeof chunk;
            status = f.decompress(&stream);
            const size_t produced = sizeof chunk - stream.avail_out;
            if (!keep(out, chunk, produced, maxBytes) ||
                (out.bytes.size() == maxBytes && status == BZ_OK)) {
                out.truncated = true;
                break;
            }
            // Input used up before the stream's end: cut short.
            if (status == BZ_OK && stream.avail_in == 0 && produced == 0)
                status = BZ_UNEXPECTED_EOF;
        }
        if (status != BZ_OK && status != BZ_STREAM_END) out.truncated = true;
        at += given - stream.avail_in;
        f.end(&stream);
    }
    return out;
}

}  // namespace

Compression compressionOf(std::string_view bytes) {
    if (bytes.size() >= 6 &&
        bytes.compare(0, 6, std::string_view("\xfd\x37\x7a\x58\x5a\x00", 6)) == 0)
        return Compression::Xz;
    if (isBzip2(bytes)) return Compression::Bzip2;
    if (isLzmaAlone(bytes)) return Compression::Lzma;
    return Compression::None;
}

const char* compressionName(Compression format) {
    switch (format) {
        case Compression::Xz:
            return "xz";
        case Compression::Lzma:
            return "lzma";
        case Compression::Bzip2:
            return "bzip2";
        case Compression::None:
            break;
    }
    return "none";
}

Inflated decompress(std::string_view compressed, Compression format, size_t maxBytes) {
    switch (format) {
        case Compression::Xz:
        case Compression::Lzma:
            return unxz(compressed, format == Compression::Lzma, maxBytes);
        case Compression::Bzip2:
            return bunzip2(compressed, maxBytes);
        case Compression::None:
            break;
    }
    return Inflated{std::string(compressed.substr(0, maxBytes)), compressed.size() > maxBytes};
}

}  // namespace rossoctl::kube
