// Differential fuzzing of the `exec -it` filter against a real terminal parser (libvterm): for
// any bytes a pod writes, what the filter lets through, read by libvterm, sets no mode, title,
// clipboard or answer-back outside the allow-list written here (independently of the filter's
// own reading of the bytes), leaves the parser in its ground state, and after finish() leaves
// the terminal's modes as they started. A violation aborts with what libvterm saw.
#include <vterm.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "rossoctl/ui/tty_session.hpp"
#include "targets.hpp"

namespace fuzz {
namespace {

[[noreturn]] void violation(const std::string& what) {
    std::fprintf(stderr, "tty filter let through: %s\n", what.c_str());
    std::abort();
}

struct VTermFree {
    void operator()(VTerm* vt) const { vterm_free(vt); }
};
using Terminal = std::unique_ptr<VTerm, VTermFree>;

Terminal newTerminal() {
    Terminal vt(vterm_new(24, 80));
    vterm_set_utf8(vt.get(), 1);
    return vt;
}

long argument(const long args[], int i) {
    return CSI_ARG_IS_MISSING(args[i]) ? -1 : CSI_ARG(args[i]);
}

bool allowedMode(bool dec, long mode) {
    static constexpr long kAnsi[] = {4, 20};
    static constexpr long kDec[] = {1,    5,    6,    7,    9,    12,   25,
                                    47,   1000, 1001, 1002, 1003, 1004, 1005,
                                    1006, 1015, 1016, 1047, 1048, 1049, 2004};
    for (long allowed : dec ? std::basic_string_view<long>(kDec, std::size(kDec))
                            : std::basic_string_view<long>(kAnsi, std::size(kAnsi)))
        if (mode == allowed) return true;
    return false;
}

// The policy, read from what libvterm parsed.
bool allowedCsi(const char* leader, const long args[], int count, const char* intermediates,
                char command) {
    const std::string prefix = leader ? leader : "";
    const std::string middle = intermediates ? intermediates : "";
    const bool bare = count == 1 && argument(args, 0) <= 0;
    if (!middle.empty())
        return prefix.empty() &&
               ((middle == " " && command == 'q' && count == 1 && argument(args, 0) <= 6) ||
                (middle == "!" && command == 'p' && bare));
    if (command == 'h' || command == 'l') {
        if (!prefix.empty() && prefix != "?") return false;
        for (int i = 0; i < count; ++i)
            if (!allowedMode(prefix == "?", argument(args, i))) return false;
        return true;
    }
    if (prefix.empty()) {
        if (command == 'n') return count == 1 && (argument(args, 0) == 5 || argument(args, 0) == 6);
        if (command == 'c') return bare;
        return std::string_view("@ABCDEFGHIJKLMPSTXZ`adefgmrsu").find(command) !=
               std::string_view::npos;
    }
    if (prefix == "?") return command == 'J' || command == 'K';
    if (prefix == ">") return (command == 'c' && bare) || command == 'm' || command == 'u';
    if (prefix == "<") return command == 'u';
    return false;
}

// Pass 1: every token libvterm's parser reads from the filtered stream.
struct ParserCheck {
    std::string lastText;
    static int text(const char* bytes, size_t len, void* user) {
        static_cast<ParserCheck*>(user)->lastText.assign(bytes, len);
        return static_cast<int>(len);
    }
    // C0 from the text; C1 only as libvterm reads the allowed ESC D, E, H and M (IND, NEL,
    // HTS, RI): the filter never passes a C1 control itself.
    static int control(unsigned char c, void*) {
        const bool c0 = c >= 0x07 && c <= 0x0f;
        const bool c1 = c == 0x84 || c == 0x85 || c == 0x88 || c == 0x8d;
        if (!c0 && !c1) violation("control " + std::to_string(c));
        return 1;
    }
    static int escape(const char* bytes, size_t len, void*) {
        const std::string_view seq(bytes, len);
        const bool single =
            len == 1 && std::string_view("78=>DEHM").find(seq[0]) != std::string_view::npos;
        const bool charset = len == 2 &&
                             std::string_view("()*+").find(seq[0]) != std::string_view::npos &&
                             std::string_view("B0A").find(seq[1]) != std::string_view::npos;
        if (!single && !charset) violation("ESC " + std::string(seq));
        return 1;
    }
    static int csi(const char* leader, const long args[], int count, const char* intermediates,
                   char command, void*) {
        if (!allowedCsi(leader, args, count, intermediates, command)) {
            std::string shown = std::string("CSI ") + (leader ? leader : "");
            for (int i = 0; i < count; ++i) shown += std::to_string(argument(args, i)) + ";";
            violation(shown + (intermediates ? intermediates : "") + command);
        }
        return 1;
    }
    static int osc(const char* command, size_t len, void*) {
        violation("OSC " + std::string(command, len));
    }
    static int dcs(const char* command, size_t len, void*) {
        violation("DCS " + std::string(command, len));
    }
};

// Pass 2: libvterm's terminal state: no title, no string it does not know, answers only to
// the queries allowed, and the modes back at their start after finish().
struct StateCheck {
    bool altScreen = false, reverse = false, cursorVisible = true;
    int mouse = VTERM_PROP_MOUSE_NONE;
    std::string answers;
    static int settermprop(VTermProp prop, VTermValue* value, void* user) {
        auto& self = *static_cast<StateCheck*>(user);
        switch (prop) {
            case VTERM_PROP_TITLE:
            case VTERM_PROP_ICONNAME:
                violation("a window title");
            case VTERM_PROP_ALTSCREEN:
                self.altScreen = value->boolean;
                break;
            case VTERM_PROP_REVERSE:
                self.reverse = value->boolean;
                break;
            case VTERM_PROP_CURSORVISIBLE:
                self.cursorVisible = value->boolean;
                break;
            case VTERM_PROP_MOUSE:
                self.mouse = value->number;
                break;
            default:
                break;
        }
        return 1;
    }
    static int osc(const char* command, size_t len, void*) {
        violation("OSC to the terminal: " + std::string(command, len));
    }
    static int dcs(const char* command, size_t len, void*) {
        violation("DCS to the terminal: " + std::string(command, len));
    }
    // libvterm calls these without checking for them; the screen itself is not looked at.
    static int scrollrect(VTermRect, int, int, void*) { return 1; }
    static int moverect(VTermRect, VTermRect, void*) { return 1; }
    static int erase(VTermRect, int, void*) { return 1; }
    static void output(const char* bytes, size_t len, void* user) {
        static_cast<StateCheck*>(user)->answers.append(bytes, len);
    }
};

// "\x1b[" (digits ';')* FINAL, with an optional '?' or '>' after the '['.
bool allowedAnswers(std::string_view answers) {
    while (!answers.empty()) {
        if (!answers.starts_with("\x1b[")) return false;
        size_t i = 2;
        if (i < answers.size() && (answers[i] == '?' || answers[i] == '>')) ++i;
        while (i < answers.size() &&
               ((answers[i] >= '0' && answers[i] <= '9') || answers[i] == ';'))
            ++i;
        if (i >= answers.size() ||
            std::string_view("Rcn").find(answers[i]) == std::string_view::npos)
            return false;
        answers.remove_prefix(i + 1);
    }
    return true;
}

}  // namespace

void ttyAgainstVterm(std::string_view input) {
    // The pod's bytes in two pieces, split where the first byte says: a split never matters.
    const size_t cut =
        input.empty() ? 0 : static_cast<unsigned char>(input[0]) % (input.size() + 1);
    rossoctl::ui::TtySessionFilter filter;
    std::string shown = filter.feed(input.substr(0, cut));
    shown += filter.feed(input.substr(cut));
    const std::string reset = filter.finish();

    ParserCheck tokens;
    const VTermParserCallbacks parserCallbacks = {ParserCheck::text,
                                                  ParserCheck::control,
                                                  ParserCheck::escape,
                                                  ParserCheck::csi,
                                                  ParserCheck::osc,
                                                  ParserCheck::dcs,
                                                  nullptr};
    Terminal parser = newTerminal();
    vterm_parser_set_callbacks(parser.get(), &parserCallbacks, &tokens);
    vterm_input_write(parser.get(), shown.data(), shown.size());
    vterm_input_write(parser.get(), reset.data(), reset.size());
    // Ground state: a plain letter now is text, not part of a sequence or a string.
    tokens.lastText.clear();
    vterm_input_write(parser.get(), "Z", 1);
    if (tokens.lastText != "Z") violation("a sequence still open at the end");

    StateCheck state;
    Terminal terminal = newTerminal();
    vterm_output_set_callback(terminal.get(), StateCheck::output, &state);
    VTermState* screen = vterm_obtain_state(terminal.get());
    VTermStateCallbacks stateCallbacks{};
    stateCallbacks.settermprop = StateCheck::settermprop;
    stateCallbacks.scrollrect = StateCheck::scrollrect;
    stateCallbacks.moverect = StateCheck::moverect;
    stateCallbacks.erase = StateCheck::erase;
    vterm_state_set_callbacks(screen, &stateCallbacks, &state);
    VTermParserCallbacks fallbacks{};
    fallbacks.osc = StateCheck::osc;
    fallbacks.dcs = StateCheck::dcs;
    vterm_state_set_unrecognised_fallbacks(screen, &fallbacks, &state);
    vterm_state_reset(screen, 1);
    vterm_input_write(terminal.get(), shown.data(), shown.size());
    vterm_input_write(terminal.get(), reset.data(), reset.size());
    if (!allowedAnswers(state.answers)) violation("an answer-back " + state.answers);
    if (state.altScreen || state.reverse || !state.cursorVisible ||
        state.mouse != VTERM_PROP_MOUSE_NONE)
        violation("a mode left on after finish(): alternate screen " +
                  std::to_string(state.altScreen) + ", reverse " + std::to_string(state.reverse) +
                  ", cursor visible " + std::to_string(state.cursorVisible) + ", mouse " +
                  std::to_string(state.mouse));
}

}  // namespace fuzz
