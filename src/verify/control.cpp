// The positive control from the machine running rossoctl: resolve the target and open a TCP
// connection to it, timing the handshake. No data is sent.
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "rossoctl/verify/checks.hpp"

namespace rossoctl::verify {

namespace {

std::string addressOf(const sockaddr* address) {
    char host[NI_MAXHOST] = {};
    getnameinfo(address,
                address->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in), host,
                sizeof host, nullptr, 0, NI_NUMERICHOST);
    return host;
}

// One connection attempt; empty when it connected, else why not.
std::string tryConnect(const addrinfo& candidate, std::chrono::milliseconds timeout) {
    const int fd =
        ::socket(candidate.ai_family, candidate.ai_socktype | SOCK_CLOEXEC, candidate.ai_protocol);
    if (fd < 0) return std::strerror(errno);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    std::string problem;
    if (::connect(fd, candidate.ai_addr, candidate.ai_addrlen) != 0) {
        if (errno != EINPROGRESS) {
            problem = std::strerror(errno);
        } else {
            pollfd waiting{fd, POLLOUT, 0};
            const int ready = ::poll(&waiting, 1, static_cast<int>(timeout.count()));
            int error = 0;
            socklen_t size = sizeof error;
            if (ready == 0)
                problem = fmt::format("no connection within {} ms", timeout.count());
            else if (ready < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0)
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

ControlResult connectFromHere(const EgressTarget& target, std::chrono::milliseconds timeout) {
    ControlResult result;
    result.vantage = "this machine";
    addrinfo hints{};
    hints.ai_family = target.family == AddressFamily::IPv4   ? AF_INET
                      : target.family == AddressFamily::IPv6 ? AF_INET6
                                                             : AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int status =
        ::getaddrinfo(target.host.c_str(), std::to_string(target.port).c_str(), &hints, &found);
    if (status != 0) {
        result.detail =
            fmt::format("{} does not resolve here: {}", target.host, ::gai_strerror(status));
        return result;
    }
    for (const addrinfo* candidate = found; candidate; candidate = candidate->ai_next) {
        const auto started = std::chrono::steady_clock::now();
        const std::string problem = tryConnect(*candidate, timeout);
        const std::string address = addressOf(candidate->ai_addr);
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
    ::freeaddrinfo(found);
    if (!result.reached) result.detail = "from this machine " + result.detail;
    return result;
}

}  // namespace rossoctl::verify
