#include "rossoctl/terminal_escape.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace rossoctl {
namespace {

// Length of the valid UTF-8 sequence at `text`, and its code point; 0 when invalid.
size_t decodeUtf8(std::string_view text, uint32_t& codePoint) {
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(0);
    size_t length = 0;
    uint32_t minimum = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2, codePoint = lead & 0x1F, minimum = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3, codePoint = lead & 0x0F, minimum = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4, codePoint = lead & 0x07, minimum = 0x10000;
    } else {
        return 0;
    }
    if (text.size() < length) return 0;
    for (size_t i = 1; i < length; ++i) {
        if ((byte(i) & 0xC0) != 0x80) return 0;
        codePoint = (codePoint << 6) | (byte(i) & 0x3F);
    }
    if (codePoint < minimum || codePoint > 0x10FFFF || (codePoint >= 0xD800 && codePoint <= 0xDFFF))
        return 0;
    return length;
}

bool dangerousCodePoint(uint32_t c) {
    return (c >= 0x80 && c <= 0x9F) ||                     // C1 controls (CSI, OSC...)
           (c >= 0x200E && c <= 0x200F) ||                 // direction marks
           (c >= 0x202A && c <= 0x202E) ||                 // bidirectional overrides
           (c >= 0x2066 && c <= 0x2069) || c == 0x2028 ||  // isolates, line separator
           c == 0x2029 || c == 0xFEFF;
}

// Error text keeps its backslashes single: it may quote something escaped already, and
// doubling it would only garble it. ErrorText keeps line breaks and tabs, ErrorLine does not.
enum class Escaping { Everything, ErrorText, ErrorLine };

// Hands the escaped text to `sink` in pieces (string_views): a run of bytes that pass through
// unchanged is one piece, so a writer or a counter needs no copy of the text.
template <typename Sink>
void escapeInto(std::string_view text, Escaping escaping, bool utf8, Sink&& sink) {
    const bool errorText = escaping != Escaping::Everything;
    size_t plain = 0;  // bytes at the front of `text` that pass through, not yet handed on
    auto flush = [&] {
        if (plain > 0) sink(text.substr(0, plain));
        text.remove_prefix(plain);
        plain = 0;
    };
    while (plain < text.size()) {
        const unsigned char c = static_cast<unsigned char>(text[plain]);
        if (c >= 0x20 && c < 0x7F) {
            ++plain;
            if (c == '\\' && !errorText) {
                flush();
                sink("\\");  // the second of the doubled backslash
            }
            continue;
        }
        if (c == '\n' || c == '\t' || c == '\r') {
            if (escaping == Escaping::ErrorText && c != '\r') {
                ++plain;
                continue;
            }
            flush();
            sink(c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r");
            text.remove_prefix(1);
            continue;
        }
        uint32_t codePoint = 0;
        const size_t length = c >= 0x80 && utf8 ? decodeUtf8(text.substr(plain), codePoint) : 0;
        if (length != 0 && !dangerousCodePoint(codePoint)) {
            plain += length;
            continue;
        }
        flush();
        if (length == 0) {
            sink(fmt::format("\\x{:02x}", c));
            text.remove_prefix(1);
        } else {
            sink(fmt::format("\\u{:04x}", codePoint));
            text.remove_prefix(length);
        }
    }
    flush();
}

std::string escape(std::string_view text, Escaping escaping, bool utf8) {
    std::string out;
    out.reserve(text.size());
    escapeInto(text, escaping, utf8, [&](std::string_view piece) { out.append(piece); });
    return out;
}

}  // namespace

std::string escapeForTerminal(std::string_view text) {
    return escape(text, Escaping::Everything, true);
}

std::string escapeForTerminal(std::string_view text, bool utf8) {
    return escape(text, Escaping::Everything, utf8);
}

void appendEscapedForTerminal(std::string& out, std::string_view text) {
    escapeInto(text, Escaping::Everything, true,
               [&](std::string_view piece) { out.append(piece); });
}

size_t escapedSizeForTerminal(std::string_view text) {
    size_t size = 0;
    escapeInto(text, Escaping::Everything, true,
               [&](std::string_view piece) { size += piece.size(); });
    return size;
}

std::string escapeErrorText(std::string_view text, bool utf8) {
    return escape(text, Escaping::ErrorText, utf8);
}

std::string escapeErrorLine(std::string_view text, bool utf8) {
    return escape(text, Escaping::ErrorLine, utf8);
}

}  // namespace rossoctl
