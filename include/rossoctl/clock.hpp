#pragma once
// Time as the tool sees it: injected so tests can run without sleeping.
#include <chrono>

namespace rossoctl {

class Clock {
  public:
    virtual ~Clock() = default;
    virtual std::chrono::system_clock::time_point now() const = 0;
    virtual std::chrono::steady_clock::time_point monotonic() const = 0;
    virtual void sleepFor(std::chrono::milliseconds duration) const = 0;
};

class SystemClock : public Clock {
  public:
    std::chrono::system_clock::time_point now() const override;
    std::chrono::steady_clock::time_point monotonic() const override;
    void sleepFor(std::chrono::milliseconds duration) const override;
};

}  // namespace rossoctl
