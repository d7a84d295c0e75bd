// version and completion end to end: what they print and that bad input sends nothing.
#include <catch2/catch.hpp>

#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;

TEST_CASE("version and completion: every help example parses and validates", "[command]") {
    testing::checkHelpExamples({"version"});
    testing::checkHelpExamples({"completion"});
}

TEST_CASE("version prints the client's and the server's version", "[command]") {
    TestHost host;
    host.server.on("GET", "/version", 200, R"({"gitVersion":"v1.31.2","platform":"linux/amd64"})");
    REQUIRE(host.run({"version"}) == 0);
    CHECK(host.out.str() ==
          std::string("Client Version: v") + ROSSOCTL_VERSION + "\nServer Version: v1.31.2\n");
    CHECK(host.sent() == std::vector<std::string>{"GET /version"});

    TestHost asJson;
    asJson.server.on("GET", "/version", 200, R"({"gitVersion":"v1.31.2"})");
    REQUIRE(asJson.run({"version", "-o", "json"}) == 0);
    json printed = testing::printedJson(asJson.out.str());
    CHECK(printed["serverVersion"]["gitVersion"] == "v1.31.2");
    CHECK(printed["clientVersion"]["gitVersion"] == std::string("v") + ROSSOCTL_VERSION);
}

TEST_CASE("version --client sends nothing; a bad -o neither", "[command]") {
    TestHost client;
    REQUIRE(client.run({"version", "--client", "-o", "yaml"}) == 0);
    CHECK(client.out.str().find("gitVersion: v") != std::string::npos);
    CHECK(client.server.requests.empty());

    TestHost bad;
    CHECK(bad.run({"version", "-o", "table"}) == kExitUsage);
    CHECK(bad.server.requests.empty());
}

TEST_CASE("version says what the server refused", "[command]") {
    TestHost forbidden;
    forbidden.server.on("GET", "/version", 403,
                        statusBody(403, "Forbidden", "forbidden: /version"));
    CHECK(forbidden.run({"version"}) == kExitError);
    CHECK(forbidden.err.str() == "Error from server (Forbidden): forbidden: /version\n");

    TestHost missing;  // an apiserver without /version (404) is an error, not a crash
    CHECK(missing.run({"version"}) == kExitError);
    CHECK(missing.err.str().rfind("Error from server (NotFound)", 0) == 0);
}

TEST_CASE("completion prints a script per shell from the command tree, offline", "[command]") {
    for (const char* shell : {"bash", "zsh", "fish"}) {
        TestHost host;
        INFO(shell);
        REQUIRE(host.run({"completion", shell}) == 0);
        CHECK(host.out.str().find(std::string("rossoctl completion ") + shell) !=
              std::string::npos);
        CHECK(host.out.str().find("set-env") != std::string::npos);
        CHECK(host.server.requests.empty());
    }
    TestHost bad;
    CHECK(bad.run({"completion", "powershell"}) == kExitUsage);
    CHECK(bad.err.str() ==
          "error: unsupported shell \"powershell\"; use bash, zsh, fish or kubectl-plugin\n");
    CHECK(bad.run({"completion"}) == kExitUsage);
    CHECK(bad.server.requests.empty());
}
