#include "rossoctl/model/validation.hpp"

#include <catch2/catch.hpp>

#include "rossoctl/errors.hpp"
#include "rossoctl/ui/yaml.hpp"

using namespace rossoctl;
using namespace rossoctl::model;

TEST_CASE("DNS-1123 labels", "[validation]") {
    CHECK_NOTHROW(validateDnsLabel("orders", "name"));
    CHECK_NOTHROW(validateDnsLabel("a-1", "name"));
    CHECK_THROWS_AS(validateDnsLabel("", "name"), UsageError);
    CHECK_THROWS_AS(validateDnsLabel("Orders", "name"), UsageError);
    CHECK_THROWS_AS(validateDnsLabel("-x", "name"), UsageError);
    CHECK_THROWS_AS(validateDnsLabel("x_y", "name"), UsageError);
    CHECK_THROWS_AS(validateDnsLabel("caf\xc3\xa9", "name"), UsageError);
    CHECK_THROWS_AS(validateDnsLabel(std::string(64, 'a'), "name"), UsageError);
    CHECK_THROWS_WITH(validateDnsLabel(std::string(254, 'a'), "sandbox name"),
                      Catch::Contains("254 characters"));
}

TEST_CASE("env names and assignments", "[validation]") {
    auto var = parseEnvAssignment("MCP_URL=http://x:8080/mcp?a=b", "--envVar");
    CHECK(var.name == "MCP_URL");
    CHECK(var.value == "http://x:8080/mcp?a=b");
    CHECK(parseEnvAssignment("EMPTY=", "x").value.empty());
    CHECK_THROWS_AS(parseEnvAssignment("NOVALUE", "x"), UsageError);
    CHECK_THROWS_AS(parseEnvAssignment("=v", "x"), UsageError);
    CHECK_THROWS_AS(parseEnvAssignment("1BAD=v", "x"), UsageError);
    CHECK_THROWS_AS(parseEnvAssignment("BAD NAME=v", "x"), UsageError);
}

TEST_CASE("env files", "[validation]") {
    auto vars = parseEnvFile("# comment\nA=1\n\nexport B=\"two words\"\r\nC='x=y'\n", "f.env");
    REQUIRE(vars.size() == 3);
    CHECK(vars[1].name == "B");
    CHECK(vars[1].value == "two words");
    CHECK(vars[2].value == "x=y");
    CHECK_THROWS_WITH(parseEnvFile("A=1\nbroken\n", "f.env"), Catch::Contains("f.env: line 2"));
    auto merged = mergeEnv({{"A", "1"}, {"B", "2"}}, {{"B", "3"}, {"C", "4"}});
    REQUIRE(merged.size() == 3);
    CHECK(merged[1].value == "3");
}

TEST_CASE("quantities", "[validation]") {
    CHECK(parseQuantity("500m", "--cpu") == Approx(0.5));
    CHECK(parseQuantity("2", "--cpu") == Approx(2));
    CHECK(parseQuantity("512Mi", "--memory") == Approx(512.0 * 1024 * 1024));
    CHECK(parseQuantity("1G", "--memory") == Approx(1e9));
    CHECK(parseQuantity("1e3", "--memory") == Approx(1000));
    CHECK_THROWS_AS(parseQuantity("lots", "--memory"), UsageError);
    CHECK_THROWS_AS(parseQuantity("-1", "--memory"), UsageError);
    CHECK_THROWS_AS(parseQuantity("5 Gi", "--memory"), UsageError);
    CHECK_THROWS_AS(parseQuantity("", "--memory"), UsageError);
}

TEST_CASE("image references and ports", "[validation]") {
    CHECK_NOTHROW(validateImageReference("python:3.12-slim", "--containerImage"));
    CHECK_NOTHROW(validateImageReference("ghcr.io/acme/agent:v1.2", "--containerImage"));
    CHECK_NOTHROW(validateImageReference("localhost:5000/a/b@sha256:" + std::string(64, 'a'), "i"));
    CHECK_THROWS_AS(validateImageReference("Not An Image", "--containerImage"), UsageError);
    CHECK_THROWS_AS(validateImageReference("", "--containerImage"), UsageError);
    CHECK(parsePort("8080", "--port") == 8080);
    CHECK_THROWS_AS(parsePort("0", "--port"), UsageError);
    CHECK_THROWS_AS(parsePort("70000", "--port"), UsageError);
    CHECK_THROWS_AS(parsePort("http", "--port"), UsageError);
}

TEST_CASE("lifetimes", "[validation]") {
    CHECK(parseLifetime("24h", "--lifetime").count() == 86400);
    CHECK(parseLifetime("1h30m", "--lifetime").count() == 5400);
    CHECK_THROWS_AS(parseLifetime("0", "--lifetime"), UsageError);
    CHECK_THROWS_AS(parseLifetime("tomorrow", "--lifetime"), UsageError);
    // Review 48 finding 4: 2100000h wrapped now + lifetime into 1681.
    CHECK(parseLifetime("876000h", "--lifetime").count() == 876000LL * 3600);
    CHECK_THROWS_WITH(parseLifetime("2100000h", "--lifetime"),
                      "invalid value \"2100000h\" for --lifetime: at most 876000h (100 years)");
}

TEST_CASE("30,000 characters of input are a usage error, never a stack overflow", "[validation]") {
    const std::string longName(30'000, 'A');
    CHECK(parseEnvAssignment(longName + "=x", "--env").name == longName);
    CHECK_NOTHROW(validateEnvName(longName, "--env"));  // long but valid: a plain loop
    CHECK_THROWS_AS(validateEnvName(longName + "!", "--env"), rossoctl::UsageError);
    CHECK_THROWS_AS(parseQuantity(std::string(30'000, '1'), "--memory"), rossoctl::UsageError);
    CHECK_THROWS_AS(parseQuantity("1" + std::string(30'000, '0') + "Mi", "--cpu"),
                    rossoctl::UsageError);
    CHECK_THROWS_AS(validateImageReference(std::string(30'000, 'a'), "--image"),
                    rossoctl::UsageError);
    CHECK_THROWS_AS(parsePort(std::string(30'000, '9'), "--port"), rossoctl::UsageError);
    const auto number = rossoctl::ui::yamlToJson("v: " + std::string(30'000, '7'), "x.yaml");
    CHECK(number["v"].is_string());
}
