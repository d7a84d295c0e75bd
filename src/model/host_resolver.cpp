#include "rossoctl/model/host_resolver.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>

#include "rossoctl/errors.hpp"

namespace rossoctl::model {

std::vector<std::string> SystemHostResolver::resolve(const std::string& host) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int status = getaddrinfo(host.c_str(), nullptr, &hints, &found);
    if (status != 0) throw Error(fmt::format("cannot resolve {}: {}", host, gai_strerror(status)));
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, &freeaddrinfo);
    std::vector<std::string> addresses;
    for (const addrinfo* entry = found; entry; entry = entry->ai_next) {
        char text[INET6_ADDRSTRLEN] = {};
        const void* raw = nullptr;
        if (entry->ai_family == AF_INET)
            raw = &reinterpret_cast<const sockaddr_in*>(entry->ai_addr)->sin_addr;
        else if (entry->ai_family == AF_INET6)
            raw = &reinterpret_cast<const sockaddr_in6*>(entry->ai_addr)->sin6_addr;
        if (raw && inet_ntop(entry->ai_family, raw, text, sizeof text))
            addresses.emplace_back(text);
    }
    std::sort(addresses.begin(), addresses.end());
    addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
    if (addresses.empty())
        throw Error(fmt::format("cannot resolve {}: no IPv4 or IPv6 address", host));
    return addresses;
}

}  // namespace rossoctl::model
