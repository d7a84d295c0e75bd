#pragma once
// What the files of `sandbox run` share: its options, and the helpers sandbox_run.cpp calls to
// read the local input (sandbox_run_input.cpp), choose a pool (sandbox_run_pool.cpp) and print
// the outcome (sandbox_run_print.cpp).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rossoctl/app/context.hpp"
#include "rossoctl/app/run/named_pool.hpp"
#include "rossoctl/app/run/runner.hpp"

namespace rossoctl::commands {

// Calls `onExit` when the scope is left, by return or by exception.
class ScopeExit {
  public:
    explicit ScopeExit(std::function<void()> onExit) : onExit_(std::move(onExit)) {}
    ~ScopeExit() {
        try {
            onExit_();
        } catch (...) {  // an error is already on its way out; the claim's expiry is left
        }
    }
    ScopeExit(const ScopeExit&) = delete;
    ScopeExit& operator=(const ScopeExit&) = delete;

  private:
    std::function<void()> onExit_;
};

struct RunOptions {
    std::string image = app::run::kDefaultRunImage;
    std::vector<std::string> files;
    std::string workdir = "/workspace";
    std::vector<std::string> env;
    std::string timeout = "60s";
    std::string startTimeout = "2m";
    std::string cpu = "500m";
    std::string memory = "512Mi";
    std::string runtimeClass;
    std::string artifacts;
    bool keep = false;
    bool force = false;  // write into an --artifacts directory that already holds files
    bool stdinCode = false;
    std::optional<std::string> pool;  // --pool[=NAME]: "" takes any warm pod of the shape
    std::vector<std::string> typed;   // the line as typed ("--" is not kept by the parser)
    app::run::ShapeFlags given;       // the shape flags a named pool does not fill in
    std::string output;
    std::string report;
    std::string outputMaxBytes = "16Mi";
    std::string artifactsMaxBytes = "1Gi";
    std::string artifactsMaxFiles = "10000";
    std::string artifactsMaxFileBytes = "512Mi";
    std::vector<std::string> command;
};

// The local input, read before anything is sent (sandbox_run_input.cpp).
std::string uploadArchive(const std::vector<std::string>& files, int64_t mtime);
void validateReportPath(const std::string& path);

// Which pool --pool takes from (sandbox_run_pool.cpp).
void choosePool(app::Context& context, const RunOptions& options, app::run::RunRequest& request);
void refusePoolNameAsCommand(app::Context& context, const RunOptions& options,
                             const std::string& ns);

// How the run went: -o json, why it ended, the artifacts, --report and notes; true when a
// failed collection makes it rossoctl's failure (125).
bool printRunOutcome(app::Context& context, const RunOptions& options,
                     const app::run::RunRequest& request, const app::run::RunOutcome& outcome,
                     bool json, const app::run::CappedText& stdoutText,
                     const app::run::CappedText& stderrText,
                     const std::function<std::string(const std::string&)>& shown);

}  // namespace rossoctl::commands
