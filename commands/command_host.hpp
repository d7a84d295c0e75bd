#pragma once
// The host every command registers with, apart from CLI11: the unit tests' TestHost derives
// from it without parsing CLI11's headers in every test file (issue 32; scripts/check-headers).
#include <string>
#include <utility>
#include <vector>

#include "rossoctl/app/context.hpp"

namespace CLI {
class App;
}

namespace rossoctl::commands {

// main implements it: the Context exists only once global flags are parsed.
class CommandHost {
  public:
    virtual ~CommandHost() = default;
    virtual app::Context& context() = 0;
    virtual CLI::App& root() = 0;
    void setExitCode(int code) { exitCode_ = code; }
    int exitCode() const { return exitCode_; }
    // The words after "rossoctl" as typed (set before parsing): what the parser does not keep,
    // such as whether "--" was given.
    void setArguments(std::vector<std::string> arguments) { arguments_ = std::move(arguments); }
    const std::vector<std::string>& arguments() const { return arguments_; }

  private:
    int exitCode_ = 0;
    std::vector<std::string> arguments_;
};

}  // namespace rossoctl::commands
