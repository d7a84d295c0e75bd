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

}  // namespace rossoctl::kube
