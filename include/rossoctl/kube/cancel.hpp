#pragma once
// Ctrl-C: set from a signal handler, read by long waits and transfers so they end cleanly.
#include <atomic>

namespace rossoctl::kube {

class CancelFlag {
  public:
    void cancel() { cancelled_.store(true); }
    bool cancelled() const { return cancelled_.load(); }

  private:
    std::atomic<bool> cancelled_{false};
};

}  // namespace rossoctl::kube
