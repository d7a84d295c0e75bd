#pragma once
// A shared library opened on first use (dlopen) instead of at start-up: libcurl and libcrypto
// bring ~30 shared objects whose loading was most of the start-up of commands that never use
// them (version, completion, help, every usage error).
#include <string>

namespace rossoctl::kube {

class SharedLibrary {
  public:
    // soname as the package installs it ("libcurl.so.4"); throws Error naming the package.
    SharedLibrary(const char* soname, const char* package);
    SharedLibrary(const SharedLibrary&) = delete;
    SharedLibrary& operator=(const SharedLibrary&) = delete;

    // The function `name` as type Function (its declaration's decltype); throws when absent.
    template <typename Function>
    Function function(const char* name) const {
        return reinterpret_cast<Function>(address(name));
    }

  private:
    void* address(const char* name) const;

    void* handle_;
    std::string soname_;
    std::string package_;
};

}  // namespace rossoctl::kube
