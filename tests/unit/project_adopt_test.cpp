// project create --adopt marks the namespace as adopted, and project delete of an adopted
// namespace removes only what rossoctl wrote in it and on it: the namespace stays.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kNamespaces = "/api/v1/namespaces";
const std::string kPolicies = "/apis/networking.k8s.io/v1/namespaces/legacy/networkpolicies";

json namedObject(const std::string& name, bool rossoctls) {
    json object = {{"metadata", {{"name", name}, {"resourceVersion", "4"}}}};
    if (rossoctls) object["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "rossoctl";
    return object;
}

}  // namespace

TEST_CASE("project create --adopt marks the namespace adopted, also on a re-run",
          "[project][command][hostile]") {
    for (const bool rerun : {false, true}) {
        TestHost host;
        json existing = {{"metadata", {{"name", "legacy"}, {"resourceVersion", "3"}}},
                         {"status", {{"phase", "Active"}}}};
        if (rerun) {
            existing["metadata"]["labels"]["rossoctl.dev/sandbox-project"] = "true";
            existing["metadata"]["annotations"]["rossoctl.dev/adopted"] = "true";
        }
        host.server.onJson("GET", kNamespaces + "/legacy", 200, existing);
        host.server.on("PATCH", "*", 200, R"({"metadata":{"resourceVersion":"5"}})");
        json quota = {{"metadata", {{"name", "sandbox-quota"}}},
                      {"status", {{"hard", {{"pods", "20"}}}}}};
        host.server.onJson("GET", kNamespaces + "/legacy/resourcequotas", 200, list({quota}));
        INFO("re-run: " << rerun);
        REQUIRE(host.run({"project", "create", "legacy", "--adopt", "--no-check"}) == 0);
        const auto applied = host.server.requestsTo("PATCH", kNamespaces + "/legacy");
        REQUIRE(applied.size() == 1);
        CHECK(json::parse(applied[0].body)["metadata"]["annotations"]["rossoctl.dev/adopted"] ==
              "true");
    }
}

TEST_CASE("project create of a new namespace does not mark it adopted", "[project][command]") {
    TestHost host;
    host.server.on("GET", kNamespaces + "/fresh", 404, testing::kNotFoundBody);
    host.server.on("PATCH", "*", 201, R"({"metadata":{"resourceVersion":"1"}})");
    json quota = {{"metadata", {{"name", "sandbox-quota"}}},
                  {"status", {{"hard", {{"pods", "20"}}}}}};
    host.server.onJson("GET", kNamespaces + "/fresh/resourcequotas", 200, list({quota}));
    const int exitCode = host.run({"project", "create", "fresh", "--no-check"});
    INFO(host.err.str());
    REQUIRE(exitCode == 0);
    const auto applied = host.server.requestsTo("PATCH", kNamespaces + "/fresh");
    REQUIRE(applied.size() == 1);
    CHECK_FALSE(
        json::parse(applied[0].body)["metadata"]["annotations"].contains("rossoctl.dev/adopted"));
}

TEST_CASE("project delete of an adopted namespace deletes only rossoctl's objects and labels",
          "[project][command][hostile]") {
    TestHost host;
    host.serveGroups();
    json adopted = {{"metadata",
                     {{"name", "legacy"},
                      {"resourceVersion", "7"},
                      {"labels",
                       {{"rossoctl.dev/sandbox-project", "true"},
                        {"app.kubernetes.io/managed-by", "rossoctl"}}},
                      {"annotations", {{"rossoctl.dev/adopted", "true"}}}}},
                    {"status", {{"phase", "Active"}}}};
    host.server.onJson("GET", kNamespaces + "/legacy", 200, adopted);
    host.server.onJson("GET", kNamespaces + "/legacy/resourcequotas/sandbox-quota", 200,
                       namedObject("sandbox-quota", true));
    // Someone else's LimitRange of the same name: not rossoctl's, kept.
    host.server.onJson("GET", kNamespaces + "/legacy/limitranges/sandbox-limits", 200,
                       namedObject("sandbox-limits", false));
    host.server.onJson("GET", kPolicies + "/default-deny", 200, namedObject("default-deny", true));
    host.server.onJson("GET", kPolicies + "/allow-dns", 200, namedObject("allow-dns", true));
    host.server.on("DELETE", "*", 200, "{}");
    host.server.on("PATCH", kNamespaces + "/legacy", 200, R"({"metadata":{"name":"legacy"}})");
    REQUIRE(host.run({"project", "delete", "legacy", "--yes"}) == 0);
    CHECK(host.server.writes() ==
          std::vector<std::string>{"DELETE " + kPolicies + "/allow-dns",
                                   "DELETE " + kPolicies + "/default-deny",
                                   "DELETE " + kNamespaces + "/legacy/resourcequotas/sandbox-quota",
                                   "PATCH " + kNamespaces + "/legacy"});
    // The namespace is applied bare: every label and annotation rossoctl set on it goes.
    const auto released = host.server.requestsTo("PATCH", kNamespaces + "/legacy");
    REQUIRE(released.size() == 1);
    CHECK(json::parse(released[0].body) ==
          json({{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "legacy"}}}}));
    CHECK(released[0].url.find("fieldManager=rossoctl") != std::string::npos);
    CHECK(host.out.str().find("namespace/legacy kept (adopted)") != std::string::npos);
    const auto deletes = host.server.requestsTo("DELETE", kPolicies + "/default-deny");
    REQUIRE(deletes.size() == 1);
    CHECK(json::parse(deletes[0].body)["preconditions"]["resourceVersion"] == "4");
}
