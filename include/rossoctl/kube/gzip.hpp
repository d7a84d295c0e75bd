#pragma once
// gzip streams inflated with a bound: what a pod or server compressed may inflate a
// thousandfold. zlib is loaded on first use.
#include <optional>
#include <string>
#include <string_view>

namespace rossoctl::kube {

struct Inflated {
    std::string bytes;       // at most the bound given
    bool truncated = false;  // not all the stream: past the bound, damaged, or cut short
};

// Whether `bytes` opens with gzip's magic number.
bool isGzip(std::string_view bytes);

// What the gzip stream `compressed` inflates to, up to maxBytes; nullopt when it is broken.
std::optional<Inflated> gunzip(std::string_view compressed, size_t maxBytes);

// Whether `bytes` opens with the header zlib writes (0x78 and one of its four levels' flags).
bool isZlib(std::string_view bytes);
// The same for a zlib stream (Python's zlib.compress) and for raw deflate, which has no header
// (nullopt at once for most bytes that are none: the first block is read as garbage and fails).
std::optional<Inflated> inflateZlib(std::string_view compressed, size_t maxBytes);
std::optional<Inflated> inflateRaw(std::string_view compressed, size_t maxBytes);

}  // namespace rossoctl::kube
