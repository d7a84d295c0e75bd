#pragma once
// Text that came from a pod or the cluster, made safe to print: control characters (C0, DEL,
// C1, which a terminal may take as commands) become "\xNN"; everything else is kept.
#include <string>
#include <string_view>

namespace rossoctl::ui {

std::string terminalSafe(std::string_view text);

}  // namespace rossoctl::ui
