#include "rossoctl/clock.hpp"

#include <thread>

namespace rossoctl {

std::chrono::system_clock::time_point SystemClock::now() const {
    return std::chrono::system_clock::now();
}

std::chrono::steady_clock::time_point SystemClock::monotonic() const {
    return std::chrono::steady_clock::now();
}

void SystemClock::sleepFor(std::chrono::milliseconds duration) const {
    std::this_thread::sleep_for(duration);
}

}  // namespace rossoctl
