// list -w keeps its columns wherever it prints a table (issue 34 point 11): project list -w and
// -o custom-columns under -w line up under the widths the first rows set, as kubectl get -w
// keeps its first page's, instead of each change being a table of its own.
#include <catch2/catch.hpp>
#include <sstream>

#include "json_fixtures.hpp"
#include "table_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::cancelOnSecondWatch;
using rossoctl::testing::checkAligned;
using rossoctl::testing::linesOf;
using rossoctl::testing::list;
using rossoctl::testing::sandboxWithReason;
using rossoctl::testing::TestHost;
using rossoctl::testing::watchEvent;

namespace {

const std::string kNamespaces = "/api/v1/namespaces";
const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";

json project(const std::string& name, const std::string& version,
             const std::string& phase = "Active") {
    return {{"apiVersion", "v1"},
            {"kind", "Namespace"},
            {"metadata",
             {{"name", name},
              {"resourceVersion", version},
              {"creationTimestamp", "2023-11-14T22:00:00Z"},
              {"labels",
               {{"rossoctl.dev/sandbox-project", "true"},
                {"app.kubernetes.io/managed-by", "rossoctl"}}}}},
            {"status", {{"phase", phase}}}};
}

// The list sets the widths with a long name and a long phase; the changes that follow are
// narrower (a wider cell would move the rest of its own row, as kubectl's does).
void serveProjects(TestHost& host) {
    host.server.onJson(
        "GET", kNamespaces, 200,
        list({project("payments-team-sandbox", "7", "Terminating"), project("t1", "8")}));
    host.server.onStream("GET", kNamespaces + "?watch=true",
                         {watchEvent("ADDED", project("team2", "11")),
                          watchEvent("MODIFIED", project("t1", "12", "Terminating"))});
    host.server.onStream("GET", kNamespaces + "?watch=true", {});
    cancelOnSecondWatch(host, kNamespaces);
}

}  // namespace

TEST_CASE("project list -w: the list and each change line up under the first page's columns",
          "[project][command][watch]") {
    TestHost host;
    serveProjects(host);
    CHECK(host.run({"project", "list", "-w"}) == 130);
    const auto lines = linesOf(host.out.str());
    INFO(host.out.str());
    REQUIRE(lines.size() == 5);  // header, two listed, two changes
    CHECK(lines[3].rfind("team2 ", 0) == 0);
    CHECK(lines[4].find("Terminating") != std::string::npos);
    checkAligned(lines);

    TestHost bare;  // --no-headers: the listed rows still set the widths
    serveProjects(bare);
    CHECK(bare.run({"project", "list", "-w", "--no-headers"}) == 130);
    const auto rows = linesOf(bare.out.str());
    REQUIRE(rows.size() == 4);
    CHECK(rows[2].find("Active") == rows[1].find("Active"));
}

TEST_CASE("list -w -o custom-columns: every change lines up under the listed rows",
          "[sandbox][project][command][watch]") {
    TestHost projects;
    serveProjects(projects);
    CHECK(projects.run({"project", "list", "-w", "-o",
                        "custom-columns=NAME:.metadata.name,PHASE:.status.phase"}) == 130);
    auto lines = linesOf(projects.out.str());
    INFO(projects.out.str());
    REQUIRE(lines.size() == 5);
    CHECK(lines[0].rfind("NAME ", 0) == 0);
    checkAligned(lines);

    TestHost sandboxes;
    sandboxes.serveSandboxGroup();
    sandboxes.server.onJson("GET", kSandboxes, 200,
                            list({sandboxWithReason("billing-agent-1", "5"),
                                  sandboxWithReason("orders", "6", "PodNotReady")}));
    sandboxes.server.onJson("GET", kPods, 200, list({}));
    sandboxes.server.onStream("GET", kSandboxes + "?watch=true",
                              {watchEvent("MODIFIED", sandboxWithReason("orders", "11")),
                               watchEvent("ADDED", sandboxWithReason("ab", "12"))});
    sandboxes.server.onStream("GET", kSandboxes + "?watch=true", {});
    cancelOnSecondWatch(sandboxes, kSandboxes);
    CHECK(sandboxes.run({"sandbox", "list", "-w", "-o",
                         "custom-columns=NAME:metadata.name,REASON:status.conditions[0].reason,"
                         "RV:metadata.resourceVersion"}) == 130);
    lines = linesOf(sandboxes.out.str());
    INFO(sandboxes.out.str());
    REQUIRE(lines.size() == 5);  // one header only
    CHECK(lines[3].rfind("orders ", 0) == 0);
    CHECK(lines[4].rfind("ab ", 0) == 0);
    checkAligned(lines);
}

TEST_CASE("list -w keeps room for READY Unknown and a project's Terminating",
          "[sandbox][project][command][watch]") {
    // A new sandbox's first rows: its Ready condition is not written yet (READY Unknown) while
    // the listed sandboxes were all True.
    TestHost sandboxes;
    sandboxes.serveSandboxGroup();
    sandboxes.server.onJson("GET", kSandboxes, 200, list({sandboxWithReason("orders", "5")}));
    sandboxes.server.onJson("GET", kPods, 200, list({}));
    json fresh = sandboxWithReason("fresh", "12");
    fresh.erase("status");
    sandboxes.server.onStream("GET", kSandboxes + "?watch=true", {watchEvent("ADDED", fresh)});
    sandboxes.server.onStream("GET", kSandboxes + "?watch=true", {});
    cancelOnSecondWatch(sandboxes, kSandboxes);
    CHECK(sandboxes.run({"sandbox", "list", "-w"}) == 130);
    auto lines = linesOf(sandboxes.out.str());
    INFO(sandboxes.out.str());
    REQUIRE(lines.size() == 3);
    CHECK(lines[2].find("Unknown") != std::string::npos);
    checkAligned(lines);

    // Every project listed is Active; then one is deleted.
    TestHost projects;
    projects.server.onJson("GET", kNamespaces, 200, list({project("t1", "7"), project("t2", "8")}));
    projects.server.onStream("GET", kNamespaces + "?watch=true",
                             {watchEvent("MODIFIED", project("t1", "12", "Terminating"))});
    projects.server.onStream("GET", kNamespaces + "?watch=true", {});
    cancelOnSecondWatch(projects, kNamespaces);
    CHECK(projects.run({"project", "list", "-w"}) == 130);
    lines = linesOf(projects.out.str());
    INFO(projects.out.str());
    REQUIRE(lines.size() == 4);
    CHECK(lines[3].find("Terminating") != std::string::npos);
    checkAligned(lines);
}
