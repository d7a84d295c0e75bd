#pragma once
// Every parser that reads outside input, as a fuzz target: libFuzzer drives them under
// `make fuzz`, and the regression runner replays tests/fuzz/corpus/ under `make test`.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fuzz {

using Target = void (*)(std::string_view input);

struct NamedTarget {
    const char* name;
    Target run;
};

// Each target must accept any bytes: only rossoctl::Error (a clean, reported failure) may
// escape; a crash, a sanitizer report or any other exception is a finding.
extern const NamedTarget kTargets[];
extern const size_t kTargetCount;
Target findTarget(std::string_view name);

// In stream_targets.cpp (kube layer and extractor only, for a small CI fuzz build).
void tarArchive(std::string_view input);
void execStream(std::string_view input);
// In tty_vterm_target.cpp (the TTY filter and libvterm only), built where libvterm is.
void ttyAgainstVterm(std::string_view input);

}  // namespace fuzz
