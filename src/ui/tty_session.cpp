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

}  // namespace

std::string TtySessionFilter::feed(std::string_view piece) {
    std::string out;
    out.reserve(piece.size());
    for (const char c : piece) {
        const auto byte = static_cast<unsigned char>(c);
        switch (state_) {
            case State::Text:
                if (c == kEsc) {
                    state_ = State::Escape;
                    pending_.assign(1, c);
                } else if (byte == 0xc2) {
                    state_ = State::Utf8Lead;  // U+0080..U+009F would be C1 controls
                } else {
                    out += c;
                }
                break;
            case State::Utf8Lead:
                state_ = State::Text;
                if (byte >= 0x80 && byte <= 0x9f) break;  // a C1 control: dropped
                out += '\xc2';
                if (c == kEsc) {
                    state_ = State::Escape;
                    pending_.assign(1, c);
                } else {
                    out += c;
                }
                break;
            case State::Escape:
                if (startsString(c)) {
                    state_ = State::String;
                    stringBytes_ = 0;
                    pending_.clear();
                } else if (c == '[') {
                    state_ = State::Csi;
                    pending_ += c;
                } else if (byte >= 0x20 && byte <= 0x2f && pending_.size() < kMaxSequence) {
                    pending_ += c;  // an intermediate byte (ESC ( B): the final byte follows
                } else {
                    state_ = State::Text;
                    if (byte >= 0x30 && byte <= 0x7e) out += pending_ + c;  // ESC 7, ESC =, ...
                    pending_.clear();
                }
                break;
            case State::Csi:
                pending_ += c;
                if (byte >= 0x40 && byte <= 0x7e) {
                    // CSI ... t is window manipulation: moving, resizing, reporting the title.
                    if (c != 't') out += pending_;
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
    return out;
}

std::string TtySessionFilter::finish() {
    pending_.clear();
    state_ = State::Text;
    // Mouse reporting off, the main screen back, the cursor shown, colours reset.
    return "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1049l\x1b[?25h\x1b[0m";
}

void TtySessionWriter::write(std::string_view bytes) {
    out_ << filter_.feed(bytes) << std::flush;
}

void TtySessionWriter::finish() {
    out_ << filter_.finish() << std::flush;
}

}  // namespace rossoctl::ui
