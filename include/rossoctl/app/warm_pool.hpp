#pragma once
// A warm pool's spares (Sandboxes a SandboxWarmPool controls, for `sandbox run --pool`) are the
// pool's, not the user's sandboxes: `sandbox list`, `sandbox top` and `sandbox verify --all` leave
// them out unless --include-pool, and count them so the user knows they are there.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace rossoctl::app {

struct PoolFilter {
    bool include = false;  // --include-pool
    size_t hidden = 0;     // the spares left out so far

    // False (and counted) for a spare, unless include.
    bool keep(const nlohmann::json& sandbox);
    // "2 warm-pool sandboxes not shown (...); add --include-pool to list them" on err, when any
    // was left out. `left` says what they were not ("shown", "verified"), `verb` what the flag
    // does to them ("list", "show", "verify").
    void note(std::ostream& err, const std::string& left = "shown",
              const std::string& verb = "list") const;
};

}  // namespace rossoctl::app
