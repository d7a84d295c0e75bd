#include "rossoctl/ui/terminal_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace rossoctl::ui {

bool localeIsUtf8(const std::string& lcAll, const std::string& lcCtype, const std::string& lang) {
    const std::string& locale = !lcAll.empty() ? lcAll : !lcCtype.empty() ? lcCtype : lang;
    std::string lower;
    for (char c : locale)
        if (c != '-') lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // "en_US.UTF-8", "C.utf8", "de_DE.utf-8@euro"
    return lower.find(".utf8") != std::string::npos;
}

namespace {

// How many bytes at the end of `text` may be the start of a sequence the next piece completes:
// a lone \r (of \r\n) or an unfinished UTF-8 lead byte with its continuation bytes.
size_t unfinishedTail(std::string_view text) {
    if (text.empty()) return 0;
    if (text.back() == '\r') return 1;
    const size_t look = std::min<size_t>(3, text.size());
    for (size_t back = 1; back <= look; ++back) {
        const auto c = static_cast<unsigned char>(text[text.size() - back]);
        if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
        const size_t needed = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 1;
        return needed > back && c >= 0xC2 && c <= 0xF4 ? back : 0;
    }
    return 0;
}

}  // namespace

std::string TerminalTextStream::feed(std::string_view piece) {
    std::string text = std::move(held_);
    text.append(piece);
    const size_t keep = unfinishedTail(text);
    held_ = text.substr(text.size() - keep);
    std::string_view ready(text.data(), text.size() - keep);
    std::string out;
    out.reserve(ready.size());
    while (!ready.empty()) {
        const size_t stop = ready.find_first_of("\n\t");
        std::string_view part = ready.substr(0, stop);
        std::string_view lineEnd;
        if (stop != std::string_view::npos && ready[stop] == '\n' && !part.empty() &&
            part.back() == '\r') {
            part.remove_suffix(1);
            lineEnd = "\r";
        }
        out.append(escapeForTerminal(part, utf8_));
        if (stop == std::string_view::npos) break;
        out.append(lineEnd);
        out.push_back(ready[stop]);
        ready.remove_prefix(stop + 1);
    }
    return out;
}

std::string TerminalTextStream::finish() {
    std::string out = escapeForTerminal(held_, utf8_);
    held_.clear();
    return out;
}

void UntrustedTextWriter::write(std::string_view bytes) {
    if (terminal_)
        out_ << escaper_.feed(bytes);
    else
        out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out_.flush();
}

void UntrustedTextWriter::finish() {
    if (!terminal_) return;
    out_ << escaper_.finish();
    out_.flush();
}

EightBitEscapingStream::EightBitEscapingStream(std::ostream& target)
    : std::ostream(nullptr), buffer_(target.rdbuf()) {
    rdbuf(&buffer_);
}

EightBitEscapingStream::Buffer::int_type EightBitEscapingStream::Buffer::overflow(int_type c) {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char byte = traits_type::to_char_type(c);
    return xsputn(&byte, 1) == 1 ? c : traits_type::eof();
}

std::streamsize EightBitEscapingStream::Buffer::xsputn(const char* text, std::streamsize count) {
    std::string_view rest(text, static_cast<size_t>(count));
    while (!rest.empty()) {
        const auto high = std::find_if(
            rest.begin(), rest.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
        const auto plain = static_cast<std::streamsize>(high - rest.begin());
        if (plain > 0 && target_->sputn(rest.data(), plain) != plain) return 0;
        rest.remove_prefix(static_cast<size_t>(plain));
        if (rest.empty()) break;
        const std::string escaped = fmt::format("\\x{:02x}", static_cast<unsigned char>(rest[0]));
        if (target_->sputn(escaped.data(), static_cast<std::streamsize>(escaped.size())) !=
            static_cast<std::streamsize>(escaped.size()))
            return 0;
        rest.remove_prefix(1);
    }
    return count;
}

int EightBitEscapingStream::Buffer::sync() {
    return target_->pubsync();
}

UnicodeControlEscapingStream::UnicodeControlEscapingStream(std::ostream& target)
    : std::ostream(nullptr), buffer_(target.rdbuf()) {
    rdbuf(&buffer_);
}

UnicodeControlEscapingStream::~UnicodeControlEscapingStream() {
    buffer_.finish();
}

namespace {

// The code point of the 2- or 3-byte UTF-8 sequence at `text` when it is one escapeForTerminal
// escapes (C1, bidi, line separators, BOM), else 0. `text` holds the whole sequence.
uint32_t escapedCodePointAt(std::string_view text) {
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    if (byte(0) == 0xC2) return byte(1) >= 0x80 && byte(1) <= 0x9F ? byte(1) : 0;
    if ((byte(1) & 0xC0) != 0x80 || (byte(2) & 0xC0) != 0x80) return 0;
    const uint32_t c = ((byte(0) & 0x0Fu) << 12) | ((byte(1) & 0x3Fu) << 6) | (byte(2) & 0x3Fu);
    const bool escaped = (c >= 0x200E && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E) ||
                         (c >= 0x2066 && c <= 0x2069) || c == 0xFEFF;
    return escaped ? c : 0;
}

// The leads of every sequence escapedCodePointAt may name.
constexpr std::string_view kLeads = "\xC2\xE2\xEF";

}  // namespace

bool UnicodeControlEscapingStream::Buffer::put(std::string_view bytes) {
    const auto size = static_cast<std::streamsize>(bytes.size());
    return bytes.empty() || target_->sputn(bytes.data(), size) == size;
}

std::streamsize UnicodeControlEscapingStream::Buffer::xsputn(const char* text,
                                                             std::streamsize count) {
    std::string joined;
    std::string_view rest(text, static_cast<size_t>(count));
    if (!held_.empty()) {
        joined = std::move(held_) + std::string(rest);
        held_.clear();
        rest = joined;
    }
    while (!rest.empty()) {
        const size_t lead = rest.find_first_of(kLeads);
        if (!put(rest.substr(0, lead))) return 0;
        if (lead == std::string_view::npos) break;
        rest.remove_prefix(lead);
        const size_t length = static_cast<unsigned char>(rest[0]) == 0xC2 ? 2 : 3;
        if (rest.size() < length) {  // the rest of the character comes with the next write
            held_.assign(rest);
            break;
        }
        const uint32_t codePoint = escapedCodePointAt(rest);
        if (codePoint != 0) {
            if (!put(fmt::format("\\u{:04x}", codePoint))) return 0;
            rest.remove_prefix(length);
        } else {
            if (!put(rest.substr(0, 1))) return 0;
            rest.remove_prefix(1);
        }
    }
    return count;
}

UnicodeControlEscapingStream::Buffer::int_type UnicodeControlEscapingStream::Buffer::overflow(
    int_type c) {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char byte = traits_type::to_char_type(c);
    return xsputn(&byte, 1) == 1 ? c : traits_type::eof();
}

int UnicodeControlEscapingStream::Buffer::sync() {
    return target_->pubsync();
}

// What was held at the end is no character (a lone lead byte): shown escaped.
void UnicodeControlEscapingStream::Buffer::finish() {
    for (unsigned char c : held_) put(fmt::format("\\x{:02x}", c));
    held_.clear();
    target_->pubsync();
}

}  // namespace rossoctl::ui
