#pragma once
// The error kinds every layer throws; the command runner maps each to its exit code.
#include <stdexcept>
#include <string>
#include <string_view>

namespace rossoctl {

// Exit codes of DESIGN.md section 2.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitBoundaryNotProven = 3;
inline constexpr int kExitCancelled = 130;  // Ctrl-C (128 + SIGINT), as shells report it

// A failure with a one-line message for stderr; exit code 1 unless a subclass says otherwise.
class Error : public std::runtime_error {
  public:
    explicit Error(const std::string& message, int exitCode = kExitError)
        : std::runtime_error(message), exitCode_(exitCode) {}
    int exitCode() const { return exitCode_; }

  private:
    int exitCode_;
};

// Bad input found before any request was sent (exit 2).
class UsageError : public Error {
  public:
    explicit UsageError(const std::string& message) : Error(message, kExitUsage) {}
};

// A kubeconfig or credential that cannot be read or makes no sense.
class ConfigError : public Error {
  public:
    using Error::Error;
};

// nlohmann's words for a field of another type than expected, without its "[json.exception.*] "
// tag: what a user is shown of a server's malformed object.
inline std::string_view withoutJsonTag(std::string_view what) {
    if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string_view::npos)
        what.remove_prefix(what.find("] ") + 2);
    return what;
}

}  // namespace rossoctl
