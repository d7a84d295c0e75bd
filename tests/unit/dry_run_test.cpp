// What --dry-run promises (issue 34 point 8): agents import --dry-run=client needs no namespace
// (nothing is sent to it), and set-env --dry-run says what it prints. And agents import's
// --command/--args (point 4), shown through its dry run.
#include <catch2/catch.hpp>

#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

TEST_CASE("agents import --dry-run=client into a namespace not created yet prints the objects",
          "[agents][dry-run]") {
    TestHost host;
    host.serveGroups();
    host.server.on("GET", "/api/v1/namespaces/nc-x", 404, testing::kNotFoundBody);
    const int code = host.run({"agents", "import", "--deployment-type", "sandbox", "from-image",
                               "--name", "orders", "--containerImage", "busybox:1.36", "--dry-run",
                               "-o", "json", "-n", "nc-x"});
    INFO(host.err.str());
    REQUIRE(code == 0);
    const json printed = testing::printedJson(host.out.str());
    REQUIRE(printed["items"].size() == 2);
    CHECK(printed["items"][0]["kind"] == "Sandbox");
    CHECK(printed["items"][0]["metadata"]["namespace"] == "nc-x");
    CHECK(host.err.str().find("namespace \"nc-x\" does not exist yet") != std::string::npos);
    CHECK(host.server.writes().empty());

    // A real import still needs the namespace, and says how to make it.
    TestHost real;
    real.serveGroups();
    real.server.on("GET", "/api/v1/namespaces/nc-x", 404, testing::kNotFoundBody);
    CHECK(real.run({"agents", "import", "--deployment-type", "sandbox", "from-image", "--name",
                    "orders", "--containerImage", "busybox:1.36", "-n", "nc-x"}) == kExitError);
    CHECK(real.err.str().find("rossoctl project create nc-x") != std::string::npos);
    CHECK(real.server.writes().empty());
}

TEST_CASE("set-env --dry-run says what it prints: the change, the Sandbox with -o",
          "[sandbox][dry-run]") {
    TestHost help;
    const std::string text = help.help({"sandbox", "set-env"});
    const auto at = text.find("--dry-run");
    REQUIRE(at != std::string::npos);
    const std::string line = text.substr(at, text.find("server:", at) - at);
    CHECK(line.find("with -o yaml|json: print the changed Sandbox") != std::string::npos);

    const std::string sandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
    const json sandbox = {
        {"apiVersion", "agents.x-k8s.io/v1beta1"},
        {"kind", "Sandbox"},
        {"metadata", {{"name", "orders"}, {"namespace", "team1"}, {"resourceVersion", "5"}}},
        {"spec",
         {{"podTemplate",
           {{"spec", {{"containers", {{{"name", "agent"}, {"image", "busybox"}}}}}}}}}}};
    for (const bool yaml : {false, true}) {
        TestHost host;
        host.serveSandboxGroup();
        host.server.onJson("GET", sandboxes + "/orders", 200, sandbox);
        std::vector<std::string> args = {"sandbox", "set-env", "orders", "A=1", "--dry-run"};
        if (yaml) args.insert(args.end(), {"-o", "yaml"});
        REQUIRE(host.run(args) == 0);
        CHECK(host.server.writes().empty());
        if (yaml)
            CHECK(host.out.str().find("kind: Sandbox") != std::string::npos);
        else
            CHECK(host.out.str().rfind("sandbox/orders env updated (dry run)", 0) == 0);
    }
}

TEST_CASE("agents import --command/--args set the container's command and arguments",
          "[agents][dry-run]") {
    TestHost host;
    host.serveGroups();
    host.server.on("GET", "/api/v1/namespaces/team1", 200, R"({"metadata":{"name":"team1"}})");
    REQUIRE(host.run({"agents", "import", "--deployment-type", "sandbox", "from-image", "--name",
                      "once", "--containerImage", "busybox:1.36", "--command", "sh", "--args=-c",
                      "--args", "sleep 3600", "--dry-run", "-o", "json"}) == 0);
    const json container = testing::printedJson(
        host.out.str())["items"][0]["spec"]["podTemplate"]["spec"]["containers"][0];
    CHECK(container["command"] == json::array({"sh"}));
    CHECK(container["args"] == json::array({"-c", "sleep 3600"}));
    CHECK(host.server.writes().empty());

    TestHost plain;  // without them the image's own entrypoint and command stay
    plain.serveGroups();
    plain.server.on("GET", "/api/v1/namespaces/team1", 200, R"({"metadata":{"name":"team1"}})");
    REQUIRE(plain.run({"agents", "import", "from-image", "--name", "web", "--containerImage",
                       "nginx:1.27", "--dry-run", "-o", "json"}) == 0);
    const json web = testing::printedJson(
        plain.out.str())["items"][0]["spec"]["template"]["spec"]["containers"][0];
    CHECK_FALSE(web.contains("command"));
    CHECK_FALSE(web.contains("args"));

    TestHost empty;
    CHECK(empty.run({"agents", "import", "from-image", "--name", "web", "--containerImage",
                     "nginx:1.27", "--command="}) == kExitUsage);
    CHECK(empty.server.requests.empty());
}
