#include "rossoctl/kube/gzip.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdint>

#include "shared_library.hpp"

namespace rossoctl::kube {

namespace {

struct ZlibFunctions {
    decltype(&::inflateInit2_) init;
    decltype(&::inflate) inflate;
    decltype(&::inflateEnd) end;
    decltype(&::inflateReset) reset;
};

const ZlibFunctions& zlibFunctions() {
    static const SharedLibrary library("libz.so.1", "zlib1g");
    static const ZlibFunctions loaded = [] {
        ZlibFunctions f{};
        f.init = library.function<decltype(f.init)>("inflateInit2_");
        f.inflate = library.function<decltype(f.inflate)>("inflate");
        f.end = library.function<decltype(f.end)>("inflateEnd");
        f.reset = library.function<decltype(f.reset)>("inflateReset");
        return f;
    }();
    return loaded;
}

}  // namespace

bool isGzip(std::string_view bytes) {
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
           static_cast<unsigned char>(bytes[1]) == 0x8b;
}

namespace {

// What `compressed` inflates to with zlib's `windowBits` (gzip, zlib or raw), up to maxBytes;
// gzip members after the first are read on.
std::optional<Inflated> inflateWith(std::string_view compressed, int windowBits, size_t maxBytes) {
    if (compressed.size() > UINT32_MAX) return std::nullopt;
    const auto& f = zlibFunctions();
    z_stream stream{};
    if (f.init(&stream, windowBits, ZLIB_VERSION, static_cast<int>(sizeof stream)) != Z_OK)
        return std::nullopt;
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
    stream.avail_in = static_cast<uInt>(compressed.size());
    Inflated inflated;
    char chunk[16384];
    int status = Z_OK;
    while (status == Z_OK) {
        stream.next_out = reinterpret_cast<Bytef*>(chunk);
        stream.avail_out = sizeof chunk;
        status = f.inflate(&stream, Z_NO_FLUSH);
        const size_t produced = sizeof chunk - stream.avail_out;
        // What came out before a damaged check value or a cut stream is kept, and marked: zcat
        // prints it too, so a reader of the file may get it.
        const bool broken = status != Z_OK && status != Z_STREAM_END;
        const size_t room = maxBytes - inflated.bytes.size();
        inflated.bytes.append(chunk, std::min(produced, room));
        if (produced > room || (inflated.bytes.size() == maxBytes && status == Z_OK)) {
            inflated.truncated = true;
            status = Z_STREAM_END;
        }
        if (broken) {
            inflated.truncated = true;
            break;
        }
        // Members after the first are read on, as gunzip, zcat and Go's reader (Helm's) do.
        if (status == Z_STREAM_END && !inflated.truncated && stream.avail_in > 0 &&
            windowBits > MAX_WBITS &&
            isGzip(
                std::string_view(reinterpret_cast<const char*>(stream.next_in), stream.avail_in)) &&
            f.reset(&stream) == Z_OK)
            status = Z_OK;
    }
    f.end(&stream);
    if (status != Z_STREAM_END && inflated.bytes.empty()) return std::nullopt;
    return inflated;
}

}  // namespace

std::optional<Inflated> gunzip(std::string_view compressed, size_t maxBytes) {
    if (!isGzip(compressed)) return std::nullopt;
    return inflateWith(compressed, 16 + MAX_WBITS, maxBytes);  // a gzip header, largest window
}

bool isZlib(std::string_view bytes) {
    // 0x78: deflate with a 32 KiB window; the second byte is one of the four levels zlib writes.
    if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x78) return false;
    const auto flags = static_cast<unsigned char>(bytes[1]);
    return flags == 0x01 || flags == 0x5e || flags == 0x9c || flags == 0xda;
}

std::optional<Inflated> inflateZlib(std::string_view compressed, size_t maxBytes) {
    if (!isZlib(compressed)) return std::nullopt;
    return inflateWith(compressed, MAX_WBITS, maxBytes);
}

std::optional<Inflated> inflateRaw(std::string_view compressed, size_t maxBytes) {
    return inflateWith(compressed, -MAX_WBITS, maxBytes);
}

}  // namespace rossoctl::kube
