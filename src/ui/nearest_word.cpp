// Kubectl's suggestion rule: a word the typed one begins, else the nearest within an edit
// distance of two.
#include "rossoctl/ui/nearest_word.hpp"

#include <algorithm>

namespace rossoctl::ui {

std::string nearestWord(const std::string& typed, const std::vector<std::string>& known) {
    std::string best;
    size_t bestDistance = 3;  // kubectl suggests within an edit distance of 2
    for (const auto& word : known) {
        // A name a server sends may be any length: none past a Kubernetes name's 253 is offered,
        // and none whose length alone puts it over the distance is measured.
        if (word.size() > 253) continue;
        if (!typed.empty() && word.rfind(typed, 0) == 0) return word;
        if (word.size() + 2 < typed.size() || typed.size() + 2 < word.size()) continue;
        // Levenshtein distance, one row at a time; a swap of two letters counts once.
        std::vector<size_t> previous(word.size() + 1), current(word.size() + 1), before;
        for (size_t j = 0; j <= word.size(); ++j) previous[j] = j;
        for (size_t i = 1; i <= typed.size(); ++i) {
            current[0] = i;
            for (size_t j = 1; j <= word.size(); ++j) {
                const size_t cost = typed[i - 1] == word[j - 1] ? 0 : 1;
                current[j] =
                    std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
                if (i > 1 && j > 1 && typed[i - 1] == word[j - 2] && typed[i - 2] == word[j - 1])
                    current[j] = std::min(current[j], before[j - 2] + 1);
            }
            before = previous;
            previous = current;
        }
        if (previous[word.size()] < bestDistance) {
            bestDistance = previous[word.size()];
            best = word;
        }
    }
    return best;
}

}  // namespace rossoctl::ui
