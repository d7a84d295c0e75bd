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

}  // namespace rossoctl::ui
