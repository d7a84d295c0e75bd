// The foundation's REST client against the real apiserver of the local cluster.
#include <catch2/catch.hpp>

#include "harness.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/kube/config.hpp"
#include "rossoctl/kube/resource.hpp"

using namespace rossoctl::kube;
using nlohmann::json;

namespace {

json configMap(const std::string& name, const std::string& value) {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}}},
            {"data", {{"key", value}}}};
}

}  // namespace

TEST_CASE("create, get, list with paging, update with a stale resourceVersion", "[client]") {
    harness::TestNamespace ns("client");
    auto& client = harness::admin();
    for (int i = 0; i < 5; ++i)
        client.create(resources::configMaps(), ns.name(),
                      configMap("cm-" + std::to_string(i), "v"));
    auto got = client.get(resources::configMaps(), ns.name(), "cm-0");
    CHECK(got["data"]["key"] == "v");

    // The controller-manager adds kube-root-ca.crt on its own time; count it once it is there.
    REQUIRE(harness::eventually([&] {
        return client.getIfExists(resources::configMaps(), ns.name(), "kube-root-ca.crt")
            .has_value();
    }));
    ListOptions paged;
    paged.limit = 2;
    int pages = 0;
    client.listPages(resources::configMaps(), ns.name(), paged, [&](const json&) {
        ++pages;
        return true;
    });
    CHECK(pages >= 3);  // 5 ours + kube-root-ca.crt, two per page
    CHECK(client.list(resources::configMaps(), ns.name(), paged)["items"].size() == 6);

    json fresh = got;
    fresh["data"]["key"] = "first";
    client.update(resources::configMaps(), ns.name(), fresh);
    json stale = got;  // still carries the old resourceVersion
    stale["data"]["key"] = "second";
    try {
        client.update(resources::configMaps(), ns.name(), stale);
        FAIL("a stale update was accepted");
    } catch (const ApiError& e) {
        CHECK(e.code() == 409);
        CHECK(e.isConflict());
    }
    CHECK(client.get(resources::configMaps(), ns.name(), "cm-0")["data"]["key"] == "first");
    try {
        client.get(resources::configMaps(), ns.name(), "absent");
        FAIL("found an absent object");
    } catch (const ApiError& e) {
        CHECK(e.isNotFound());
        CHECK(std::string(e.what()) == "configmaps \"absent\" not found");
    }
}

TEST_CASE("patch kinds: JSON, merge and server-side apply", "[client]") {
    harness::TestNamespace ns("patch");
    auto& client = harness::admin();
    client.create(resources::configMaps(), ns.name(), configMap("p", "0"));
    client.patch(resources::configMaps(), ns.name(), "p", PatchType::Json,
                 R"([{"op":"replace","path":"/data/key","value":"json"}])");
    CHECK(client.get(resources::configMaps(), ns.name(), "p")["data"]["key"] == "json");
    client.patch(resources::configMaps(), ns.name(), "p", PatchType::Merge,
                 R"({"data":{"other":"merge"}})");
    CHECK(client.get(resources::configMaps(), ns.name(), "p")["data"]["other"] == "merge");
    json applied = configMap("applied", "ssa");
    applied["metadata"]["namespace"] = ns.name();
    auto first = client.apply(resources::configMaps(), ns.name(), applied);
    auto second = client.apply(resources::configMaps(), ns.name(), applied);
    CHECK(first["metadata"]["resourceVersion"] == second["metadata"]["resourceVersion"]);
    CHECK(second["metadata"]["managedFields"][0]["manager"] == "rossoctl");
}

TEST_CASE("delete with a UID precondition, and watch", "[client]") {
    harness::TestNamespace ns("delete");
    auto& client = harness::admin();
    auto created = client.create(resources::configMaps(), ns.name(), configMap("d", "x"));
    DeleteOptions wrongUid;
    wrongUid.preconditionUid = "00000000-0000-0000-0000-000000000000";
    try {
        client.remove(resources::configMaps(), ns.name(), "d", wrongUid);
        FAIL("deleted despite a wrong UID");
    } catch (const ApiError& e) {
        CHECK(e.code() == 409);
    }
    CHECK(client.getIfExists(resources::configMaps(), ns.name(), "d").has_value());

    // A watch from the current resourceVersion sees the delete.
    std::string rv = client.list(resources::configMaps(), ns.name())["metadata"]["resourceVersion"];
    DeleteOptions rightUid;
    rightUid.preconditionUid = created["metadata"]["uid"].get<std::string>();
    client.remove(resources::configMaps(), ns.name(), "d", rightUid);
    ListOptions watchFrom;
    watchFrom.resourceVersion = rv;
    watchFrom.fieldSelector = "metadata.name=d";
    bool sawDelete = false;
    client.watch(
        resources::configMaps(), ns.name(), watchFrom,
        [&](const WatchEvent& event) {
            if (event.type == "DELETED") sawDelete = true;
            return !sawDelete;
        },
        std::chrono::seconds(20));
    CHECK(sawDelete);
}

TEST_CASE("the limited user is Forbidden outside its namespace", "[client]") {
    auto result = harness::rossoctl({"sandbox", "list", "-n", "kube-system"}, {},
                                    {{"KUBECONFIG", harness::limitedKubeconfigPath()}});
    CHECK(result.exitCode == 1);
    CHECK(result.err.find("Forbidden") != std::string::npos);
    CHECK(result.err.find('\n') == result.err.size() - 1);
}

TEST_CASE("rossoctl version reports the server's version", "[client]") {
    auto result = harness::rossoctl({"version"});
    CHECK(result.exitCode == 0);
    CHECK(result.out.find("Server Version: v1.36.3") != std::string::npos);
    auto unreachable = harness::rossoctl({"version", "-s", "https://127.0.0.1:1",
                                          "--insecure-skip-tls-verify", "--request-timeout", "5s"},
                                         {}, {}, 30);
    CHECK(unreachable.exitCode == 1);
    CHECK(unreachable.err.find('\n') == unreachable.err.size() - 1);
}
