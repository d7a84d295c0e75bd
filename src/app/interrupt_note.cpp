#include "rossoctl/app/interrupt_note.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rossoctl::app {

void InterruptNote::set(std::string_view line) {
    const int next = active_.load() == 0 ? 1 : 0;
    const size_t length = std::min(line.size(), kCapacity - 1);
    std::memcpy(lines_[next].data(), line.data(), length);
    lines_[next][length] = '\n';
    lengths_[next].store(length + 1);
    active_.store(next);
}

std::string InterruptNote::text() const {
    const int shown = active_.load();
    if (shown < 0) return {};
    return std::string(lines_[shown].data(), lengths_[shown].load());
}

void InterruptNote::writeTo(int fd, std::string_view fallback) const {
    const int shown = active_.load();
    const char* data = shown < 0 ? fallback.data() : lines_[shown].data();
    size_t left = shown < 0 ? fallback.size() : lengths_[shown].load();
    while (left > 0) {
        const ssize_t wrote = ::write(fd, data, left);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) return;
        data += wrote;
        left -= static_cast<size_t>(wrote);
    }
}

}  // namespace rossoctl::app
