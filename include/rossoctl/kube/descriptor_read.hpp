#pragma once
// Reading a local descriptor (stdin, a pipe) without blocking past what the caller allows: exec's
// stdin pump and cp's stdin staging both need a read that a flag, Ctrl-C or a deadline can end.
#include <chrono>
#include <cstddef>
#include <functional>

namespace rossoctl::kube {

// What the descriptor has now, waiting in slices of `slice`; 0 at its end, or once `stop()`
// returns true while it is quiet (`stop` may also throw to end the wait). EINTR and EAGAIN (a
// pipe left non-blocking) are "not yet". Throws Error when poll or read fails.
size_t readWhenReady(int descriptor, char* out, size_t size, std::chrono::milliseconds slice,
                     const std::function<bool()>& stop);

}  // namespace rossoctl::kube
