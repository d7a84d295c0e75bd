#pragma once
// Color only on a TTY without NO_COLOR or --no-color.
#include <string>
#include <string_view>

namespace rossoctl::ui {

enum class Color { Green, Red, Yellow, Bold, Dim };

std::string paint(Color color, std::string_view text, bool enabled);

}  // namespace rossoctl::ui
