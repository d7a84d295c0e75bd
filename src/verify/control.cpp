// The positive control from the machine running rossoctl: resolve the target (the Context's
// resolver) and open a TCP connection to it, timing the handshake. No data is sent.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "rossoctl/errors.hpp"
#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

namespace {

// An IPv4 or IPv6 address in text as a socket address (no lookup); nullopt for a name.
std::optional<sockaddr_storage> numericAddress(const std::string& text, int port) {
    sockaddr_storage storage{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    if (::inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(static_cast<uint16_t>(port));
        return storage;
    }
    if (::inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(static_cast<uint16_t>(port));
        return storage;
    }
    return std::nullopt;
}

// One connection attempt; empty when it connected, else why not.
std::string tryConnect(const sockaddr_storage& address, std::chrono::milliseconds timeout) {
    const socklen_t size =
        address.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    const int fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return std::strerror(errno);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    std::string problem;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), size) != 0) {
        if (errno != EINPROGRESS) {
            problem = std::strerror(errno);
        } else {
            pollfd waiting{fd, POLLOUT, 0};
            const int ready = ::poll(&waiting, 1, static_cast<int>(timeout.count()));
            int error = 0;
            socklen_t errorSize = sizeof error;
            if (ready == 0)
                problem = fmt::format("no connection within {} ms", timeout.count());
            else if (ready < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &errorSize) != 0)
                problem = std::strerror(errno);
            else if (error != 0)
                problem = std::strerror(error);
        }
    }
    ::close(fd);
    return problem;
}

}  // namespace

AddressFamily podAddressFamily(const nlohmann::json& pod) {
    std::vector<std::string> addresses;
    const auto status = pod.value("status", nlohmann::json::object());
    for (const auto& entry : status.value("podIPs", nlohmann::json::array()))
        if (entry.is_object() && entry.value("ip", "") != "") addresses.push_back(entry["ip"]);
    if (addresses.empty() && status.value("podIP", "") != "") addresses.push_back(status["podIP"]);
    if (addresses.empty()) return AddressFamily::Any;
    const auto v6 = std::count_if(addresses.begin(), addresses.end(), [](const std::string& ip) {
        return ip.find(':') != std::string::npos;
    });
    if (v6 == 0) return AddressFamily::IPv4;
    if (static_cast<size_t>(v6) == addresses.size()) return AddressFamily::IPv6;
    return AddressFamily::Any;
}

ControlResult connectFromHere(model::HostResolver& resolver, const EgressTarget& target,
                              std::chrono::milliseconds timeout) {
    ControlResult result;
    result.vantage = "this machine";
    std::vector<std::string> addresses;
    if (numericAddress(target.host, target.port)) {
        addresses.push_back(target.host);
    } else {
        try {
            addresses = resolver.resolve(target.host);
        } catch (const Error& error) {
            result.detail = fmt::format("{} does not resolve here: {}", target.host, error.what());
            return result;
        }
    }
    for (const auto& address : addresses) {
        const auto socketAddress = numericAddress(address, target.port);
        if (!socketAddress) continue;
        const bool v6 = address.find(':') != std::string::npos;
        if ((target.family == AddressFamily::IPv4 && v6) ||
            (target.family == AddressFamily::IPv6 && !v6))
            continue;  // a family the pod has no address of
        // The real clock: this times a real handshake on the network, which poll() waits for.
        const auto started = std::chrono::steady_clock::now();
        const std::string problem = tryConnect(*socketAddress, timeout);
        if (problem.empty()) {
            result.reached = true;
            result.address = address;
            result.roundTrip = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::steady_clock::now() - started);
            break;
        }
        result.detail += fmt::format("{}{}:{}: {}", result.detail.empty() ? "" : "; ", address,
                                     target.port, problem);
    }
    if (!result.reached && result.detail.empty())
        result.detail = fmt::format("{} has no {} address", target.host,
                                    target.family == AddressFamily::IPv6 ? "IPv6" : "IPv4");
    if (!result.reached) result.detail = "from this machine " + result.detail;
    return result;
}

}  // namespace rossoctl::verify
