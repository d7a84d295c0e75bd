// libFuzzer's entry point for one target, chosen at compile time: -DFUZZ_TARGET=name looks it
// up in targets.cpp; -DFUZZ_FUNCTION=fuzz::f calls f directly (the small stream targets,
// which do not link the whole core).
#include <cstdlib>
#include <iostream>

#include "targets.hpp"

#define FUZZ_STRINGIFY2(x) #x
#define FUZZ_STRINGIFY(x) FUZZ_STRINGIFY2(x)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
#ifdef FUZZ_FUNCTION
    static const fuzz::Target target = FUZZ_FUNCTION;
#else
    static const fuzz::Target target = fuzz::findTarget(FUZZ_STRINGIFY(FUZZ_TARGET));
    if (!target) {
        std::cerr << "unknown fuzz target " FUZZ_STRINGIFY(FUZZ_TARGET) "\n";
        std::abort();
    }
#endif
    target(std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
