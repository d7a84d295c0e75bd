// Pod-controlled text (file names, probe output) reaches a terminal only as visible escapes.
#include "rossoctl/ui/terminal_text.hpp"

#include <catch2/catch.hpp>

#include "rossoctl/ui/tty_session.hpp"

using rossoctl::ui::escapeForTerminal;

TEST_CASE("control characters and bidi overrides become visible escapes", "[ui]") {
    CHECK(escapeForTerminal("plain name.txt") == "plain name.txt");
    CHECK(escapeForTerminal("caf\xc3\xa9 \xe2\x9c\x93") == "caf\xc3\xa9 \xe2\x9c\x93");
    // ESC ] 0 ; title BEL: would retitle the terminal; CSI 2J would clear it.
    CHECK(escapeForTerminal("\x1b]0;owned\x07") == "\\x1b]0;owned\\x07");
    CHECK(escapeForTerminal("a\x1b[2Jb") == "a\\x1b[2Jb");
    CHECK(escapeForTerminal("line\nnext\r\t") == "line\\nnext\\r\\t");
    CHECK(escapeForTerminal(std::string("nul\0x", 5)) == "nul\\x00x");
    CHECK(escapeForTerminal("\x7f") == "\\x7f");
    CHECK(escapeForTerminal("\xc2\x9b"
                            "31m") == "\\u009b31m");                              // C1 CSI
    CHECK(escapeForTerminal("evil\xe2\x80\xaetxt.exe") == "evil\\u202etxt.exe");  // RLO
    CHECK(escapeForTerminal("\xff\xc3") == "\\xff\\xc3");                         // invalid UTF-8
    CHECK(escapeForTerminal("\xed\xa0\x80") == "\\xed\\xa0\\x80");                // a surrogate
    // A backslash is doubled, so the pod cannot print what looks like an escape of ours.
    CHECK(escapeForTerminal("a\\x1b") == "a\\\\x1b");
}

TEST_CASE("a stream of pieces keeps its lines and escapes the rest", "[ui]") {
    rossoctl::ui::TerminalTextStream stream;
    CHECK(stream.feed("one\ttwo\nthree\r\n") == "one\ttwo\nthree\r\n");
    CHECK(stream.feed("\x1b]0;owned\x07\n") == "\\x1b]0;owned\\x07\n");
    // A lone \r would move the cursor back over the line: escaped unless \n follows.
    CHECK(stream.feed("fake\rreal\n") == "fake\\rreal\n");
    CHECK(stream.feed("split\r") == "split");
    CHECK(stream.feed("\nx") == "\r\nx");
    CHECK(stream.feed("tail\r") == "tail");
    CHECK(stream.feed("y") == "\\ry");
    // A UTF-8 character or a C1 control cut between pieces is judged whole.
    CHECK(stream.feed("caf\xc3") == "caf");
    CHECK(stream.feed("\xa9 \xe2\x80") == "\xc3\xa9 ");
    CHECK(stream.feed("\xae!") == "\\u202e!");
    CHECK(stream.feed("\xc2") == "");
    CHECK(stream.feed("\x9b"
                      "31m") == "\\u009b31m");
    CHECK(stream.feed("\xf0\x9f\x98") == "");
    CHECK(stream.feed("\x80") == "\xf0\x9f\x98\x80");
    // Invalid bytes are not held: only the start of a sequence that may yet finish.
    CHECK(stream.feed("\xff\x80") == "\\xff\\x80");
    CHECK(stream.feed("end\xe2") == "end");
    CHECK(stream.finish() == "\\xe2");
    CHECK(stream.finish().empty());
}

TEST_CASE("an error line keeps its breaks and backslashes and escapes the rest", "[ui]") {
    CHECK(rossoctl::ui::escapeErrorText("a\tb\nc") == "a\tb\nc");
    CHECK(rossoctl::ui::escapeErrorText("said \\x1b") == "said \\x1b");
    CHECK(rossoctl::ui::escapeErrorText("\x1b]52;c;eA==\x07\r\xc2\x9b\xe2\x80\xae\xff") ==
          "\\x1b]52;c;eA==\\x07\\r\\u009b\\u202e\\xff");
}

TEST_CASE("a TTY session passes cursor and colour codes, never what reaches beyond it", "[ui]") {
    rossoctl::ui::TtySessionFilter filter;
    // A prompt in colour, a cursor move, a charset switch, a line edit: all pass.
    const std::string prompt = "\x1b[1;32muser@pod\x1b[0m:~$ \x1b[2K\x1b[3D\x1b(B\x1b=\r\n\x08\t";
    CHECK(filter.feed(prompt) == prompt);
    // OSC 52 (clipboard), OSC 0 (title), OSC 8 (hyperlink), a DCS query, APC: dropped whole,
    // with BEL or ST as terminator; the text after them passes.
    CHECK(filter.feed("a\x1b]52;c;ZWNobyBwd25lZA==\x07"
                      "b") == "ab");
    CHECK(filter.feed("\x1b]0;root@bank\x1b\\c") == "c");
    CHECK(filter.feed("\x1b]8;;https://evil/\x07link\x1b]8;;\x07") == "link");
    CHECK(filter.feed("\x1bP$q\"p\x1b\\\x1b_apc\x1b\\\x1b^pm\x07\x1bXsos\x07"
                      "d") == "d");
    // Window operations (report the title, resize, move) are dropped; other CSI pass.
    CHECK(filter.feed("\x1b[21t\x1b[8;1;1t\x1b[?1049h") == "\x1b[?1049h");
    // C1 controls written as UTF-8 (U+009B is CSI, U+009D OSC) go; other UTF-8 stays.
    CHECK(filter.feed("\xc2\x9d"
                      "0;t\x07\xc2\x9b"
                      "1m\xc3\xa9\xc2\xa0") ==
          "0;t\x07"
          "1m\xc3\xa9\xc2\xa0");
}

TEST_CASE("a TTY session's sequences split across pieces are filtered the same", "[ui]") {
    const std::string stream =
        "x\x1b]52;c;AAAA\x1b\\y\x1b[31mz\xc2\x9b"
        "q";
    for (size_t cut = 0; cut <= stream.size(); ++cut) {
        rossoctl::ui::TtySessionFilter filter;
        std::string out = filter.feed(stream.substr(0, cut));
        out += filter.feed(stream.substr(cut));
        INFO("cut at " << cut);
        CHECK(out == "xy\x1b[31mzq");
    }
}

TEST_CASE("a TTY session's endless sequences are bounded and its modes reset at the end", "[ui]") {
    rossoctl::ui::TtySessionFilter filter;
    // A CSI that never ends is dropped after 64 bytes, not held: the text after it shows.
    const std::string endless = filter.feed("\x1b[" + std::string(100, '1') + "after");
    CHECK(endless.find('\x1b') == std::string::npos);
    CHECK(endless.size() > 5);
    CHECK(endless.substr(endless.size() - 5) == "after");
    // An OSC that never ends drops at most 64 KiB, then text shows again.
    const std::string flood = filter.feed("\x1b]0;" + std::string(70 * 1024, 'x'));
    CHECK(flood.size() < 70 * 1024 - 60 * 1024);
    const std::string reset = filter.finish();
    CHECK(reset.find("\x1b[?1000l") != std::string::npos);  // mouse reporting off
    CHECK(reset.find("\x1b[?1049l") != std::string::npos);  // the main screen back
    CHECK(reset.find("\x1b[0m") != std::string::npos);
}

TEST_CASE("a TTY session drops C1 controls however they are written, and VT52 mode", "[ui]") {
    rossoctl::ui::TtySessionFilter filter;
    // A doubled UTF-8 lead before U+009D (OSC): the first lead is invalid, the OSC still goes.
    CHECK(filter.feed("\xc2\xc2\x9d"
                      "0;PWNED\x07") == "0;PWNED\x07");
    CHECK(filter.feed("\xc2\xc2\x9b"
                      "21t") == "21t");
    // Raw 8-bit C1 (a terminal outside UTF-8 obeys them) and ESC % (which leaves UTF-8) go.
    CHECK(filter.feed("\x9d"
                      "0;t\x07\x90q\x9c\x1b%@ok") == "0;t\x07qok");
    // Stray continuation bytes and bytes no UTF-8 has go; whole characters stay.
    CHECK(filter.feed("\x80\xbf\xc0\xff\xe2\x82\xac\xf0\x9f\x98\x80") ==
          "\xe2\x82\xac\xf0\x9f\x98\x80");
    // VT52 mode (after which no ANSI reset works), a screen-reading checksum, media copy.
    CHECK(filter.feed("\x1b[?2l\x1b[?1;2h\x1b[1;1;1;1;1;1*y\x1b[5i\x1b[5 q\x1b[!p") ==
          "\x1b[5 q\x1b[!p");
    CHECK(filter.feed("\x1b[?25l\x1b[?1h") == "\x1b[?25l\x1b[?1h");
}

TEST_CASE("a TTY session reads CSI numbers as numbers and passes only allowed modes",
          "[ui][hostile]") {
    rossoctl::ui::TtySessionFilter filter;
    // VT52 written with a leading zero, keyboard lock, local echo, column mode, an unknown mode.
    CHECK(filter.feed("a\x1b[?02l\x1b[?0002l\x1b[2h\x1b[02h\x1b[12h\x1b[12l\x1b[?3h\x1b[?9999h"
                      "b") == "ab");
    // One forbidden mode in a list forbids the sequence.
    CHECK(filter.feed("\x1b[?25;2l\x1b[4;12h") == "");
    // Allowed modes, with or without leading zeros, pass as sent.
    CHECK(filter.feed("\x1b[?0025l\x1b[?1049h\x1b[4h\x1b[20l\x1b[?2004h") ==
          "\x1b[?0025l\x1b[?1049h\x1b[4h\x1b[20l\x1b[?2004h");
    // screen's and tmux's title string (ESC k ... ESC \) goes whole.
    CHECK(filter.feed("x\x1bkroot@bank\x1b\\y") == "xy");
    // Answer-backs: ENQ and DECID go; the cursor position and device attributes stay.
    CHECK(filter.feed("\x05\x1bZ\x1b[6n\x1b[c\x1b[>c\x1b[5;1n") == "\x1b[6n\x1b[c\x1b[>c");
    // A full reset, 8-bit controls, locking shifts, a number too long to be one.
    CHECK(filter.feed("\x1b"
                      "c\x1b G\x1bn\x1b[1234567m\x1b[31m") == "\x1b[31m");
    // A control inside a sequence ends it and still acts; ESC restarts one.
    CHECK(filter.feed("\x1b[?\n2l\x1b[\x1b[1m") == "\n2l\x1b[1m");
}

TEST_CASE("outside a UTF-8 locale every byte from 0x80 up is escaped or dropped", "[ui][hostile]") {
    using rossoctl::ui::escapeForTerminal;
    using rossoctl::ui::localeIsUtf8;
    // U+011B is C4 9B: in Latin-1, 0x9b is CSI.
    CHECK(escapeForTerminal("\xc4\x9b?2l", false) == "\\xc4\\x9b?2l");
    CHECK(escapeForTerminal("\xc4\x9b", true) == "\xc4\x9b");
    CHECK(rossoctl::ui::escapeErrorText("\xc3\x80\n", false) == "\\xc3\\x80\n");
    rossoctl::ui::TtySessionFilter latin1(false);
    CHECK(latin1.feed("a\xc4\x9b?2lb\xc3\xa9") == "a?2lb");
    rossoctl::ui::TerminalTextStream stream(false);
    std::string streamed = stream.feed("x\xc4");
    streamed += stream.feed(
        "\x9b"
        "1m");
    streamed += stream.finish();
    CHECK(streamed == "x\\xc4\\x9b1m");
    CHECK(localeIsUtf8("", "", "en_US.UTF-8"));
    CHECK(localeIsUtf8("C.utf8", "", "de_DE.ISO-8859-1"));
    CHECK_FALSE(localeIsUtf8("", "de_DE.ISO-8859-1", "en_US.UTF-8"));
    CHECK_FALSE(localeIsUtf8("POSIX", "", "en_US.UTF-8"));
    CHECK_FALSE(localeIsUtf8("", "", ""));
}

TEST_CASE(
    "a TTY session drops overlong and surrogate UTF-8, scrollback erase, and resets every "
    "XTMODKEYS modifier",
    "[ui][tty][hostile]") {
    rossoctl::ui::TtySessionFilter filter;
    // RFC 3629's second bytes: E0 80..9F overlong, ED A0..BF surrogates, F0 80..8F overlong,
    // F4 90.. past U+10FFFF. Each is dropped whole; valid neighbours stay.
    CHECK(filter.feed("a\xe0\x80\xafz") == "az");
    CHECK(filter.feed("b\xed\xa0\x80z") == "bz");
    CHECK(filter.feed("c\xf0\x8f\xbf\xbfz") == "cz");
    CHECK(filter.feed("d\xf4\x90\x80\x80z") == "dz");
    CHECK(filter.feed("\xe0\xa0\x80\xed\x9f\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf") ==
          "\xe0\xa0\x80\xed\x9f\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf");
    // CSI 3 J erases the user's scrollback; CSI J, 1 J and 2 J stay.
    CHECK(filter.feed("\x1b[3J\x1b[2;3J\x1b[J\x1b[2J") == "\x1b[J\x1b[2J");
    // modifyOtherKeys and its siblings (>0m..>4m) may be left on by the program: all reset.
    const std::string reset = filter.finish();
    for (const char* sequence : {"\x1b[>0m", "\x1b[>1m", "\x1b[>2m", "\x1b[>4m"})
        CHECK(reset.find(sequence) != std::string::npos);
    // The resources it does not reset (3, 6, 7: keypad, modifier and special keys) never pass.
    CHECK(filter.feed("\x1b[>3;1m\x1b[>6;2m\x1b[>7;1mk") == "k");
    CHECK(filter.feed("\x1b[>4;2m\x1b[>m") == "\x1b[>4;2m\x1b[>m");
}
