#pragma once
// "Did you mean": the known word a mistyped one most likely meant, as kubectl picks it.
#include <string>
#include <vector>

namespace rossoctl::ui {

// The known word nearest to typed (edit distance at most 2, or typed is a prefix); "" if none.
std::string nearestWord(const std::string& typed, const std::vector<std::string>& known);

}  // namespace rossoctl::ui
