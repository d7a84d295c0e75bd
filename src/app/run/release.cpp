#include "rossoctl/app/run/release.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "rossoctl/app/run/warm_pool.hpp"
#include "rossoctl/kube/wait.hpp"

namespace rossoctl::app::run {

namespace {

// As the run's own cleanup: a short restart of the API server does not leave the claim.
constexpr std::chrono::milliseconds kReleaseGrace{30'000};

}  // namespace

bool releaseClaimAfterExit(const ClientFactory& cleanupClient, const Clock& clock,
                           const std::string& ns, const std::string& claim) {
    const pid_t child = ::fork();
    if (child != 0) return child > 0;
    // The child: no terminal (Ctrl-C and a hang-up of the shell are not for it; SIGINT and
    // SIGTERM stay blocked as main blocked them), and none of the caller's pipes held open.
    ::setsid();
    const int devNull = ::open("/dev/null", O_RDWR);
    if (devNull >= 0)
        for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) ::dup2(devNull, fd);
    int status = 0;
    try {
        auto client = cleanupClient();
        kube::rideOutOutage(clock, kReleaseGrace, nullptr,
                            [&] { releaseClaim(*client, ns, claim); });
    } catch (...) {
        status = 1;  // nobody to tell: the claim's shutdownTime removes it
    }
    // _exit: no atexit handlers, no second flush of the buffers the parent already wrote.
    ::_exit(status);
}

}  // namespace rossoctl::app::run
