// Every string of the pod's spec where a container sees it, and the pieces it may join (attack
// 54, T1): a token as an env var's name, a dnsConfig option, a mount path's segments, the key
// names of a ConfigMap, hex in hostAliases. Evidence names where, never the value.
#include "credential_places.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "json_access.hpp"

namespace rossoctl::verify {

using nlohmann::json;
using namespace json_access;

namespace {

const char* kContainerKinds[] = {"initContainers", "containers", "ephemeralContainers"};

// A name fit to stand in a "where": short, of the characters names are made of. Another (an
// env name holding a token) is shown by its place instead.
bool plainName(std::string_view name) {
    return !name.empty() && name.size() <= 63 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
    });
}

bool lettersOnly(std::string_view key) {
    return !key.empty() && key.size() <= 40 && std::all_of(key.begin(), key.end(), [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) != 0;
    });
}

// What readableValues reads already, by the keys from the container down (indices left out).
bool readAlready(const std::string& keys) {
    auto endsWith = [&](std::string_view tail) {
        return keys.size() >= tail.size() &&
               keys.compare(keys.size() - tail.size(), tail.size(), tail.data(), tail.size()) == 0;
    };
    return keys == "env.value" || keys == "command" || keys == "args" ||
           endsWith(".exec.command") || endsWith(".httpGet.path") ||
           endsWith(".httpGet.httpHeaders.value");
}

struct Walk {
    std::vector<ReadableValue>& out;

    static std::string under(const std::string& path, const std::string& key) {
        if (path.empty()) return key;
        return path.back() == ' ' ? path + key : path + "." + key;
    }

    // prefix: "pod" or "container NAME"; path: the fields from there ("dnsConfig.options atk
    // "); keys: the same without indices or names, for readAlready.
    void walk(const json& node, const std::string& prefix, const std::string& path,
              const std::string& keys, bool inContainer) {
        if (node.is_string()) {
            if (inContainer && readAlready(keys)) return;
            std::string where = path;
            while (!where.empty() && where.back() == ' ') where.pop_back();
            if (const auto named = where.rfind(" value");
                named != std::string::npos && named + 6 == where.size() && where.find(' ') != named)
                where.erase(named);  // "pod dnsConfig.options atk", as "env T" is
            out.push_back({where.empty() ? prefix : prefix + " " + where, node.get<std::string>()});
            return;
        }
        if (node.is_array()) {
            for (size_t i = 0; i < node.size(); ++i) {
                const json& item = node[i];
                const std::string name = stringAt(item, "name");
                if (item.is_object() && plainName(name))
                    walkNamed(item, prefix, path + " " + name + " ", path + " ", keys, inContainer);
                else
                    walk(item, prefix, fmt::format("{}[{}]", path, i), keys, inContainer);
            }
            return;
        }
        if (!node.is_object()) return;
        for (const auto& [key, value] : node.items()) {
            const bool plain = plainName(key);
            if (!lettersOnly(key))  // a map's key (nodeSelector, limits) is a string too
                out.push_back(
                    {fmt::format("{} {} key", prefix, path.empty() ? "spec" : path), key});
            const std::string segment = plain ? key : "[a key]";
            const std::string nextKeys = keys.empty() ? key : keys + "." + key;
            if (!inContainer && path.empty()) {
                bool containers = false;
                for (const char* kind : kContainerKinds) containers = containers || key == kind;
                if (containers && value.is_array()) {
                    for (size_t i = 0; i < value.size(); ++i) {
                        const std::string name = stringAt(value[i], "name");
                        walk(value[i],
                             plainName(name) ? "container " + name
                                             : fmt::format("container {}[{}]", key, i),
                             "", "", true);
                    }
                    continue;
                }
            }
            walk(value, prefix, under(path, segment), nextKeys, inContainer);
        }
    }

    // An element of an array named by its "name": the name read where it is, the rest under it.
    void walkNamed(const json& item, const std::string& prefix, const std::string& named,
                   const std::string& unnamed, const std::string& keys, bool inContainer) {
        for (const auto& [key, value] : item.items()) {
            const std::string nextKeys = keys.empty() ? key : keys + "." + key;
            if (key == "name")
                walk(value, prefix, unnamed + "name", nextKeys, inContainer);
            else
                walk(value, prefix, named + (plainName(key) ? key : "[a key]"), nextKeys,
                     inContainer);
        }
    }
};

// The longest base64url run of a piece: "1.<part>" is <part>.
std::string longestRun(const std::string& piece) {
    size_t best = 0, bestLength = 0;
    for (size_t at = 0; at < piece.size();) {
        size_t end = at;
        while (end < piece.size() && (std::isalnum(static_cast<unsigned char>(piece[end])) != 0 ||
                                      piece[end] == '-' || piece[end] == '_'))
            ++end;
        if (end - at > bestLength) best = at, bestLength = end - at;
        at = end == at ? at + 1 : end;
    }
    return piece.substr(best, bestLength);
}

// The pieces with the ordinal tag they all open with taken off ("x00<payload>", "c7<payload>": a
// few letters alike, then an ordinal of 1 to 4 digits that counts up by one from piece to piece),
// joined, one join for each width that reads so (attack 65 T1: a token in 18 pods' hostnames
// `xNN<60 characters of base32>`; review 67 H5: a decimal payload runs on from the ordinal).
std::vector<std::string> untaggedJoins(const std::vector<std::string>& pieces) {
    constexpr size_t kLongestTagLetters = 4, kWidestOrdinal = 4;
    const std::string& first = pieces.front();
    size_t letters = 0;
    while (letters < first.size() && std::isalpha(static_cast<unsigned char>(first[letters])))
        ++letters;
    if (letters > kLongestTagLetters) return {};
    std::vector<std::string> joins;
    for (size_t width = 1; width <= kWidestOrdinal; ++width) {
        bool counts = true;
        long previous = -1;
        for (const auto& piece : pieces) {
            if (piece.size() <= letters + width || piece.compare(0, letters, first, 0, letters)) {
                counts = false;
                break;
            }
            long ordinal = 0;
            for (size_t i = letters; i < letters + width && counts; ++i) {
                counts = std::isdigit(static_cast<unsigned char>(piece[i])) != 0;
                ordinal = ordinal * 10 + (piece[i] - '0');
            }
            if (!counts || (previous >= 0 && ordinal != previous + 1)) {
                counts = false;
                break;
            }
            previous = ordinal;
        }
        if (!counts) continue;
        std::string joined;
        for (const auto& piece : pieces) joined += piece.substr(letters + width);
        joins.push_back(std::move(joined));
    }
    return joins;
}

std::vector<std::string> joinsOf(const std::vector<std::string>& pieces) {
    constexpr size_t kLongestPiece = 64 * 1024, kShortTag = 8;
    if (pieces.size() < 2) return {};
    std::string bare, dotted, runs, longOnes;
    for (const auto& piece : pieces) {
        if (piece.size() > kLongestPiece) return {};
        bare += piece;
        dotted += (dotted.empty() ? "" : ".") + piece;
        runs += longestRun(piece);
        if (piece.size() >= kShortTag) longOnes += piece;
    }
    std::vector<std::string> joins = {bare, dotted};
    std::vector<std::string> others = {runs, longOnes};
    for (auto& untagged : untaggedJoins(pieces)) others.push_back(std::move(untagged));
    for (auto& other : others)
        if (!other.empty() && std::find(joins.begin(), joins.end(), other) == joins.end())
            joins.push_back(std::move(other));
    return joins;
}

void addJoin(std::vector<JoinedValues>& out, std::string where, std::vector<std::string> pieces,
             const std::vector<std::string>& parts) {
    auto joins = joinsOf(parts);
    if (joins.empty()) return;
    out.push_back({std::move(where), std::move(pieces), std::move(joins)});
}

std::string containerWhere(const json& container, const char* kind, size_t i) {
    const std::string name = stringAt(container, "name");
    return plainName(name) ? "container " + name : fmt::format("container {}[{}]", kind, i);
}

}  // namespace

std::vector<std::string> joinedPieces(const std::vector<std::string>& pieces) {
    return joinsOf(pieces);
}

std::vector<ReadableValue> specStrings(const json& pod,
                                       const std::vector<CredentialSource>& sources) {
    std::vector<ReadableValue> values;
    Walk{values}.walk(at(pod, "spec"), "pod", "", "", false);
    for (const auto& source : sources) {
        if (!source.object) continue;
        size_t index = 0;
        for (const char* field : {"data", "binaryData"})
            if (const json& data = at(*source.object, field); data.is_object())
                for (const auto& item : data.items())
                    values.push_back(
                        {fmt::format("{}/{} key name {}", source.kind, source.name, ++index),
                         item.key()});
    }
    std::erase_if(values, [](const ReadableValue& value) { return value.value.empty(); });
    return values;
}

std::vector<JoinedValues> joinedPlaces(const json& pod,
                                       const std::vector<CredentialSource>& sources) {
    std::vector<JoinedValues> out;
    const json& spec = at(pod, "spec");
    for (const char* kind : kContainerKinds) {
        const auto& containers = arrayAt(spec, kind);
        for (size_t i = 0; i < containers.size(); ++i) {
            const std::string name = containerWhere(containers[i], kind, i);
            std::vector<std::string> allWheres, allSegments;
            const auto& mounts = arrayAt(containers[i], "volumeMounts");
            for (size_t m = 0; m < mounts.size(); ++m) {
                const std::string volume = stringAt(mounts[m], "name");
                const std::string mount = plainName(volume)
                                              ? fmt::format("{} volumeMounts {} ", name, volume)
                                              : fmt::format("{} volumeMounts[{}].", name, m);
                for (const char* field : {"mountPath", "subPath", "subPathExpr"}) {
                    const auto segments = nonEmptyPieces(stringAt(mounts[m], field), '/');
                    const std::string where = mount + field;
                    addJoin(out, where + " segments joined", {where}, segments);
                    if (std::string(field) == "mountPath") {
                        allWheres.push_back(where);
                        allSegments.insert(allSegments.end(), segments.begin(), segments.end());
                    }
                }
            }
            if (mounts.size() > 1)
                addJoin(out, name + " mount paths joined", allWheres, allSegments);
            std::vector<std::string> names, nameWheres;
            for (const auto& env : arrayAt(containers[i], "env")) {
                names.push_back(stringAt(env, "name"));
                nameWheres.push_back(name + " env name");
            }
            addJoin(out, name + " env names joined", nameWheres, names);
        }
    }
    // /etc/hosts and /etc/resolv.conf: every label, in order.
    std::vector<std::string> allLabels, allWheres;
    const auto& aliases = arrayAt(spec, "hostAliases");
    for (size_t a = 0; a < aliases.size(); ++a) {
        const auto& hostnames = arrayAt(aliases[a], "hostnames");
        for (size_t h = 0; h < hostnames.size(); ++h) {
            if (!hostnames[h].is_string()) continue;
            const std::string where = fmt::format("pod hostAliases[{}].hostnames[{}]", a, h);
            const auto labels = nonEmptyPieces(hostnames[h].get<std::string>(), '.');
            addJoin(out, where + " labels joined", {where}, labels);
            allWheres.push_back(where);
            allLabels.insert(allLabels.end(), labels.begin(), labels.end());
        }
    }
    addJoin(out, "pod hostAliases hostnames joined", allWheres, allLabels);
    const json& dns = at(spec, "dnsConfig");
    std::vector<std::string> searchLabels, searchWheres, options, optionWheres;
    const auto& searches = arrayAt(dns, "searches");
    for (size_t s = 0; s < searches.size(); ++s) {
        if (!searches[s].is_string()) continue;
        const auto labels = nonEmptyPieces(searches[s].get<std::string>(), '.');
        searchLabels.insert(searchLabels.end(), labels.begin(), labels.end());
        searchWheres.push_back(fmt::format("pod dnsConfig.searches[{}]", s));
    }
    addJoin(out, "pod dnsConfig.searches joined", searchWheres, searchLabels);
    for (const auto& option : arrayAt(dns, "options")) {
        const std::string name = stringAt(option, "name");
        options.push_back(stringAt(option, "value"));
        optionWheres.push_back(plainName(name) ? "pod dnsConfig.options " + name
                                               : "pod dnsConfig.options");
    }
    addJoin(out, "pod dnsConfig.options joined", optionWheres, options);
    // The files of a volume: its items' paths, in order.
    for (const auto& volume : arrayAt(spec, "volumes")) {
        std::vector<std::string> paths;
        auto addItems = [&](const json& from) {
            for (const auto& item : arrayAt(from, "items"))
                for (auto& segment : nonEmptyPieces(stringAt(item, "path"), '/'))
                    paths.push_back(std::move(segment));
        };
        for (const char* kind : {"configMap", "secret", "downwardAPI"}) addItems(at(volume, kind));
        for (const auto& source : arrayAt(at(volume, "projected"), "sources"))
            for (const char* kind : {"configMap", "secret", "downwardAPI"})
                addItems(at(source, kind));
        const std::string name = stringAt(volume, "name");
        addJoin(out,
                fmt::format("pod volumes {} items' paths joined", plainName(name) ? name : "?"), {},
                paths);
    }
    // A downward-API file of annotations or labels: `key="value"` lines sorted by key, whose
    // keys' pieces (a prefix's labels, its name) a pod may put together (attack 57, T6).
    auto addDownward = [&](const json& downwardApi, const std::string& volume) {
        for (const auto& item : arrayAt(downwardApi, "items"))
            for (const std::string field : {"annotations", "labels"}) {
                const json& map = at(at(pod, "metadata"), field.c_str());
                if (stringAt(at(item, "fieldRef"), "fieldPath") != "metadata." + field ||
                    !map.is_object())
                    continue;
                std::vector<std::string> keys, lines, words;  // words: '-' and '_' apart too
                for (const auto& [key, value] : map.items()) {
                    for (const auto& label : nonEmptyPieces(key, '/'))
                        for (auto& piece : nonEmptyPieces(label, '.')) {
                            for (const auto& part : nonEmptyPieces(piece, '-'))
                                for (auto& word : nonEmptyPieces(part, '_'))
                                    words.push_back(std::move(word));
                            keys.push_back(piece);
                            lines.push_back(std::move(piece));
                        }
                    if (value.is_string()) lines.push_back(value.get<std::string>());
                }
                const std::string where = fmt::format("pod volumes {} {}", volume, field);
                addJoin(out, where + " keys joined", {}, keys);
                if (lines != keys) addJoin(out, where + " keys and values joined", {}, lines);
                if (words != keys) addJoin(out, where + " keys' words joined", {}, words);
            }
    };
    for (const auto& volume : arrayAt(spec, "volumes")) {
        const std::string name = stringAt(volume, "name");
        addDownward(at(volume, "downwardAPI"), plainName(name) ? name : "?");
        for (const auto& source : arrayAt(at(volume, "projected"), "sources"))
            addDownward(at(source, "downwardAPI"), plainName(name) ? name : "?");
    }
    // A Secret's or ConfigMap's key names are the names of its files.
    for (const auto& source : sources) {
        if (!source.object) continue;
        std::vector<std::string> keys, wheres;
        for (const char* field : {"data", "binaryData"})
            if (const json& data = at(*source.object, field); data.is_object())
                for (const auto& item : data.items()) {
                    keys.push_back(item.key());
                    wheres.push_back(
                        fmt::format("{}/{} key name {}", source.kind, source.name, keys.size()));
                }
        addJoin(out, fmt::format("{}/{} key names joined", source.kind, source.name), wheres, keys);
    }
    return out;
}

std::vector<std::string> nonEmptyPieces(const std::string& text, char separator) {
    std::vector<std::string> pieces;
    size_t from = 0;
    for (size_t at = text.find(separator); at != std::string::npos;
         at = text.find(separator, from = at + 1))
        if (at > from) pieces.push_back(text.substr(from, at - from));
    if (from < text.size()) pieces.push_back(text.substr(from));
    return pieces;
}

}  // namespace rossoctl::verify
