#include "rossoctl/kube/descriptor_read.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rossoctl/errors.hpp"

namespace rossoctl::kube {

size_t readWhenReady(int descriptor, char* out, size_t size, std::chrono::milliseconds slice,
                     const std::function<bool()>& stop) {
    while (!stop()) {
        pollfd ready{descriptor, POLLIN, 0};
        const int polled = ::poll(&ready, 1, static_cast<int>(slice.count()));
        if (polled < 0 && errno != EINTR)
            throw Error(fmt::format("cannot read stdin: {}", std::strerror(errno)));
        if (polled <= 0) continue;
        const ssize_t n = ::read(descriptor, out, size);
        if (n >= 0) return static_cast<size_t>(n);
        if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            throw Error(fmt::format("cannot read stdin: {}", std::strerror(errno)));
    }
    return 0;
}

}  // namespace rossoctl::kube
