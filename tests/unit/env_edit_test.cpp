#include "rossoctl/model/env_edit.hpp"

#include <catch2/catch.hpp>

#include "rossoctl/errors.hpp"

using namespace rossoctl;
using namespace rossoctl::model;
using nlohmann::json;

namespace {

json agentContainer() {
    return {{"name", "agent"},
            {"image", "busybox"},
            {"env", json::array(
                        {{{"name", "MCP_URL"}, {"value", "http://old:8080/mcp"}},
                         {{"name", "DB_PASS"},
                          {"valueFrom", {{"secretKeyRef", {{"name", "db"}, {"key", "password"}}}}}},
                         {{"name", "LOG_LEVEL"}, {"value", "info"}}})}};
}

}  // namespace

TEST_CASE("set updates an existing variable and adds an absent one", "[env-edit]") {
    json container = agentContainer();
    auto change = parseEnvChange({"MCP_URL=http://new-address:8080/mcp", "NEW=1"});
    auto result = applyEnvChange(container, change);
    CHECK(result.changed());
    CHECK(result.updated == std::vector<std::string>{"MCP_URL"});
    CHECK(result.added == std::vector<std::string>{"NEW"});
    CHECK(container["env"][0] ==
          json{{"name", "MCP_URL"}, {"value", "http://new-address:8080/mcp"}});
    CHECK(container["env"][3] == json{{"name", "NEW"}, {"value", "1"}});
    CHECK(container["env"][1]["valueFrom"]["secretKeyRef"]["name"] == "db");  // untouched
    CHECK(container["image"] == "busybox");
    CHECK(summarizeEnvEdit(result) == "MCP_URL updated, NEW added");
}

TEST_CASE("a change that changes nothing reports no change and leaves the object", "[env-edit]") {
    json container = agentContainer();
    const json before = container;
    auto result = applyEnvChange(container, parseEnvChange({"LOG_LEVEL=info", "ABSENT-"}));
    CHECK_FALSE(result.changed());
    CHECK(container == before);
}

TEST_CASE("remove drops every entry of the name; the last removal drops env", "[env-edit]") {
    json container = {
        {"name", "agent"},
        {"env", json::array({{{"name", "A"}, {"value", "1"}}, {{"name", "A"}, {"value", "2"}}})}};
    auto result = applyEnvChange(container, parseEnvChange({"A-"}));
    CHECK(result.removed == std::vector<std::string>{"A"});
    CHECK_FALSE(container.contains("env"));
}

TEST_CASE("set replaces a valueFrom with a plain value", "[env-edit]") {
    json container = agentContainer();
    auto result = applyEnvChange(container, parseEnvChange({"DB_PASS=plain"}));
    CHECK(result.updated == std::vector<std::string>{"DB_PASS"});
    CHECK(container["env"][1] == json{{"name", "DB_PASS"}, {"value", "plain"}});
}

TEST_CASE("a container without env gets one", "[env-edit]") {
    json container = {{"name", "agent"}};
    auto result = applyEnvChange(container, parseEnvChange({"X=a=b", "EMPTY="}));
    CHECK(result.added == std::vector<std::string>{"X", "EMPTY"});
    CHECK(container["env"][0]["value"] == "a=b");
    CHECK(container["env"][1]["value"] == "");
}

TEST_CASE("arguments are validated before anything is sent", "[env-edit]") {
    CHECK_THROWS_AS(parseEnvChange({"NOEQUALS"}), UsageError);
    CHECK_THROWS_AS(parseEnvChange({"=value"}), UsageError);
    CHECK_THROWS_AS(parseEnvChange({"1BAD NAME=x"}), UsageError);
    CHECK_THROWS_AS(parseEnvChange({"A=1", "A-"}), UsageError);
    CHECK_THROWS_AS(parseEnvChange({"-"}), UsageError);
}

TEST_CASE("file entries come first and arguments win", "[env-edit]") {
    auto change = parseEnvChange({"A=arg"}, {{"A", "file"}, {"B", "file"}});
    REQUIRE(change.set.size() == 2);
    CHECK(change.set[0].name == "A");
    CHECK(change.set[0].value == "arg");
    CHECK(change.set[1].name == "B");
}

TEST_CASE("the container: -c, else agent, else the only one; errors list them", "[env-edit]") {
    json spec = {{"containers", json::array({{{"name", "sidecar"}}, {{"name", "agent"}}})}};
    CHECK(selectContainer(spec, "", "sandbox/s")["name"] == "agent");
    CHECK(selectContainer(spec, "sidecar", "sandbox/s")["name"] == "sidecar");
    try {
        selectContainer(spec, "nope", "sandbox/s");
        FAIL("expected an error");
    } catch (const Error& error) {
        CHECK(std::string(error.what()) ==
              "sandbox/s has no container \"nope\"; its containers: sidecar, agent");
    }
    json single = {{"containers", json::array({{{"name", "main"}}})}};
    CHECK(selectContainer(single, "", "sandbox/s")["name"] == "main");
    json two = {{"containers", json::array({{{"name", "a"}}, {{"name", "b"}}})}};
    CHECK_THROWS_WITH(selectContainer(two, "", "sandbox/s"), Catch::Contains("choose one with -c"));
}

TEST_CASE("--list shows references, never resolved secrets", "[env-edit]") {
    json container = agentContainer();
    container["envFrom"] = json::array({{{"configMapRef", {{"name", "settings"}}}}});
    container["env"].push_back(
        {{"name", "POD"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}});
    auto lines = describeEnv(container);
    CHECK(lines == std::vector<std::string>{"# all keys from configmap settings",
                                            "MCP_URL=http://old:8080/mcp",
                                            "DB_PASS from secret db/password", "LOG_LEVEL=info",
                                            "POD from field metadata.name"});
}
