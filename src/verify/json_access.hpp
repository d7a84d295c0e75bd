#pragma once
// Reading the pod objects the static checks judge: a member or null, never an exception.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rossoctl::verify::json_access {

using nlohmann::json;

inline const json& nullJson() {
    static const json value;
    return value;
}
inline const json& emptyArray() {
    static const json value = json::array();
    return value;
}

// The member `key` of object, or null.
inline const json& at(const json& object, const char* key) {
    if (!object.is_object()) return nullJson();
    auto it = object.find(key);
    return it == object.end() ? nullJson() : *it;
}
inline const json& arrayAt(const json& object, const char* key) {
    const json& value = at(object, key);
    return value.is_array() ? value : emptyArray();
}
inline std::string stringAt(const json& object, const char* key, const std::string& fallback = "") {
    const json& value = at(object, key);
    return value.is_string() ? value.get<std::string>() : fallback;
}

inline const json& podSpec(const json& pod) {
    return at(pod, "spec");
}
inline std::string podName(const json& pod) {
    return stringAt(at(pod, "metadata"), "name", "?");
}

inline std::vector<json> allContainers(const json& pod) {
    std::vector<json> out;
    for (const char* key : {"initContainers", "containers"})
        for (const auto& container : arrayAt(podSpec(pod), key)) out.push_back(container);
    return out;
}

// A server's string in evidence: its first line, at most `most` bytes.
inline std::string shortened(const std::string& text, std::size_t most = 100) {
    const std::string line = text.substr(0, text.find('\n'));
    return line.size() > most ? line.substr(0, most) + "..." : line;
}

inline std::string joined(const std::vector<std::string>& parts,
                          const std::string& separator = ", ") {
    std::string out;
    for (const auto& part : parts) out += (out.empty() ? "" : separator) + part;
    return out;
}

// "A, B, C, D and 2 more": a server's list (a hostile namespace may hold thousands) never makes
// a line without end.
inline std::string fewOf(const std::vector<std::string>& all, std::size_t most = 4) {
    std::string out;
    for (std::size_t i = 0; i < all.size() && i < most; ++i) out += (i ? ", " : "") + all[i];
    if (all.size() > most) out += " and " + std::to_string(all.size() - most) + " more";
    return out;
}

// A container path as the kubelet and the runtime take it: made absolute, "//", "." and ".."
// taken out lexically (clamped at "/"), no trailing "/" (review 68 H2: "/tmp/../bin/dash").
inline std::string cleanedPath(const std::string& raw) {
    std::vector<std::string> parts;
    std::size_t from = 0;
    while (from <= raw.size()) {
        const std::size_t to = std::min(raw.find('/', from), raw.size());
        const std::string part = raw.substr(from, to - from);
        if (part == "..") {
            if (!parts.empty()) parts.pop_back();
        } else if (!part.empty() && part != ".") {
            parts.push_back(part);
        }
        from = to + 1;
    }
    std::string path;
    for (const auto& part : parts) path += "/" + part;
    return path.empty() ? "/" : path;
}

// Every place the kubelet mounts into a container, cleaned, and whether the container may write
// there: its volume mounts, its block devices, and its termination message file, which the
// kubelet mounts writable wherever the spec puts it (review 68 H1).
struct MountedPath {
    std::string path;
    bool writable;
};
inline std::vector<MountedPath> mountedPaths(const json& container) {
    std::vector<MountedPath> out;
    for (const auto& mount : arrayAt(container, "volumeMounts"))
        out.push_back({cleanedPath(stringAt(mount, "mountPath")), at(mount, "readOnly") != true});
    for (const auto& device : arrayAt(container, "volumeDevices"))
        out.push_back({cleanedPath(stringAt(device, "devicePath")), true});
    if (const std::string message = stringAt(container, "terminationMessagePath"); !message.empty())
        out.push_back({cleanedPath(message), true});
    return out;
}

}  // namespace rossoctl::verify::json_access
