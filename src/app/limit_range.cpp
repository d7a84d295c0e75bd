#include "rossoctl/app/limit_range.hpp"

#include <fmt/format.h>

#include <tuple>

#include "rossoctl/model/validation.hpp"

namespace rossoctl::app {

std::string limitRangeViolation(const nlohmann::json& limitRanges, const std::string& ns,
                                const std::string& cpu, const std::string& memory) {
    using nlohmann::json;
    for (const auto& range : limitRanges.value("items", json::array())) {
        const std::string rangeName = range.value("metadata", json::object()).value("name", "");
        for (const auto& limit :
             range.value("spec", json::object()).value("limits", json::array())) {
            if (limit.value("type", "") != "Container") continue;
            for (const auto& [resource, flag, wanted] :
                 {std::tuple<std::string, std::string, std::string>{"cpu", "--cpu", cpu},
                  {"memory", "--memory", memory}}) {
                const double asked = model::parseQuantity(wanted, flag);
                const auto max = limit.value("max", json::object());
                if (max.contains(resource) && max[resource].is_string() &&
                    asked > model::parseQuantity(max[resource].get<std::string>(), resource))
                    return fmt::format(
                        "{} {} is more than a container may have in namespace {} (max {} {}, "
                        "LimitRange {}); nothing was created",
                        flag, wanted, ns, resource, max[resource].get<std::string>(), rangeName);
                const auto min = limit.value("min", json::object());
                if (min.contains(resource) && min[resource].is_string() &&
                    asked < model::parseQuantity(min[resource].get<std::string>(), resource))
                    return fmt::format(
                        "{} {} is less than a container must have in namespace {} (min {} {}, "
                        "LimitRange {}); nothing was created",
                        flag, wanted, ns, resource, min[resource].get<std::string>(), rangeName);
            }
        }
    }
    return {};
}

}  // namespace rossoctl::app
