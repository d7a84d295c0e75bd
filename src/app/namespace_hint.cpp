#include "rossoctl/app/namespace_hint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "rossoctl/app/listed_object.hpp"
#include "rossoctl/ui/nearest_word.hpp"

namespace rossoctl::app {

std::string missingNamespaceHint(kube::Client& client, const std::string& ns) {
    std::vector<std::string> names;
    try {
        const auto listed = client.list(kube::resources::namespaces(), "");
        const auto items = listed.find("items");
        if (items == listed.end() || !items->is_array()) return {};
        for (const auto& item : *items) names.push_back(listedName(item));
    } catch (const std::exception&) {
        return {};  // not allowed to list them (or unreachable): the empty list says enough
    }
    if (std::find(names.begin(), names.end(), ns) != names.end()) return {};
    const std::string nearest = ui::nearestWord(ns, names);
    return fmt::format("namespace \"{}\" does not exist{}", ns,
                       nearest.empty() ? "" : fmt::format("; did you mean \"{}\"?", nearest));
}

}  // namespace rossoctl::app
