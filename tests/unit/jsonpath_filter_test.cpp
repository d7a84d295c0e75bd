// kubectl's JSONPath where users reach for it (issue 34 points 5 and 10): filters, recursive
// descent, --sort-by without its dot, kubectl's error for a --sort-by no object has, and the
// formats an unknown -o names.
#include <catch2/catch.hpp>

#include "rossoctl/ui/jsonpath.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

namespace {

const json kPod = json::parse(R"({
  "metadata": {"name": "orders", "labels": {"app": "shop"}},
  "spec": {"containers": [{"name": "agent", "image": "busybox"},
                          {"name": "proxy", "image": "envoy", "ports": [{"containerPort": 8080}]}]},
  "status": {"conditions": [{"type": "Ready", "status": "False", "lastProbe": 3},
                            {"type": "Scheduled", "status": "True", "lastProbe": 9}]}
})");

std::string printed(const std::string& path) {
    std::ostringstream out;
    ui::printJsonPath(out, kPod, path, false);
    return out.str();
}

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";

json sandboxNamed(const std::string& name, int priority) {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", name},
              {"namespace", "team1"},
              {"uid", "uid-" + name},
              {"annotations", {{"priority", std::to_string(priority)}}}}}};
}

void serveTwo(TestHost& host) {
    host.serveSandboxGroup();
    host.server.onJson(
        "GET", "/api/v1/namespaces/team1/pods", 200,
        {{"kind", "PodList"}, {"metadata", json::object()}, {"items", json::array()}});
    host.server.onJson("GET", kSandboxes, 200,
                       {{"kind", "SandboxList"},
                        {"metadata", json::object()},
                        {"items", {sandboxNamed("zeta", 1), sandboxNamed("alpha", 2)}}});
}

}  // namespace

TEST_CASE("JSONPath filters pick the elements whose field compares", "[jsonpath]") {
    CHECK(printed(R"({.status.conditions[?(@.type=="Ready")].status})") == "False");
    CHECK(printed(R"({.status.conditions[?(@.type!='Ready')].type})") == "Scheduled");
    CHECK(printed("{.status.conditions[?(@.lastProbe>5)].type}") == "Scheduled");
    CHECK(printed("{.status.conditions[?(@.lastProbe<=3)].type}") == "Ready");
    CHECK(printed("{.spec.containers[?(@.ports)].name}") == "proxy");
    CHECK(printed(R"({.spec.containers[?(@.name=="none")].name})").empty());
    CHECK(printed(R"({range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end})") ==
          "Scheduled\n");
    CHECK_THROWS_AS(ui::findPath(kPod, "{.a[?(@.b=)]}"), UsageError);
    CHECK_THROWS_AS(ui::findPath(kPod, "{.a[?(@.b==unquoted)]}"), UsageError);
    CHECK_THROWS_AS(ui::findPath(kPod, "{.a[?(b==1)]}"), UsageError);
}

TEST_CASE("JSONPath .. finds a field at every depth", "[jsonpath]") {
    CHECK(printed("{..image}") == "busybox envoy");
    CHECK(printed("{..containerPort}") == "8080");
    CHECK(printed("{.spec..name}") == "agent proxy");
    CHECK(printed(R"({..[?(@.type=="Ready")].lastProbe})") == "3");
    CHECK_THROWS_AS(ui::findPath(kPod, "{..}"), UsageError);
}

TEST_CASE("--sort-by takes a path without its dot; one no object has is kubectl's error",
          "[jsonpath][conventions]") {
    TestHost sorted;
    serveTwo(sorted);
    REQUIRE(sorted.run({"sandbox", "list", "--sort-by=metadata.name", "-o", "name"}) == 0);
    CHECK(sorted.out.str() == "sandbox.agents.x-k8s.io/alpha\nsandbox.agents.x-k8s.io/zeta\n");

    TestHost columns;
    serveTwo(columns);
    REQUIRE(columns.run({"sandbox", "list", "-o", "custom-columns=NAME:metadata.name", "--sort-by",
                         "{.metadata.annotations.priority}"}) == 0);
    CHECK(columns.out.str() == "NAME\nzeta\nalpha\n");

    for (const std::string output : {"name", "jsonpath={.items[*].metadata.name}", ""}) {
        TestHost missing;
        serveTwo(missing);
        std::vector<std::string> args = {"sandbox", "list", "--sort-by", ".metadata.nope"};
        if (!output.empty()) args.insert(args.end(), {"-o", output});
        INFO(output);
        CHECK(missing.run(args) == kExitError);
        CHECK(missing.err.str() ==
              "error: couldn't find any field with path \"{.metadata.nope}\" in the list of "
              "objects\n");
        CHECK(missing.out.str().empty());
    }
}

TEST_CASE("an unknown -o names every format, the templates too, and the one meant",
          "[conventions][usage]") {
    for (const auto& command : std::vector<std::vector<std::string>>{
             {"sandbox", "list"}, {"agents", "list"}, {"project", "list"}}) {
        TestHost host;
        auto args = command;
        args.insert(args.end(), {"-o", "yml"});
        CHECK(host.run(args) == kExitUsage);
        INFO(host.err.str());
        CHECK(host.err.str().find("use one of: table, wide, json, yaml, name, jsonpath=TEMPLATE, "
                                  "custom-columns=SPEC (did you mean yaml?)") != std::string::npos);
        CHECK(host.server.requests.empty());
    }
}

TEST_CASE("-o jsonpath: an index past an array's end is kubectl's error, not an empty line",
          "[jsonpath][conventions]") {
    TestHost listed;
    serveTwo(listed);
    CHECK(listed.run({"sandbox", "list", "-o", "jsonpath={.items[5].metadata.name}"}) ==
          kExitError);
    CHECK(listed.err.str() ==
          "error: error executing jsonpath \"{.items[5].metadata.name}\": array index out of "
          "bounds: index 5, length 2\n");
    CHECK(listed.out.str().empty());

    TestHost inRange;  // within the array, from either end
    serveTwo(inRange);
    REQUIRE(inRange.run({"sandbox", "list", "-o", "jsonpath={.items[-1].metadata.name}"}) == 0);
    CHECK(inRange.out.str() == "alpha");

    CHECK(printed("{.spec.containers[1].name}") == "proxy");
    CHECK_THROWS_WITH(printed("{.status.conditions[-3].type}"),
                      Catch::Contains("array index out of bounds: index -1, length 2"));
    // A container without ports has no array to index: nothing, as in kubectl.
    CHECK(printed("{range .spec.containers[*]}{.ports[0].containerPort}{end}") == "8080");
    // As kubectl's default (--allow-missing-template-keys): a missing field prints nothing, a
    // filter's own path never errs, and a custom column shows <none>.
    CHECK(printed("{.metadata.nope}").empty());
    CHECK(printed("{.spec.containers[?(@.ports[3])].name}").empty());
    std::ostringstream columns;
    ui::printCustomColumns(columns, {kPod}, "C:.spec.containers[7].name", false);
    CHECK(columns.str().find("<none>") != std::string::npos);
}
