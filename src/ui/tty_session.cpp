#include "rossoctl/ui/tty_session.hpp"

namespace rossoctl::ui {

namespace {

constexpr char kEsc = '\x1b';
constexpr char kBel = '\x07';
// Longer than any real CSI sequence: a sequence that never ends is dropped, not held forever.
constexpr size_t kMaxSequence = 64;
// A dropped string that never ends stops being dropped here; what follows is plain text again.
constexpr size_t kMaxString = 64 * 1024;

bool startsString(char c) {
    return c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X';
}

// A complete CSI sequence ("\x1b[...F") that only moves the cursor, colours, clears or sets an
// ordinary mode. Not: window operations (t), media copy (i), sequences with intermediates
// (rectangle checksums that read the screen back, colour changes) but the cursor shape and
// the soft reset, and the private mode 2, which leaves ANSI mode for VT52 so no reset works.
bool harmlessCsi(const std::string& sequence) {
    const char final = sequence.back();
    if (final == 't' || final == 'i') return false;
    const std::string body = sequence.substr(2, sequence.size() - 3);
    for (size_t i = 0; i < body.size(); ++i) {
        const auto byte = static_cast<unsigned char>(body[i]);
        if (byte >= 0x20 && byte <= 0x2f) {
            const bool cursorShape = body[i] == ' ' && final == 'q' && i + 1 == body.size();
            const bool softReset = body == "!" && final == 'p';
            if (!cursorShape && !softReset) return false;
        }
    }
    if (!body.empty() && body.front() == '?' && (final == 'h' || final == 'l')) {
        size_t start = 1;
        for (;;) {
            const size_t end = body.find(';', start);
            if (body.substr(start, end - start) == "2") return false;
            if (end == std::string::npos) break;
            start = end + 1;
        }
    }
    return true;
}

}  // namespace

void TtySessionFilter::step(char c, std::string& out) {
    const auto byte = static_cast<unsigned char>(c);
    switch (state_) {
        case State::Text:
            if (c == kEsc) {
                state_ = State::Escape;
                pending_.assign(1, c);
            } else if (byte < 0x80) {
                out += c;
            } else if (byte >= 0xc2 && byte <= 0xf4) {
                state_ = State::Utf8;
                pending_.assign(1, c);
                utf8Needed_ = byte < 0xe0 ? 1 : byte < 0xf0 ? 2 : 3;
            }
            // Anything else (a stray continuation byte, a raw C1 control 0x80..0x9f, a byte no
            // UTF-8 has) is dropped: a terminal outside UTF-8 would obey a raw C1 control.
            break;
        case State::Utf8:
            if (byte < 0x80 || byte > 0xbf) {  // cut short: the held bytes go, c starts again
                state_ = State::Text;
                pending_.clear();
                step(c, out);
                break;
            }
            pending_ += c;
            if (--utf8Needed_ > 0) break;
            state_ = State::Text;
            // U+0080..U+009F are the C1 controls (CSI, OSC, DCS) written as UTF-8: dropped.
            if (!(static_cast<unsigned char>(pending_[0]) == 0xc2 &&
                  static_cast<unsigned char>(pending_[1]) < 0xa0))
                out += pending_;
            pending_.clear();
            break;
        case State::Escape:
            if (startsString(c) && pending_.size() == 1) {
                state_ = State::String;
                stringBytes_ = 0;
                pending_.clear();
            } else if (c == '[' && pending_.size() == 1) {
                state_ = State::Csi;
                pending_ += c;
            } else if (byte >= 0x20 && byte <= 0x2f && pending_.size() < kMaxSequence) {
                pending_ += c;  // an intermediate byte (ESC ( B): the final byte follows
            } else {
                state_ = State::Text;
                // ESC 7, ESC =, ESC ( B pass; ESC % leaves UTF-8, where raw C1 bytes act.
                if (byte >= 0x30 && byte <= 0x7e && pending_.find('%') == std::string::npos)
                    out += pending_ + c;
                pending_.clear();
            }
            break;
        case State::Csi:
            pending_ += c;
            if (byte >= 0x40 && byte <= 0x7e) {
                if (harmlessCsi(pending_)) out += pending_;
                pending_.clear();
                state_ = State::Text;
            } else if (byte < 0x20 || byte > 0x3f || pending_.size() >= kMaxSequence) {
                pending_.clear();  // not a CSI sequence a terminal would finish: dropped
                state_ = State::Text;
            }
            break;
        case State::String:
            if (c == kBel) {
                state_ = State::Text;
            } else if (c == kEsc) {
                state_ = State::StringEscape;
            } else if (++stringBytes_ >= kMaxString) {
                state_ = State::Text;
            }
            break;
        case State::StringEscape:
            // ESC \ ends the string; any other byte after ESC keeps it going.
            state_ = c == '\\' ? State::Text : State::String;
            break;
    }
}

std::string TtySessionFilter::feed(std::string_view piece) {
    std::string out;
    out.reserve(piece.size());
    for (const char c : piece) step(c, out);
    return out;
}

std::string TtySessionFilter::finish() {
    pending_.clear();
    state_ = State::Text;
    // What a program may have left on: the alternate screen, a soft reset (DECSTR), the scroll
    // region, origin mode, autowrap, insert and newline modes, cursor keys and keypad, reverse
    // video, every mouse and focus report, bracketed paste, modifyOtherKeys, kitty's keyboard
    // flags, the cursor's shape, the character sets, then the cursor shown and colours reset.
    return "\x1b[?1049l\x1b[!p\x1b[r\x1b[?6l\x1b[?7h\x1b[4l\x1b[20l\x1b[?1l\x1b>\x1b[?5l"
           "\x1b[?9;1000;1001;1002;1003;1005;1006;1015;1016l\x1b[?1004l\x1b[?2004l\x1b[>4m"
           "\x1b[<99u\x1b[0 q\x0f\x1b(B\x1b)B\x1b*B\x1b+B\x1b[?25h\x1b[0m";
}

void TtySessionWriter::write(std::string_view bytes) {
    out_ << filter_.feed(bytes) << std::flush;
}

void TtySessionWriter::finish() {
    out_ << filter_.finish() << std::flush;
}

}  // namespace rossoctl::ui
