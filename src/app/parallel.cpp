#include "rossoctl/app/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace rossoctl::app {

void forEachInParallel(size_t count, size_t maxWorkers,
                       const std::function<void(size_t index, size_t worker)>& work) {
    std::atomic<size_t> next{0};
    auto worker = [&](size_t id) {
        for (size_t index; (index = next++) < count;) work(index, id);
    };
    const size_t workers = std::max<size_t>(1, std::min(maxWorkers, count));
    std::vector<std::thread> threads;
    for (size_t id = 1; id < workers; ++id) threads.emplace_back(worker, id);
    worker(0);
    for (auto& thread : threads) thread.join();
}

}  // namespace rossoctl::app
