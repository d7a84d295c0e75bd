#pragma once

// Where this build put things. Defined in build_info.cpp, the one translation unit compiled
// with the build's absolute paths, so every other test file stays cacheable across checkouts.
namespace harness {

const char* rossoctlBinary();  // the rossoctl this build made
const char* sourceDir();       // the checkout the tests were built from
bool sanitizedBuild();         // true under ROSSOCTL_SANITIZE (make asan)

}  // namespace harness
