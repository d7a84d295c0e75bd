#include "rossoctl/kube/json_depth.hpp"

namespace rossoctl::kube {

namespace {
// One parsed node as nlohmann lays it out on glibc, from above: a map or vector entry, its
// allocation and a vector's slack (measured: 64 bytes of heap per `{}` in an array, 80 per
// `""`, 68 per token of a list of pods).
constexpr size_t kBytesPerToken = 96;
}  // namespace

JsonShape measureJson(std::string_view text, size_t maxDepth) {
    JsonShape shape;
    size_t depth = 0;
    size_t tokens = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;  // the escaped character, a quote included
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            ++tokens;
            if (++depth > maxDepth) shape.tooDeep = true;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        } else if (c == ',' || c == ':') {
            ++tokens;
        }
    }
    shape.memoryBytes = text.size() + tokens * kBytesPerToken;
    return shape;
}

bool nestsDeeperThan(std::string_view text, size_t maxDepth) {
    return measureJson(text, maxDepth).tooDeep;
}

}  // namespace rossoctl::kube
