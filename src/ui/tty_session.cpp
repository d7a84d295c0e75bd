#include "rossoctl/ui/tty_session.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

namespace rossoctl::ui {

namespace {

constexpr char kEsc = '\x1b';
constexpr char kBel = '\x07';
// Longer than any real CSI sequence: a sequence that never ends is dropped, not held forever.
constexpr size_t kMaxSequence = 64;
// A dropped string that never ends stops being dropped here; what follows is plain text again.
constexpr size_t kMaxString = 64 * 1024;

// ESC ] OSC, P DCS, _ APC, ^ PM, X SOS, and k: screen's and tmux's title string.
bool startsString(char c) {
    return c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X' || c == 'k';
}

// The C0 controls a session needs (bell, backspace, tab, line feeds, carriage return, the
// shift-in/out of the character sets); ENQ (answer-back) and the rest are dropped.
bool allowedControl(unsigned char c) {
    return c >= 0x07 && c <= 0x0f;
}

// The modes a program may set, each reset by finish(): insert and newline (ANSI); cursor keys,
// reverse video, origin, autowrap, cursor blink and visibility, the alternate screen, every
// mouse report and focus reports, bracketed paste (DEC private). Not keyboard lock (2), local echo
// (12), VT52 (?2), column mode (?3) or anything unknown.
bool allowedMode(bool dec, long mode) {
    static constexpr long kAnsi[] = {4, 20};
    static constexpr long kDec[] = {1,    5,    6,    7,    9,    12,   25,
                                    47,   1000, 1001, 1002, 1003, 1004, 1005,
                                    1006, 1015, 1016, 1047, 1048, 1049, 2004};
    if (!dec) return std::find(std::begin(kAnsi), std::end(kAnsi), mode) != std::end(kAnsi);
    return std::find(std::begin(kDec), std::end(kDec), mode) != std::end(kDec);
}

// A CSI sequence read as a terminal reads it: a private prefix, numbers, intermediates, final.
struct CsiSequence {
    char prefix = 0;            // '?', '>', '<', '=' or none
    std::vector<long> numbers;  // each parameter (':' sub-parameters too); -1 when empty
    std::string intermediates;  // 0x20..0x2f
    char final = 0;
};

constexpr size_t kMaxParameters = 16;

// Parses "\x1b[" BODY FINAL; nullopt for what no terminal would read as one sequence (a prefix
// after a digit, a parameter byte after an intermediate, a number of more than 5 digits, more
// than kMaxParameters numbers).
std::optional<CsiSequence> parseCsi(const std::string& sequence) {
    CsiSequence csi;
    csi.final = sequence.back();
    std::string_view body(sequence.data() + 2, sequence.size() - 3);
    if (!body.empty() && body.front() >= 0x3c && body.front() <= 0x3f) {
        csi.prefix = body.front();
        body.remove_prefix(1);
    }
    long number = -1;
    size_t digits = 0;
    size_t i = 0;
    for (; i < body.size() && body[i] >= 0x30 && body[i] <= 0x3f; ++i) {
        const char c = body[i];
        if (c >= '0' && c <= '9') {
            if (number > 0 || c != '0') ++digits;  // leading zeros do not count
            if (digits > 5) return std::nullopt;
            number = (number < 0 ? 0 : number) * 10 + (c - '0');
        } else if (c == ';' || c == ':') {
            // Terminals keep 16 parameters or so (libvterm writes past its 16: fuzzing found it).
            if (csi.numbers.size() + 1 >= kMaxParameters) return std::nullopt;
            csi.numbers.push_back(number);
            number = -1;
            digits = 0;
        } else {
            return std::nullopt;  // '<', '=', '>', '?' after the start
        }
    }
    csi.numbers.push_back(number);
    for (; i < body.size(); ++i) {
        if (body[i] < 0x20 || body[i] > 0x2f) return std::nullopt;
        csi.intermediates += body[i];
    }
    return csi;
}

bool noParameters(const CsiSequence& csi) {
    return csi.numbers.size() == 1 && csi.numbers[0] <= 0;
}

// The allow-list of CSI sequences: cursor movement, erasing, inserting and deleting, scrolling,
// colours, the scroll region, saved cursor, the modes above, cursor shape, soft reset, the
// cursor position and device attribute reports, and the keyboard modes finish() resets. Not:
// window operations (t), media copy (i), screen read-backs, unknown modes, the repeat of the
// last character (b: "CSI 0 b" hangs libvterm; fuzzing found it).
bool allowedCsi(const std::string& sequence) {
    const auto parsed = parseCsi(sequence);
    if (!parsed) return false;
    const CsiSequence& csi = *parsed;
    const char final = csi.final;
    if (!csi.intermediates.empty()) {
        const bool cursorShape = csi.prefix == 0 && csi.intermediates == " " && final == 'q' &&
                                 csi.numbers.size() == 1 && csi.numbers[0] <= 6;
        const bool softReset =
            csi.prefix == 0 && csi.intermediates == "!" && final == 'p' && noParameters(csi);
        return cursorShape || softReset;
    }
    if (final == 'h' || final == 'l') {
        if (csi.prefix != 0 && csi.prefix != '?') return false;
        for (long mode : csi.numbers)
            if (!allowedMode(csi.prefix == '?', mode)) return false;
        return true;
    }
    switch (csi.prefix) {
        case 0:
            if (final == 'n')
                return csi.numbers.size() == 1 && (csi.numbers[0] == 5 || csi.numbers[0] == 6);
            if (final == 'c') return noParameters(csi);
            // Erase in display, but not 3: that erases the scrollback, the user's history.
            if (final == 'J')
                return std::find(csi.numbers.begin(), csi.numbers.end(), 3) == csi.numbers.end();
            return std::string_view("@ABCDEFGHIJKLMPSTXZ`adefgmrsu").find(final) !=
                   std::string_view::npos;
        case '?':
            return final == 'J' || final == 'K';  // selective erase
        case '>':
            // Secondary device attributes; kitty's keyboard flags and the XTMODKEYS resources
            // the end resets (0, 1, 2, 4): 3, 6 and 7 would outlive the session.
            if (final == 'm') return csi.numbers[0] <= 2 || csi.numbers[0] == 4;  // -1: none given
            return (final == 'c' && noParameters(csi)) || final == 'u';
        case '<':
            return final == 'u';
        default:
            return false;
    }
}

// The range RFC 3629 allows for the byte after `lead`: what lies outside is an overlong form
// (E0 80..9F, F0 80..8F), a surrogate (ED A0..BF) or past U+10FFFF (F4 90..BF).
bool validSecondByte(unsigned char lead, unsigned char second) {
    const unsigned char low = lead == 0xe0 ? 0xa0 : lead == 0xf0 ? 0x90 : 0x80;
    const unsigned char high = lead == 0xed ? 0x9f : lead == 0xf4 ? 0x8f : 0xbf;
    return second >= low && second <= high;
}

// ESC and its final (and intermediates): save and restore the cursor, the keypad modes,
// index, next line, tab set, reverse index, and the G0..G3 character sets as ASCII, line
// drawing or UK. Not: ESC c (full reset), ESC % (leaves UTF-8), ESC N/O, ESC space F/G
// (8-bit controls), ESC Z (identify), ESC n/o (locking shifts), a lone string terminator
// (ESC \, which libvterm reads as the C1 control ST), anything else.
bool allowedEscape(const std::string& sequence) {
    if (sequence.size() == 2)
        return std::string_view("78=>DEHM").find(sequence[1]) != std::string_view::npos;
    return sequence.size() == 3 &&
           std::string_view("()*+").find(sequence[1]) != std::string_view::npos &&
           std::string_view("B0A").find(sequence[2]) != std::string_view::npos;
}

}  // namespace

void TtySessionFilter::step(char c, std::string& out) {
    const auto byte = static_cast<unsigned char>(c);
    switch (state_) {
        case State::Text:
            if (c == kEsc) {
                state_ = State::Escape;
                pending_.assign(1, c);
            } else if ((byte >= 0x20 && byte < 0x7f) || allowedControl(byte)) {
                out += c;
            } else if (utf8_ && byte >= 0xc2 && byte <= 0xf4) {
                state_ = State::Utf8;
                pending_.assign(1, c);
                utf8Needed_ = byte < 0xe0 ? 1 : byte < 0xf0 ? 2 : 3;
            }
            // Anything else (a C0 control not listed, DEL, a stray continuation byte, a raw C1
            // control 0x80..0x9f, a byte no UTF-8 has) is dropped: a terminal outside UTF-8
            // would obey a raw C1 control.
            break;
        case State::Utf8:
            // Cut short, or a second byte no valid character has: the held bytes go, c starts
            // again (a continuation byte on its own is then dropped too).
            if (byte < 0x80 || byte > 0xbf ||
                (pending_.size() == 1 &&
                 !validSecondByte(static_cast<unsigned char>(pending_[0]), byte))) {
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
            if (byte < 0x20) {  // a control inside the sequence: the sequence goes, c counts
                state_ = State::Text;
                pending_.clear();
                step(c, out);
            } else if (startsString(c) && pending_.size() == 1) {
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
                pending_ += c;
                if (allowedEscape(pending_)) out += pending_;
                pending_.clear();
            }
            break;
        case State::Csi:
            if (byte < 0x20) {  // a control inside the sequence: the sequence goes, c counts
                pending_.clear();
                state_ = State::Text;
                step(c, out);
                break;
            }
            pending_ += c;
            if (byte >= 0x40 && byte <= 0x7e) {
                if (allowedCsi(pending_)) out += pending_;
                pending_.clear();
                state_ = State::Text;
            } else if (byte > 0x3f || pending_.size() >= kMaxSequence) {
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
    // video, every mouse and focus report, bracketed paste, the XTMODKEYS modifiers, kitty's
    // keyboard flags, the cursor's shape, the character sets, then the cursor shown and colours
    // reset. One mode per sequence: a terminal that does not know one stops there (libvterm does;
    // fuzzing against it found mouse reports left on behind an unknown mode 9).
    return "\x1b[?1049l\x1b[!p\x1b[r\x1b[?6l\x1b[?7h\x1b[4l\x1b[20l\x1b[?1l\x1b>\x1b[?5l"
           "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?9l"
           "\x1b[?1001l\x1b[?1016l\x1b[?1004l\x1b[?2004l\x1b[>0m\x1b[>1m\x1b[>2m\x1b[>4m"
           "\x1b[<99u\x1b[0 q\x0f\x1b(B\x1b)B\x1b*B\x1b+B\x1b[?25h\x1b[0m";
}

void TtySessionWriter::write(std::string_view bytes) {
    out_ << filter_.feed(bytes) << std::flush;
}

void TtySessionWriter::finish() {
    out_ << filter_.finish() << std::flush;
}

}  // namespace rossoctl::ui
