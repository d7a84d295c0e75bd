// sandbox list -w keeps its columns (issue 34 point 11), and a warm pool's spare sandboxes are
// shown apart from the project's own in sandbox list and project describe.
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

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";

// A spare of SandboxWarmPool `pool`.
json spareOf(const std::string& pool, const std::string& name) {
    json sandbox = sandboxWithReason(name);
    sandbox["metadata"]["ownerReferences"] = {{{"kind", "SandboxWarmPool"},
                                               {"name", pool},
                                               {"uid", "uid-" + pool},
                                               {"controller", true}}};
    return sandbox;
}

}  // namespace

TEST_CASE("sandbox list -w: the list and each change line up under the first page's columns",
          "[sandbox][command][watch]") {
    TestHost host;
    host.serveSandboxGroup();
    // The first page sets the widths: a long name, a long reason; the changes are narrower.
    host.server.onJson("GET", kSandboxes, 200,
                       list({sandboxWithReason("billing-agent-1"),
                             sandboxWithReason("orders", "5", "PodNotReady")}));
    host.server.onJson("GET", kPods, 200, list({}));
    host.server.onStream("GET", kSandboxes + "?watch=true",
                         {watchEvent("MODIFIED", sandboxWithReason("orders", "11")),
                          watchEvent("ADDED", sandboxWithReason("ab", "12"))});
    host.server.onStream("GET", kSandboxes + "?watch=true", {});
    cancelOnSecondWatch(host, kSandboxes);
    CHECK(host.run({"sandbox", "list", "-w"}) == 130);
    const auto lines = linesOf(host.out.str());
    INFO(host.out.str());
    REQUIRE(lines.size() == 5);  // header, two listed, two changes
    CHECK(lines[3].rfind("orders ", 0) == 0);
    CHECK(lines[3].find("PodNotReady") == std::string::npos);  // Ready again
    CHECK(lines[4].rfind("ab ", 0) == 0);
    checkAligned(lines);
}

TEST_CASE("sandbox list -w: a suspend's longer words still line up (issue 34 walkthrough)",
          "[sandbox][command][watch][walkthrough34]") {
    TestHost host;
    host.serveSandboxGroup();
    // The first page is a running sandbox: STATUS Running, REASON DependenciesReady. Suspending
    // it brings Suspended and DependenciesNotReady, longer than either.
    host.server.onJson("GET", kSandboxes, 200,
                       list({sandboxWithReason("orders", "5", "DependenciesReady")}));
    host.server.onJson("GET", kPods, 200, list({}));
    json suspended = sandboxWithReason("orders", "11", "DependenciesNotReady");
    suspended["spec"]["operatingMode"] = "Suspended";
    host.server.onStream(
        "GET", kSandboxes + "?watch=true",
        {watchEvent("MODIFIED", suspended),
         watchEvent("MODIFIED", sandboxWithReason("orders", "12", "DependenciesReady"))});
    host.server.onStream("GET", kSandboxes + "?watch=true", {});
    cancelOnSecondWatch(host, kSandboxes);
    CHECK(host.run({"sandbox", "list", "-w"}) == 130);
    const auto lines = linesOf(host.out.str());
    INFO(host.out.str());
    REQUIRE(lines.size() == 4);  // header, the listed one, two changes
    CHECK(lines[2].find("Suspended") != std::string::npos);
    CHECK(lines[2].find("DependenciesNotReady") != std::string::npos);
    checkAligned(lines);
    // A plain list is as narrow as its rows.
    TestHost plain;
    plain.serveSandboxGroup();
    plain.server.onJson("GET", kSandboxes, 200, list({sandboxWithReason("orders", "5", "Ready")}));
    plain.server.onJson("GET", kPods, 200, list({}));
    REQUIRE(plain.run({"sandbox", "list"}) == 0);
    CHECK(linesOf(plain.out.str()).front().rfind("NAME     READY   STATUS    REASON   POD", 0) ==
          0);
}

TEST_CASE("sandbox list leaves a warm pool's spares out unless --include-pool, and says so",
          "[sandbox][command][warm-pool]") {
    const auto serve = [](TestHost& host) {
        host.serveSandboxGroup();
        json claimed = sandboxWithReason("rossoctl-run-7");
        claimed["metadata"]["ownerReferences"] = {
            {{"kind", "SandboxClaim"}, {"name", "rossoctl-run-7"}, {"controller", true}}};
        host.server.onJson("GET", kSandboxes, 200,
                           list({sandboxWithReason("orders"), spareOf("py", "py-a1"),
                                 spareOf("py", "py-b2"), claimed}));
        host.server.onJson("GET", kPods, 200, list({}));
    };
    TestHost plain;
    serve(plain);
    REQUIRE(plain.run({"sandbox", "list"}) == 0);
    const auto rows = linesOf(plain.out.str());
    REQUIRE(rows.size() == 3);  // header, orders, the claimed run's sandbox
    CHECK(plain.out.str().find("py-a1") == std::string::npos);
    CHECK(plain.out.str().find("rossoctl-run-7") != std::string::npos);
    CHECK(plain.err.str() ==
          "2 warm-pool sandboxes not shown (spares a SandboxWarmPool keeps for sandbox run "
          "--pool); add --include-pool to list them\n");

    TestHost named;  // every format: a script sees the same sandboxes as the table
    serve(named);
    REQUIRE(named.run({"sandbox", "list", "-o", "name"}) == 0);
    CHECK(named.out.str() ==
          "sandbox.agents.x-k8s.io/orders\nsandbox.agents.x-k8s.io/rossoctl-run-7\n");

    TestHost all;
    serve(all);
    REQUIRE(all.run({"sandbox", "list", "--include-pool"}) == 0);
    const auto lines = linesOf(all.out.str());
    REQUIRE(lines.size() == 5);
    CHECK(lines[0].find("OWNER") != std::string::npos);  // whose spare each one is
    CHECK(all.out.str().find("SandboxWarmPool/py") != std::string::npos);
    CHECK(all.err.str().empty());
}

TEST_CASE("project describe shows a warm pool's spares apart from the project's sandboxes",
          "[project][command][warm-pool]") {
    const auto serve = [](TestHost& host) {
        host.serveSandboxGroup();
        host.server.onJson("GET", "/api/v1/namespaces/team1", 200,
                           {{"metadata",
                             {{"name", "team1"},
                              {"creationTimestamp", "2023-11-14T22:00:00Z"},
                              {"labels", {{"rossoctl.dev/sandbox-project", "true"}}}}},
                            {"status", {{"phase", "Active"}}}});
        for (const char* empty :
             {"/api/v1/namespaces/team1/resourcequotas", "/api/v1/namespaces/team1/limitranges",
              "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies"})
            host.server.onJson("GET", empty, 200, list({}));
        host.server.onJson("GET", kPods, 200, list({}));
        host.server.onJson(
            "GET", kSandboxes, 200,
            list({sandboxWithReason("orders"), spareOf("py", "py-a1"), spareOf("py", "py-b2")}));
    };
    TestHost host;
    serve(host);
    REQUIRE(host.run({"project", "describe", "team1"}) == 0);
    const std::string out = host.out.str();
    INFO(out);
    const auto sandboxes = out.find("\nSandboxes:\n");
    const auto pools = out.find("\nWarm pools");
    REQUIRE(sandboxes != std::string::npos);
    REQUIRE(pools != std::string::npos);
    CHECK(out.find("orders", sandboxes) < pools);
    CHECK(out.find("py-a1") == std::string::npos);  // counted, not listed one by one
    CHECK(out.find("  SandboxWarmPool/py: 2 spare sandboxes, 2 ready\n") != std::string::npos);
    CHECK(out.find("rossoctl sandbox list -n team1 --include-pool") != std::string::npos);

    TestHost asJson;
    serve(asJson);
    REQUIRE(asJson.run({"project", "describe", "team1", "-o", "json"}) == 0);
    const auto described = testing::printedJson(asJson.out.str());
    CHECK(described["sandboxes"].size() == 1);
    CHECK(described["warmPoolSandboxes"].size() == 2);
}

TEST_CASE("sandbox list -w reads a changed sandbox's pod again: Suspended, <none>",
          "[sandbox][command][watch][walkthrough49]") {
    // The third walkthrough: after a suspend -w still said Suspending with the old pod's name
    // (the pods were read once, before the watch), where sandbox list said Suspended, <none>.
    json running = sandboxWithReason("orders", "5", "DependenciesReady");
    running["status"]["selector"] = "agents.x-k8s.io/sandbox-name-hash=abc";
    json suspended = running;
    suspended["metadata"]["resourceVersion"] = "11";
    suspended["spec"]["operatingMode"] = "Suspended";
    const json pod = {{"metadata",
                       {{"name", "orders"},
                        {"uid", "pod-1"},
                        {"creationTimestamp", "2023-11-14T22:00:05Z"},
                        {"labels", {{"agents.x-k8s.io/sandbox-name-hash", "abc"}}},
                        {"ownerReferences",
                         {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}}},
                      {"status", {{"phase", "Running"}}}};
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes, 200, list({running}));
    host.server.onJson("GET", kPods, 200, list({pod}));
    host.server.onJson("GET", kPods, 200, list({}));  // the next read: the suspend took it
    host.server.onStream("GET", kSandboxes + "?watch=true", {watchEvent("MODIFIED", suspended)});
    host.server.onStream("GET", kSandboxes + "?watch=true", {});
    cancelOnSecondWatch(host, kSandboxes);
    CHECK(host.run({"sandbox", "list", "-w"}) == 130);
    const auto lines = linesOf(host.out.str());
    INFO(host.out.str());
    REQUIRE(lines.size() == 3);
    CHECK(lines[1].find(" orders ") != std::string::npos);  // the listed row has its pod
    CHECK(lines[2].find("Suspended ") != std::string::npos);
    CHECK(lines[2].find("<none>") != std::string::npos);
}

TEST_CASE("sandbox top and verify --all leave a warm pool's spares out, as sandbox list does",
          "[sandbox][pool][top][verify]") {
    auto serve = [](TestHost& host) {
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes, 200,
                           list({sandboxWithReason("orders"), spareOf("py", "py-52c5b")}));
        host.server.onJson("GET", kPods, 200, list({}));
    };
    TestHost top;
    serve(top);
    REQUIRE(top.run({"sandbox", "top"}) == 0);
    INFO(top.out.str() << top.err.str());
    CHECK(top.out.str().find("orders") != std::string::npos);
    CHECK(top.out.str().find("py-52c5b") == std::string::npos);
    CHECK(top.err.str() ==
          "1 warm-pool sandbox not shown (spares a SandboxWarmPool keeps for sandbox run --pool); "
          "add --include-pool to show it\n");

    TestHost topAll;
    serve(topAll);
    REQUIRE(topAll.run({"sandbox", "top", "--include-pool", "-o", "json"}) == 0);
    CHECK(testing::printedJson(topAll.out.str())["items"].size() == 2);
    CHECK(topAll.err.str().empty());

    // verify --all: the spare is verified too (attack 55 P1: a sandbox a namespace editor
    // hands to a pool must not leave the gate)
    TestHost verify;
    serve(verify);
    CHECK(verify.run({"sandbox", "verify", "--all", "-o", "json"}) == kExitError);
    const json reports = testing::printedJson(verify.out.str());
    REQUIRE(reports["items"].size() == 2);
    CHECK(verify.err.str().find("not verified") == std::string::npos);

    testing::checkUsageErrors({{"sandbox", "verify", "orders", "--include-pool"}});
}

TEST_CASE("project describe: POD is the pod there is, and -o yaml hides managedFields",
          "[project][command][describe]") {
    const auto serve = [](TestHost& host) {
        host.serveSandboxGroup();
        const json managed = {{{"manager", "rossoctl"}, {"operation", "Apply"}}};
        host.server.onJson("GET", "/api/v1/namespaces/team1", 200,
                           {{"metadata",
                             {{"name", "team1"},
                              {"creationTimestamp", "2023-11-14T22:00:00Z"},
                              {"managedFields", managed}}},
                            {"status", {{"phase", "Active"}}}});
        host.server.onJson(
            "GET", "/api/v1/namespaces/team1/resourcequotas", 200,
            list({{{"metadata", {{"name", "sandbox-quota"}, {"managedFields", managed}}},
                   {"spec", {{"hard", {{"pods", "1"}}}}}}}));
        for (const char* empty : {"/api/v1/namespaces/team1/limitranges",
                                  "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies"})
            host.server.onJson("GET", empty, 200, list({}));
        // q1's pod was refused by the quota: the Sandbox names none that exists.
        json orders = sandboxWithReason("orders");
        orders["metadata"]["managedFields"] = managed;
        host.server.onJson("GET", kSandboxes, 200,
                           list({orders, sandboxWithReason("q1", "6", "ReconcilerError")}));
        host.server.onJson(
            "GET", kPods, 200,
            list({{{"metadata",
                    {{"name", "orders"},
                     {"namespace", "team1"},
                     {"uid", "pod-orders"},
                     {"ownerReferences",
                      {{{"kind", "Sandbox"}, {"uid", "uid-orders"}, {"controller", true}}}}}},
                   {"status", {{"phase", "Running"}}}}}));
    };
    TestHost host;
    serve(host);
    REQUIRE(host.run({"project", "describe", "team1"}) == 0);
    const std::string out = host.out.str();
    INFO(out);
    std::istringstream lines(out.substr(out.find("\nSandboxes:\n")));
    std::string line, ordersLine, q1Line;
    while (std::getline(lines, line)) {
        if (line.rfind("  orders ", 0) == 0) ordersLine = line;
        if (line.rfind("  q1 ", 0) == 0) q1Line = line;
    }
    CHECK(ordersLine.find(" orders ") != std::string::npos);  // NAME and POD
    CHECK(q1Line.find("<none>") != std::string::npos);
    CHECK(q1Line.find("q1", 3) == std::string::npos);  // named once: NAME, not POD

    TestHost yaml;
    serve(yaml);
    REQUIRE(yaml.run({"project", "describe", "team1", "-o", "yaml"}) == 0);
    CHECK(yaml.out.str().find("managedFields") == std::string::npos);
    TestHost asJson;
    serve(asJson);
    REQUIRE(asJson.run({"project", "describe", "team1", "-o", "json"}) == 0);
    CHECK(asJson.out.str().find("managedFields") == std::string::npos);
    const json described = testing::printedJson(asJson.out.str());
    CHECK(described["sandboxPods"]["orders"] == "orders");
    CHECK(described["sandboxPods"]["q1"] == nullptr);
    CHECK(asJson.server.writes().empty());
}
