#include "build_info.hpp"

namespace harness {

const char* rossoctlBinary() {
    return ROSSOCTL_BINARY;
}
const char* sourceDir() {
    return ROSSOCTL_SOURCE_DIR;
}
bool sanitizedBuild() {
    return ROSSOCTL_SANITIZED;
}

}  // namespace harness
