// version and completion end to end: what they print and that bad input sends nothing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>

#include "registry.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;

TEST_CASE("version and completion: every help example parses and validates", "[command]") {
    testing::checkHelpExamples({"version"});
    testing::checkHelpExamples({"completion"});
}

namespace {

std::string servedGroup(const std::string& group, const std::vector<std::string>& versions) {
    json body = {{"kind", "APIGroup"}, {"name", group}, {"versions", json::array()}};
    for (const auto& version : versions)
        body["versions"].push_back({{"groupVersion", group + "/" + version}, {"version", version}});
    body["preferredVersion"] = {{"groupVersion", group + "/" + versions.front()},
                                {"version", versions.front()}};
    return body.dump();
}

}  // namespace

TEST_CASE("version prints the client's and the server's version and the agent-sandbox APIs",
          "[command]") {
    TestHost host;
    host.server.on("GET", "/version", 200, R"({"gitVersion":"v1.31.2","platform":"linux/amd64"})");
    host.server.on("GET", "/apis/agents.x-k8s.io", 200,
                   servedGroup("agents.x-k8s.io", {"v1beta1", "v1alpha1"}));
    host.server.on("GET", "/apis/extensions.agents.x-k8s.io", 200,
                   servedGroup("extensions.agents.x-k8s.io", {"v1beta1"}));
    REQUIRE(host.run({"version"}) == 0);
    CHECK(host.out.str() == std::string("Client Version: v") + ROSSOCTL_VERSION +
                                "\nServer Version: v1.31.2\nAgent Sandbox APIs: agents.x-k8s.io "
                                "v1beta1 (preferred) v1alpha1; extensions.agents.x-k8s.io "
                                "v1beta1\n");
    CHECK(host.sent() == std::vector<std::string>{"GET /version", "GET /apis/agents.x-k8s.io",
                                                  "GET /apis/extensions.agents.x-k8s.io"});

    // agent-sandbox 1.0: v1beta1 only, in -o json.
    TestHost asJson;
    asJson.server.on("GET", "/version", 200, R"({"gitVersion":"v1.31.2"})");
    asJson.server.on("GET", "/apis/agents.x-k8s.io", 200,
                     servedGroup("agents.x-k8s.io", {"v1beta1"}));
    REQUIRE(asJson.run({"version", "-o", "json"}) == 0);
    json printed = testing::printedJson(asJson.out.str());
    CHECK(printed["serverVersion"]["gitVersion"] == "v1.31.2");
    CHECK(printed["clientVersion"]["gitVersion"] == std::string("v") + ROSSOCTL_VERSION);
    CHECK(printed["agentSandbox"] == json::array({{{"group", "agents.x-k8s.io"},
                                                   {"versions", {"v1beta1"}},
                                                   {"preferredVersion", "v1beta1"}}}));

    // Not installed: said so; and what the server calls a version reaches the terminal escaped.
    TestHost none;
    none.server.on("GET", "/version", 200, R"({"gitVersion":"v1.31.2\u001b[2J"})");
    REQUIRE(none.run({"version"}) == 0);
    CHECK(none.out.str().find("\x1b") == std::string::npos);
    CHECK(none.out.str().find("Agent Sandbox APIs: none served (is agent-sandbox installed?)\n") !=
          std::string::npos);
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

TEST_CASE("the top-level help lists every exit code DESIGN names, as the man pages do",
          "[command][help][exit-codes]") {
    TestHost host;
    for (const auto& path : std::vector<std::vector<std::string>>{{}, {"sandbox"}}) {
        const std::string help = host.help(path);
        const size_t at = help.find("Exit codes: ");
        REQUIRE(at != std::string::npos);
        const std::string footer = help.substr(at, help.find("Run 'rossoctl", at) - at);
        std::string flat = footer;  // the codes' words may wrap
        std::replace(flat.begin(), flat.end(), '\n', ' ');
        INFO(footer);
        for (const char* code :
             {"0 success", "1 error", "2 usage error", "3 a sandbox boundary", "130 interrupted",
              "124 timed out", "125 its own failure", "137 killed"})
            CHECK(flat.find(code) != std::string::npos);
        // Every line fits a terminal.
        std::istringstream lines(footer);
        for (std::string line; std::getline(lines, line);) CHECK(line.size() <= 100);
    }
    // The man pages' EXIT STATUS is written from the same list.
    std::vector<std::string> codes;
    for (const auto& exit : commands::exitCodes()) codes.push_back(exit.code);
    CHECK(codes == std::vector<std::string>{"0", "1", "2", "3", "130", "124", "125", "137"});
}
