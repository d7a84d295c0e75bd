// libFuzzer's entry point for one target, chosen at compile time (-DFUZZ_TARGET=name).
#include <cstdlib>
#include <iostream>

#include "targets.hpp"

#define FUZZ_STRINGIFY2(x) #x
#define FUZZ_STRINGIFY(x) FUZZ_STRINGIFY2(x)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const fuzz::Target target = fuzz::findTarget(FUZZ_STRINGIFY(FUZZ_TARGET));
    if (!target) {
        std::cerr << "unknown fuzz target " FUZZ_STRINGIFY(FUZZ_TARGET) "\n";
        std::abort();
    }
    target(std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
