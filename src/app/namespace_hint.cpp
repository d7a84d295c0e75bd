#include "rossoctl/app/namespace_hint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "rossoctl/app/listed_object.hpp"
#include "rossoctl/ui/nearest_word.hpp"

namespace rossoctl::app {

namespace {

// The cluster's namespaces; nullopt when they cannot be listed (not allowed, or unreachable).
std::optional<std::vector<std::string>> namespaceNames(kube::Client& client) {
    std::vector<std::string> names;
    try {
        const auto listed = client.list(kube::resources::namespaces(), "");
        const auto items = listed.find("items");
        if (items == listed.end() || !items->is_array()) return std::nullopt;
        for (const auto& item : *items) names.push_back(listedName(item));
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return names;
}

}  // namespace

std::string missingNamespaceHint(kube::Client& client, const std::string& ns) {
    const auto names = namespaceNames(client);
    // Not allowed to list them (or unreachable): the empty list says enough.
    if (!names || std::find(names->begin(), names->end(), ns) != names->end()) return {};
    const std::string nearest = ui::nearestWord(ns, *names);
    return fmt::format("namespace \"{}\" does not exist{}", ns,
                       nearest.empty() ? "" : fmt::format("; did you mean \"{}\"?", nearest));
}

std::string missingNamespaceMessage(kube::Client& client, const std::string& ns) {
    const auto names = namespaceNames(client);
    const std::string nearest = names ? ui::nearestWord(ns, *names) : "";
    if (!nearest.empty() && nearest != ns)
        return fmt::format("namespace \"{}\" not found; did you mean \"{}\"?", ns, nearest);
    return fmt::format("namespace \"{}\" not found; run \"rossoctl project create {}\" first", ns,
                       ns);
}

}  // namespace rossoctl::app
