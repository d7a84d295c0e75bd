#pragma once
// Text someone else controls (a pod's file names, a probe's output) made safe for a terminal.
#include <ostream>
#include <string>
#include <string_view>

#include "rossoctl/terminal_escape.hpp"

namespace rossoctl::ui {

// The escapers of rossoctl/terminal_escape.hpp, where the kube layer reaches them too.
using rossoctl::escapeErrorLine;
using rossoctl::escapeErrorText;
using rossoctl::escapeForTerminal;

// Whether the locale the variables name (LC_ALL, else LC_CTYPE, else LANG, as setlocale
// reads them) is UTF-8. None set is the C locale: not UTF-8.
bool localeIsUtf8(const std::string& lcAll, const std::string& lcCtype, const std::string& lang);

// escapeForTerminal for text that arrives in pieces (pod logs) and is shown as lines: line
// breaks (\n, \r\n) and tabs pass through, everything else is escaped as above. A UTF-8
// sequence or \r\n split between pieces is held back until the next piece (at most 3 bytes),
// so memory stays bounded however long a line is.
class TerminalTextStream {
  public:
    explicit TerminalTextStream(bool utf8 = true) : utf8_(utf8) {}
    std::string feed(std::string_view piece);
    // What was held back, escaped: call at the end of the stream.
    std::string finish();

  private:
    bool utf8_;
    std::string held_;
};

// A pod's stdout, stderr or logs on their way to `out`: through a TerminalTextStream when `out`
// is a terminal (the pod is untrusted), unchanged into a pipe or file, as kubectl passes them;
// flushed after each piece so output shows as it arrives.
class UntrustedTextWriter {
  public:
    // utf8: the terminal's locale is UTF-8 (else every byte from 0x80 up is escaped).
    UntrustedTextWriter(std::ostream& out, bool terminal, bool utf8 = true)
        : out_(out), terminal_(terminal), escaper_(utf8) {}
    void write(std::string_view bytes);
    // What the escaper held back (a split UTF-8 sequence): call once the stream has ended.
    void finish();

  private:
    std::ostream& out_;
    bool terminal_;
    TerminalTextStream escaper_;
};

// An ostream in front of a terminal whose locale is not UTF-8: every byte from 0x80 up becomes
// \xNN on its way to `target` (there 0x80..0x9f are C1 controls, 0x9b CSI), whoever wrote it.
// The last line of defence: the escapers above already made a pod's or server's text safe.
class EightBitEscapingStream : public std::ostream {
  public:
    explicit EightBitEscapingStream(std::ostream& target);

  private:
    class Buffer : public std::streambuf {
      public:
        explicit Buffer(std::streambuf* target) : target_(target) {}

      protected:
        int_type overflow(int_type c) override;
        std::streamsize xsputn(const char* text, std::streamsize count) override;
        int sync() override;

      private:
        std::streambuf* target_;
    };
    Buffer buffer_;
};

// An ostream in front of a UTF-8 terminal: the C1 controls (U+0080..U+009F), bidirectional
// overrides and isolates and the other characters escapeForTerminal escapes become \uXXXX on
// their way to `target`. -o json, yaml and jsonpath print a server's strings as they are
// (scripts parse them); on a terminal these would steer it or hide text. A character split
// between writes is held until the next (at most two bytes).
class UnicodeControlEscapingStream : public std::ostream {
  public:
    explicit UnicodeControlEscapingStream(std::ostream& target);
    ~UnicodeControlEscapingStream() override;

  private:
    class Buffer : public std::streambuf {
      public:
        explicit Buffer(std::streambuf* target) : target_(target) {}
        void finish();

      protected:
        int_type overflow(int_type c) override;
        std::streamsize xsputn(const char* text, std::streamsize count) override;
        int sync() override;

      private:
        bool put(std::string_view bytes);
        std::streambuf* target_;
        std::string held_;
    };
    Buffer buffer_;
};

}  // namespace rossoctl::ui
