#pragma once
// A pod's output in an interactive TTY session (sandbox exec -it): the pod's terminal is the
// point (prompts, line editing, colours, full-screen programs), so cursor and colour sequences
// pass; what could reach beyond the session does not: string sequences (OSC: title, clipboard,
// hyperlinks; DCS: terminal queries and settings; APC, PM, SOS), window operations (CSI ... t)
// and C1 controls written as UTF-8 are dropped, and the modes a program may leave on are reset when
// the session ends.
#include <ostream>
#include <string>
#include <string_view>

namespace rossoctl::ui {

class TtySessionFilter {
  public:
    std::string feed(std::string_view piece);
    // What turns off mouse reporting, the alternate screen and colours a program left on.
    std::string finish();

  private:
    enum class State { Text, Escape, Csi, String, StringEscape, Utf8Lead };
    State state_ = State::Text;
    std::string pending_;  // an escape or CSI sequence not yet complete
    size_t stringBytes_ = 0;
};

// A TtySessionFilter in front of `out`, flushed after each piece.
class TtySessionWriter {
  public:
    explicit TtySessionWriter(std::ostream& out) : out_(out) {}
    void write(std::string_view bytes);
    void finish();

  private:
    std::ostream& out_;
    TtySessionFilter filter_;
};

}  // namespace rossoctl::ui
