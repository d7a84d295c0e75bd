#include "rossoctl/app/sandbox_pod.hpp"

#include <catch2/catch.hpp>

using namespace rossoctl;
using nlohmann::json;

TEST_CASE("exit 137 is explained from the pod's status when it tells", "[exec][fault]") {
    CHECK(app::whyContainerKilled(std::nullopt, "main") == "the pod was deleted");
    json deleting = {{"metadata", {{"deletionTimestamp", "2026-01-01T00:00:00Z"}}}};
    CHECK(app::whyContainerKilled(deleting, "main") == "the pod is being deleted");
    json oom = {{"metadata", json::object()},
                {"status",
                 {{"containerStatuses",
                   json::array({{{"name", "main"},
                                 {"lastState", {{"terminated", {{"reason", "OOMKilled"}}}}}}})}}}};
    CHECK(app::whyContainerKilled(oom, "main").find("OOMKilled") != std::string::npos);
    CHECK(app::whyContainerKilled(oom, "other").empty());
    json lost = {
        {"metadata", json::object()},
        {"status", {{"conditions", json::array({{{"type", "Ready"}, {"status", "Unknown"}}})}}}};
    CHECK(app::whyContainerKilled(lost, "main").find("node lost") != std::string::npos);
    json healthy = {{"metadata", json::object()}, {"status", {{"phase", "Running"}}}};
    CHECK(app::whyContainerKilled(healthy, "main").empty());
}
