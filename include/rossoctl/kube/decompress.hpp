#pragma once
// xz, lzma and bzip2 streams decompressed with a bound, as gzip.hpp's are: what a pod compressed
// may decompress a thousandfold. liblzma and libbz2 are loaded on first use.
#include <optional>
#include <string_view>

#include "rossoctl/kube/gzip.hpp"

namespace rossoctl::kube {

enum class Compression { None, Xz, Lzma, Bzip2 };

// The format `bytes` opens with: xz's magic number, bzip2's "BZh" and its first block's or its
// end's magic, or lzma's (alone format) header: properties below 225, a dictionary size xz
// writes (2^n or 2^n + 2^(n-1)) and a size that is unknown or below 256 GiB.
Compression compressionOf(std::string_view bytes);
const char* compressionName(Compression format);  // "xz", "lzma", "bzip2"

// What `compressed` decompresses to, up to maxBytes; truncated when it is damaged, cut short,
// needs more than 96 MiB of memory to decode, or goes on past maxBytes. Throws Error when the
// library cannot be loaded.
Inflated decompress(std::string_view compressed, Compression format, size_t maxBytes);

}  // namespace rossoctl::kube
