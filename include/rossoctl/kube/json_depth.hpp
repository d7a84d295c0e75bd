#pragma once
// How deep a server's JSON may nest, and how much memory its parse may take. nlohmann parses any
// depth, but copying, dumping and masking a value recurse once per level: `[` two hundred
// thousand times overflows the stack there. And a parse costs far more than the text: each `{}`
// (two bytes) becomes an allocated object, so a body within its byte cap could still take GiBs.
#include <cstddef>
#include <string_view>

namespace rossoctl::kube {

// Kubernetes objects nest a few dozen levels; more than this is no object of theirs.
inline constexpr size_t kMaxJsonDepth = 256;
// What one parsed document, or all the pages of a list, may take in memory (estimated by
// measureJson: a list of 2,000 pods, 2.4 MB of JSON, is estimated at 26 MB and takes 19 MB):
// about 12,000 pods. Printing and copies may double it; a server cannot make it more.
inline constexpr size_t kMaxJsonMemoryBytes = size_t{160} << 20;

struct JsonShape {
    bool tooDeep = false;    // nests more than the maxDepth given
    size_t memoryBytes = 0;  // what parsing it would allocate, roughly, from above
};

// Linear and allocation-free, so it runs before the parse: counts the nesting and the structural
// tokens ('{', '[', ',', ':' outside strings), each about one allocated node once parsed.
JsonShape measureJson(std::string_view text, size_t maxDepth = kMaxJsonDepth);

// Whether `text` opens more than maxDepth arrays and objects inside one another (brackets in
// strings do not count).
bool nestsDeeperThan(std::string_view text, size_t maxDepth = kMaxJsonDepth);

}  // namespace rossoctl::kube
