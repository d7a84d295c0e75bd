#pragma once
// The worker pool of the commands that act on many sandboxes at once (restart, verify).
#include <cstddef>
#include <functional>

namespace rossoctl::app {

// Calls work(index, worker) once for each index in [0, count), on at most maxWorkers threads
// (the calling one is worker 0); returns when all are done. `work` must not throw.
void forEachInParallel(size_t count, size_t maxWorkers,
                       const std::function<void(size_t index, size_t worker)>& work);

}  // namespace rossoctl::app
