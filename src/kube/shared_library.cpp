#include "shared_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include "rossoctl/errors.hpp"

namespace rossoctl::kube {

SharedLibrary::SharedLibrary(const char* soname, const char* package)
    : handle_(dlopen(soname, RTLD_NOW | RTLD_LOCAL)), soname_(soname), package_(package) {
    if (!handle_)
        throw Error(fmt::format("cannot load {} ({}); install the {} package", soname_, dlerror(),
                                package_));
}

void* SharedLibrary::address(const char* name) const {
    void* found = dlsym(handle_, name);
    if (!found)
        throw Error(
            fmt::format("{} has no {}; install a newer {} package", soname_, name, package_));
    return found;
}

}  // namespace rossoctl::kube
