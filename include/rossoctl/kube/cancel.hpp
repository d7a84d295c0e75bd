#pragma once
// Ctrl-C: set from a signal handler, read by long waits and transfers so they end cleanly.
#include <atomic>

namespace rossoctl::kube {

class CancelFlag {
  public:
    CancelFlag() = default;
    // Cancelled also when `parent` is: Ctrl-C ends what a command stops on its own too.
    explicit CancelFlag(const CancelFlag* parent) : parent_(parent) {}
    void cancel() { cancelled_.store(true); }
    bool cancelled() const { return cancelled_.load() || (parent_ && parent_->cancelled()); }

  private:
    std::atomic<bool> cancelled_{false};
    const CancelFlag* parent_ = nullptr;
};

}  // namespace rossoctl::kube
