// The arguments of `sandbox port-forward`: [LOCAL:]REMOTE ports and --address lists.
#include <arpa/inet.h>

#include <string_view>

#include "rossoctl/app/port_forward.hpp"

namespace rossoctl::app {
namespace {

// Digits only, no sign or space, within [minimum, 65535]; else nullopt.
std::optional<uint16_t> portNumber(std::string_view text, unsigned minimum) {
    if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != text.npos)
        return std::nullopt;
    const unsigned long value = std::stoul(std::string(text));
    if (value < minimum || value > 65535) return std::nullopt;
    return static_cast<uint16_t>(value);
}

std::string shown(const std::string& text) {
    return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

}  // namespace

PortMapping parsePortMapping(const std::string& spec) {
    const size_t colon = spec.find(':');
    const std::string_view remoteText = colon == std::string::npos
                                            ? std::string_view(spec)
                                            : std::string_view(spec).substr(colon + 1);
    const auto remote = portNumber(remoteText, 1);
    if (!remote)
        throw UsageError("invalid port \"" + shown(spec) +
                         "\": give [LOCAL:]REMOTE, REMOTE a number from 1 to 65535 (e.g. 8080 "
                         "or 9000:80)");
    PortMapping mapping;
    mapping.remote = *remote;
    if (colon == std::string::npos) {
        mapping.local = *remote;
        return mapping;
    }
    const std::string_view localText = std::string_view(spec).substr(0, colon);
    if (localText.empty()) return mapping;  // ":80": any free local port
    const auto local = portNumber(localText, 0);
    if (!local)
        throw UsageError("invalid local port in \"" + shown(spec) +
                         "\": give a number from 0 to 65535 (0 or nothing picks a free port)");
    mapping.local = *local;
    return mapping;
}

std::vector<ListenAddress> parseListenAddresses(const std::vector<std::string>& values) {
    std::vector<ListenAddress> addresses;
    auto add = [&](const std::string& ip, bool optional) {
        for (auto& existing : addresses)
            if (existing.ip == ip) {
                existing.optional = existing.optional && optional;
                return;
            }
        addresses.push_back({ip, optional});
    };
    for (const auto& value : values) {
        for (size_t start = 0; start <= value.size();) {
            const size_t comma = std::min(value.find(',', start), value.size());
            const std::string item = value.substr(start, comma - start);
            start = comma + 1;
            if (item == "localhost") {
                add("127.0.0.1", false);
                add("::1", true);
                continue;
            }
            in_addr v4{};
            in6_addr v6{};
            if (item.empty() || (::inet_pton(AF_INET, item.c_str(), &v4) != 1 &&
                                 ::inet_pton(AF_INET6, item.c_str(), &v6) != 1))
                throw UsageError("invalid --address \"" + shown(item) +
                                 "\": give IP addresses or localhost, comma-separated (e.g. "
                                 "--address 127.0.0.1,::1)");
            add(item, false);
        }
    }
    return addresses;
}

}  // namespace rossoctl::app
