#include "rossoctl/app/warm_pool.hpp"

#include <fmt/format.h>

#include "rossoctl/app/agents.hpp"

namespace rossoctl::app {

bool PoolFilter::keep(const nlohmann::json& sandbox) {
    if (include || !isWarmPoolSpare(sandbox)) return true;
    ++hidden;
    return false;
}

void PoolFilter::note(std::ostream& err, const std::string& left, const std::string& verb) const {
    if (hidden == 0) return;
    err << fmt::format(
        "{} warm-pool sandbox{} not {} (spares a SandboxWarmPool keeps for sandbox run --pool); "
        "add --include-pool to {} {}\n",
        hidden, hidden == 1 ? "" : "es", left, verb, hidden == 1 ? "it" : "them");
}

}  // namespace rossoctl::app
