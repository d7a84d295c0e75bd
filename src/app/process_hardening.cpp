#include "rossoctl/app/process_hardening.hpp"

#include <sys/prctl.h>
#include <sys/resource.h>

namespace rossoctl::app {

void disableCoreDumps() {
    const rlimit none{0, 0};
    ::setrlimit(RLIMIT_CORE, &none);
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

}  // namespace rossoctl::app
