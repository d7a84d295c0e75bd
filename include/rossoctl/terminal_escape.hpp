#pragma once
// Text someone else controls (a server's message, a pod's name or output) made safe for a
// terminal: the one escaper every layer uses, the kube layer's errors included.
#include <cstddef>
#include <string>
#include <string_view>

namespace rossoctl {

// Control characters (C0, DEL, C1), bidirectional overrides and invalid UTF-8 become visible
// escapes (\n, \x1b, \u202e); a backslash is doubled so no escape can be faked. Printable
// ASCII and valid UTF-8 text pass through unchanged.
std::string escapeForTerminal(std::string_view text);
// For a terminal whose locale is not UTF-8 (utf8 false) every byte from 0x80 up is escaped:
// there a byte 0x80..0x9f of a valid UTF-8 character is a C1 control (0x9b is CSI).
std::string escapeForTerminal(std::string_view text, bool utf8);
// escapeForTerminal(text) appended to `out`, and its size, neither making a copy of the text
// first: the table printer sizes its columns by the one and writes its lines with the other.
void appendEscapedForTerminal(std::string& out, std::string_view text);
size_t escapedSizeForTerminal(std::string_view text);

// escapeForTerminal for an error line that may quote a pod or server: its line breaks and tabs
// are kept, and a backslash stays single (the quote may have been escaped already), so escaping
// twice changes nothing.
std::string escapeErrorText(std::string_view text, bool utf8 = true);
// escapeErrorText on one line: line breaks and tabs escaped too (\n, \t), so a server's text
// cannot pose as a line of rossoctl's own. Escaping twice changes nothing either.
std::string escapeErrorLine(std::string_view text, bool utf8 = true);

}  // namespace rossoctl
