#pragma once
// Text someone else controls (a pod's file names, a probe's output) made safe for a terminal.
#include <string>
#include <string_view>

namespace rossoctl::ui {

// Control characters (C0, DEL, C1), bidirectional overrides and invalid UTF-8 become visible
// escapes (\n, \x1b, \u202e); a backslash is doubled so no escape can be faked. Printable
// ASCII and valid UTF-8 text pass through unchanged.
std::string escapeForTerminal(std::string_view text);

}  // namespace rossoctl::ui
