#include "rossoctl/app/piped_stdin.hpp"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rossoctl::app {

bool stdinHasPipedBytes(int descriptor) {
    if (descriptor < 0) return false;
    struct stat info {};
    if (::fstat(descriptor, &info) != 0) return false;
    if (S_ISREG(info.st_mode)) {
        const off_t at = ::lseek(descriptor, 0, SEEK_CUR);
        return at >= 0 && info.st_size > at;
    }
    if (!S_ISFIFO(info.st_mode) && !S_ISSOCK(info.st_mode)) return false;
    // A pipe whose writer closed it empty polls POLLHUP alone; one with bytes, POLLIN.
    pollfd waiting{descriptor, POLLIN, 0};
    return ::poll(&waiting, 1, 0) == 1 && (waiting.revents & POLLIN) != 0;
}

}  // namespace rossoctl::app
