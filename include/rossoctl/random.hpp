#pragma once
// Randomness behind an interface, as Clock is for time: pod names, canaries, WebSocket keys and
// retry jitter come from here, so a test can fix them.
#include <cstdint>
#include <mutex>
#include <random>

namespace rossoctl {

class Random {
  public:
    virtual ~Random() = default;
    // Uniformly distributed over the whole range.
    virtual uint32_t next() = 0;
};

// The operating system's entropy; the only user of std::random_device.
class SystemRandom : public Random {
  public:
    uint32_t next() override {
        std::lock_guard lock(mutex_);  // one source shared by threads
        return device_();
    }

  private:
    std::mutex mutex_;
    std::random_device device_;
};

}  // namespace rossoctl
