#pragma once
// How deep a server's JSON may nest. nlohmann parses any depth, but copying, dumping and masking
// a value recurse once per level: `[` two hundred thousand times overflows the stack there.
#include <cstddef>
#include <string_view>

namespace rossoctl::kube {

// Kubernetes objects nest a few dozen levels; more than this is no object of theirs.
inline constexpr size_t kMaxJsonDepth = 256;

// Whether `text` opens more than maxDepth arrays and objects inside one another (brackets in
// strings do not count). Linear and allocation-free, so it runs before the parse.
bool nestsDeeperThan(std::string_view text, size_t maxDepth = kMaxJsonDepth);

}  // namespace rossoctl::kube
