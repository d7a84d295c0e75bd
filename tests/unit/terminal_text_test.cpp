// Pod-controlled text (file names, probe output) reaches a terminal only as visible escapes.
#include "rossoctl/ui/terminal_text.hpp"

#include <catch2/catch.hpp>

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
