// A crash must not write the bearer token to a core file.
#include "rossoctl/app/process_hardening.hpp"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

TEST_CASE("core dumps are off and the process is not dumpable", "[process]") {
    // In a child: the test runner itself keeps its settings.
    const pid_t child = ::fork();
    if (child == 0) {
        rossoctl::app::disableCoreDumps();
        rlimit core{};
        ::getrlimit(RLIMIT_CORE, &core);
        const bool off =
            core.rlim_cur == 0 && core.rlim_max == 0 && ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0;
        ::_exit(off ? 0 : 1);
    }
    int status = -1;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
