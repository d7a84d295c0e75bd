#include "run_pod_target.hpp"

#include <algorithm>
#include <cctype>

namespace rossoctl::commands {

const ObjectType& podType() {
    static const ObjectType type{"pod", "pods", "", {"po"}};
    return type;
}

bool namesPodType(const std::string& prefix) {
    std::string kind = prefix;
    std::transform(kind.begin(), kind.end(), kind.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const ObjectType& type = podType();
    return kind == type.singular || kind == type.plural ||
           std::find(type.aliases.begin(), type.aliases.end(), kind) != type.aliases.end();
}

SandboxOrRunPod sandboxOrRunPod(const std::string& argument) {
    const size_t slash = argument.find('/');
    if (slash != std::string::npos && namesPodType(argument.substr(0, slash)))
        return {argument.substr(slash + 1), true};
    return {objectName(argument, {sandboxType(), podType()}, "sandbox"), false};
}

}  // namespace rossoctl::commands
