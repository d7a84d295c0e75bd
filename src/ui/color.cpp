#include "rossoctl/ui/color.hpp"

namespace rossoctl::ui {

std::string paint(Color color, std::string_view text, bool enabled) {
    if (!enabled) return std::string(text);
    const char* code = "";
    switch (color) {
        case Color::Green:
            code = "\033[32m";
            break;
        case Color::Red:
            code = "\033[31m";
            break;
        case Color::Yellow:
            code = "\033[33m";
            break;
        case Color::Bold:
            code = "\033[1m";
            break;
        case Color::Dim:
            code = "\033[2m";
            break;
    }
    return std::string(code) + std::string(text) + "\033[0m";
}

}  // namespace rossoctl::ui
