#include "rossoctl/app/listed_object.hpp"

#include <fmt/format.h>

#include "rossoctl/kube/resource.hpp"

namespace rossoctl::app {

using nlohmann::json;

namespace {

std::string listedMetadataString(const json& object, const char* field) {
    const auto metadata = object.find("metadata");
    if (metadata == object.end() || !metadata->is_object()) return {};
    const auto value = metadata->find(field);
    return value != metadata->end() && value->is_string() ? value->get<std::string>()
                                                          : std::string{};
}

}  // namespace

std::string listedName(const json& object) {
    return object.is_object() ? listedMetadataString(object, "name") : std::string{};
}

std::string actingNamespace(const json& object, const std::string& listedNs) {
    if (!listedNs.empty() || !object.is_object()) return listedNs;
    return listedMetadataString(object, "namespace");
}

std::string unusableListedObject(const json& object, const std::string& listedNs) {
    if (!object.is_object()) return "it is not an object";
    const std::string name = listedMetadataString(object, "name");
    if (const std::string why = kube::invalidPathSegment(name); !why.empty())
        return fmt::format("its name \"{}\" {}", name, why);
    const std::string own = listedMetadataString(object, "namespace");
    if (!listedNs.empty()) {
        if (!own.empty() && own != listedNs)
            return fmt::format("it was listed in {} but its metadata.namespace is \"{}\"", listedNs,
                               own);
        return {};
    }
    if (const std::string why = kube::invalidPathSegment(own); !why.empty())
        return fmt::format("its metadata.namespace \"{}\" {}", own, why);
    return {};
}

}  // namespace rossoctl::app
