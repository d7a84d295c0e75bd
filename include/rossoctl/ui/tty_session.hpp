#pragma once
// A pod's output in an interactive TTY session (sandbox exec -it): the pod's terminal is the
// point (prompts, line editing, colours, full-screen programs), so cursor and colour sequences
// pass; what could reach beyond the session does not: string sequences (OSC: title, clipboard,
// hyperlinks; DCS: terminal queries and settings; APC, PM, SOS), window operations, media copy,
// VT52 mode, CSI sequences with intermediates, C1 controls (raw or as UTF-8) and invalid UTF-8
// are dropped, and the modes a program may leave on are reset when
// the session ends.
#include <ostream>
#include <string>
#include <string_view>

namespace rossoctl::ui {

class TtySessionFilter {
  public:
    // utf8 false: a terminal outside UTF-8, where any byte from 0x80 up may be a C1 control:
    // they are all dropped.
    explicit TtySessionFilter(bool utf8 = true) : utf8_(utf8) {}
    std::string feed(std::string_view piece);
    // What turns off mouse reporting, the alternate screen and colours a program left on.
    std::string finish();

  private:
    enum class State { Text, Utf8, Escape, Csi, String, StringEscape };
    void step(char c, std::string& out);
    bool utf8_;
    State state_ = State::Text;
    std::string pending_;  // a UTF-8, escape or CSI sequence not yet complete
    int utf8Needed_ = 0;   // continuation bytes still to come
    size_t stringBytes_ = 0;
};

// A TtySessionFilter in front of `out`, flushed after each piece.
class TtySessionWriter {
  public:
    explicit TtySessionWriter(std::ostream& out, bool utf8 = true) : out_(out), filter_(utf8) {}
    void write(std::string_view bytes);
    void finish();

  private:
    std::ostream& out_;
    TtySessionFilter filter_;
};

}  // namespace rossoctl::ui
