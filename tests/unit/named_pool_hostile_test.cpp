// Warm pools as a hostile API server shows them: pools and templates someone else made under
// rossoctl's names, control characters in their names and fields, counts of any size or type.
// rossoctl changes or deletes none of theirs, prints none of their bytes raw, and reads them
// within bounds.
#include <catch2/catch.hpp>
#include <climits>

#include "json_fixtures.hpp"
#include "rossoctl/app/run/named_pool.hpp"
#include "rossoctl/app/run/runner.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kExtensions = "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/team1";
const std::string kPools = kExtensions + "/sandboxwarmpools";
const std::string kTemplates = kExtensions + "/sandboxtemplates";

void serveExtensions(TestHost& host) {
    host.server.on("GET", "/apis/extensions.agents.x-k8s.io", 200,
                   R"({"kind":"APIGroup","name":"extensions.agents.x-k8s.io",)"
                   R"("versions":[{"version":"v1beta1"}]})");
}

// Another tool's pool and template: no rossoctl labels, its own container and work volume.
json theirTemplate(const std::string& name) {
    json container = {{"name", "runtime"},
                      {"image", "registry.example/runtime:v1"},
                      {"workingDir", "/data"},
                      {"volumeMounts", {{{"name", "data"}, {"mountPath", "/data"}}}}};
    return {{"metadata", {{"name", name}, {"namespace", "team1"}}},
            {"spec", {{"podTemplate", {{"spec", {{"containers", {container}}}}}}}}};
}
json theirPool(const std::string& name, const std::string& templateName) {
    return {{"metadata", {{"name", name}, {"namespace", "team1"}, {"uid", "their-uid"}}},
            {"spec", {{"replicas", 3}, {"sandboxTemplateRef", {{"name", templateName}}}}},
            {"status", {{"replicas", 3}, {"readyReplicas", 3}}}};
}

// The one line an error gives: no line break of the server's inside it.
void checkOneLine(const std::string& err) {
    INFO(err);
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    CHECK(err.find('\x1b') == std::string::npos);
    CHECK(err.find('\r') == std::string::npos);
}

}  // namespace

TEST_CASE("sandbox pool without NAME leaves a pool of the shape's name it did not make alone",
          "[run][command][pool][hostile]") {
    const std::string derived = app::run::warmPoolName(app::run::RunPodShape{});
    for (const bool poolIsTheirs : {true, false}) {
        for (const std::string size : {"2", "0"}) {
            TestHost host;
            serveExtensions(host);
            if (poolIsTheirs)
                host.server.onJson("GET", kPools + "/" + derived, 200, theirPool(derived, derived));
            else
                host.server.onJson("GET", kTemplates + "/" + derived, 200, theirTemplate(derived));
            host.server.on("PATCH", "*", 200, "{}");
            host.server.on("DELETE", "*", 200, "{}");
            INFO("pool theirs: " << poolIsTheirs << ", --size " << size);
            CHECK(host.run({"sandbox", "pool", "--size", size}) == kExitError);
            CHECK(host.err.str().find("was not made by rossoctl sandbox pool: it is left alone") !=
                  std::string::npos);
            CHECK(host.server.writes().empty());
        }
    }
}

TEST_CASE("sandbox pool NAME --size 0 deletes the objects it read, by their UID",
          "[run][command][pool][hostile]") {
    TestHost host;
    serveExtensions(host);
    json pool = app::run::sandboxWarmPoolManifest(app::run::RunPodShape{}, 2, "py");
    pool["metadata"]["uid"] = "pool-uid";
    pool["metadata"]["name"] = "someone-elses";  // the answer names another object
    json made = app::run::sandboxTemplateManifest(app::run::RunPodShape{}, 3600, "py");
    made["metadata"]["uid"] = "template-uid";
    host.server.onJson("GET", kPools + "/py", 200, pool);
    host.server.onJson("GET", kTemplates + "/py", 200, made);
    host.server.on("DELETE", "*", 200, "{}");
    REQUIRE(host.run({"sandbox", "pool", "py", "--size", "0"}) == 0);
    // Only what was asked for and read is deleted, and only if it is still the one read.
    CHECK(host.server.writes() ==
          std::vector<std::string>{"DELETE " + kPools + "/py", "DELETE " + kTemplates + "/py"});
    const auto poolDelete = host.server.requestsTo("DELETE", kPools + "/py");
    REQUIRE(poolDelete.size() == 1);
    CHECK(json::parse(poolDelete.front().body)["preconditions"]["uid"] == "pool-uid");
    const auto templateDelete = host.server.requestsTo("DELETE", kTemplates + "/py");
    REQUIRE(templateDelete.size() == 1);
    CHECK(json::parse(templateDelete.front().body)["preconditions"]["uid"] == "template-uid");
}

TEST_CASE("sandbox run --pool takes a pool of the shape's name it did not make only on its shape",
          "[run][command][pool][hostile]") {
    const std::string derived = app::run::warmPoolName(app::run::RunPodShape{});
    TestHost host;
    serveExtensions(host);
    host.server.onJson("GET", kPools + "/" + derived, 200, theirPool(derived, "rt"));
    host.server.onJson("GET", kTemplates + "/rt", 200, theirTemplate("rt"));
    CHECK(host.run({"sandbox", "run", "--pool", "--", "true"}) == app::run::kExitRunFailed);
    INFO(host.err.str());
    // Its pods run another image: no claim on it, nothing run there.
    CHECK(host.err.str().find("does not match this run: --image " +
                              std::string(app::run::kDefaultRunImage) +
                              " (the pool's: registry.example/runtime:v1)") != std::string::npos);
    CHECK(host.server.writes().empty());
}

TEST_CASE(
    "sandbox run --pool=NAME: the server's names and fields in an error are escaped, "
    "and a long list of them cut",
    "[run][command][pool][hostile]") {
    SECTION("pool names with line breaks and escapes") {
        TestHost host;
        serveExtensions(host);
        json evil = theirPool("x", "x");
        evil["metadata"]["name"] = "evil\nerror: forged line\x1b[2J";
        host.server.onJson("GET", kPools, 200, list({evil}));
        CHECK(host.run({"sandbox", "run", "--pool=nope", "--", "true"}) ==
              app::run::kExitRunFailed);
        checkOneLine(host.err.str());
        CHECK(host.err.str().find("evil\\nerror: forged line\\x1b[2J") != std::string::npos);
    }
    SECTION("a template's image, mounts and container") {
        json object = theirTemplate("rt");
        auto& container = object["spec"]["podTemplate"]["spec"]["containers"][0];
        container["image"] = "their\nimage";
        TestHost image;
        serveExtensions(image);
        image.server.onJson("GET", kPools + "/p", 200, theirPool("p", "rt"));
        image.server.onJson("GET", kTemplates + "/rt", 200, object);
        CHECK(image.run({"sandbox", "run", "--pool=p", "--image", "busybox", "--", "true"}) ==
              app::run::kExitRunFailed);
        checkOneLine(image.err.str());
        CHECK(image.err.str().find("(the pool's: their\\nimage)") != std::string::npos);

        container["image"] = "busybox";
        container["volumeMounts"] = json::array();
        for (int i = 0; i < 5000; ++i)
            container["volumeMounts"].push_back({{"mountPath", "/m" + std::to_string(i) + "\n"}});
        TestHost mounts;
        serveExtensions(mounts);
        mounts.server.onJson("GET", kPools + "/p", 200, theirPool("p", "rt"));
        mounts.server.onJson("GET", kTemplates + "/rt", 200, object);
        CHECK(mounts.run({"sandbox", "run", "--pool=p", "--workdir", "/w", "--", "true"}) ==
              app::run::kExitRunFailed);
        checkOneLine(mounts.err.str());
        CHECK(mounts.err.str().find("/m0\\n, /m1\\n") != std::string::npos);
        CHECK(mounts.err.str().find(" and 4990 more") != std::string::npos);
        CHECK(mounts.err.str().size() < 1000);

        container["volumeMounts"] = {{{"mountPath", "/data"}}};
        container["name"] = "Main\x1b]0;x\x07";
        TestHost named;
        serveExtensions(named);
        named.server.onJson("GET", kPools + "/p", 200, theirPool("p", "rt"));
        named.server.onJson("GET", kTemplates + "/rt", 200, object);
        CHECK(named.run({"sandbox", "run", "--pool=p", "--", "true"}) == app::run::kExitRunFailed);
        checkOneLine(named.err.str());
        CHECK(named.err.str().find("names its container \"Main\\x1b]0;x\\x07\"") !=
              std::string::npos);
        CHECK(named.server.writes().empty());
    }
    SECTION("a template's work dir a run cannot use") {
        json object = theirTemplate("rt");
        auto& container = object["spec"]["podTemplate"]["spec"]["containers"][0];
        container["workingDir"] = "/data/../etc\n";
        container["volumeMounts"] = {{{"mountPath", "/data/../etc\n"}}};
        TestHost host;
        serveExtensions(host);
        host.server.onJson("GET", kPools + "/p", 200, theirPool("p", "rt"));
        host.server.onJson("GET", kTemplates + "/rt", 200, object);
        CHECK(host.run({"sandbox", "run", "--pool=p", "--", "true"}) == app::run::kExitRunFailed);
        checkOneLine(host.err.str());
        CHECK(host.err.str().find("gives what a run cannot use: invalid --workdir") !=
              std::string::npos);
        CHECK(host.server.writes().empty());
    }
    SECTION("a template reference that is no name is not sent") {
        TestHost host;
        serveExtensions(host);
        host.server.onJson("GET", kPools + "/p", 200, theirPool("p", "../../../api/v1/secrets"));
        CHECK(host.run({"sandbox", "run", "--pool=p", "--", "true"}) == app::run::kExitRunFailed);
        checkOneLine(host.err.str());
        CHECK(host.sent() == std::vector<std::string>{"GET /apis/extensions.agents.x-k8s.io",
                                                      "GET " + kPools + "/p"});
    }
}

TEST_CASE("warm pool counts of any size or type are read without wrapping or throwing",
          "[run][pool][hostile]") {
    const auto status = [](const json& fields) {
        return app::run::warmPoolStatus({{"status", fields}});
    };
    app::run::WarmPoolStatus read;
    CHECK_NOTHROW(read = status({{"replicas", "lots"}, {"readyReplicas", 1e300}}));
    CHECK(read.replicas == 0);
    CHECK(read.ready == 0);
    read = status({{"replicas", 18446744073709551615ULL}, {"readyReplicas", -5}});
    CHECK(read.replicas == INT_MAX);
    CHECK(read.ready == 0);
    read = status({{"replicas", 4294967298LL}, {"readyReplicas", 2}});
    CHECK(read.replicas == INT_MAX);  // not 2, as a narrowing would make it
    CHECK(read.ready == 2);
    CHECK_NOTHROW(app::run::warmPoolStatus("not an object"));
    CHECK_NOTHROW(app::run::warmPoolStatus({{"status", "none"}}));

    TestHost host;  // sandbox pool NAME prints what the server's answer says
    serveExtensions(host);
    host.server.onJson("PATCH", kPools + "/py", 200,
                       {{"status", {{"replicas", "x"}, {"readyReplicas", 1e300}}}});
    host.server.on("PATCH", kTemplates + "/py", 200, "{}");
    REQUIRE(host.run({"sandbox", "pool", "py", "--size", "2"}) == 0);
    CHECK(host.out.str() == "SandboxWarmPool py in team1: 2 wanted, 0 ready\n");

    TestHost listing;  // READY as the server wrote it, a uint64 too, not wrapped to -1
    serveExtensions(listing);
    json pool = theirPool("big", "rt");
    pool["status"]["readyReplicas"] = 18446744073709551615ULL;
    listing.server.onJson("GET", kPools, 200, list({pool}));
    listing.server.onJson("GET", kTemplates, 200, list({theirTemplate("rt")}));
    REQUIRE(listing.run({"sandbox", "pool", "list"}) == 0);
    CHECK(listing.out.str().find("18446744073709551615/3") != std::string::npos);
}

TEST_CASE("a pool whose members are of other types is listed and judged without throwing",
          "[run][command][pool][hostile]") {
    TestHost host;
    serveExtensions(host);
    json odd = {{"metadata", {{"name", "odd"}, {"labels", "x"}}}, {"spec", 5}, {"status", {1}}};
    json worse = {{"metadata", "x"}, {"spec", {{"sandboxTemplateRef", "rt"}}}};
    host.server.onJson("GET", kPools, 200, list({odd, worse, theirPool("fine", "rt")}));
    host.server.onJson("GET", kTemplates, 200, list({theirTemplate("rt")}));
    REQUIRE(host.run({"sandbox", "pool", "list", "-o", "wide"}) == 0);
    INFO(host.out.str() << host.err.str());
    CHECK(host.out.str().find("odd ") != std::string::npos);
    CHECK(host.out.str().find("fine ") != std::string::npos);

    // rossoctl's labels on a pool whose other members are not what sandbox pool writes.
    const app::run::RunPodShape shape;
    json labelled = app::run::sandboxWarmPoolManifest(shape, 1, "py");
    CHECK(app::run::warmPoolWrittenByRossoctl(labelled, shape));
    labelled["spec"] = "x";
    CHECK_FALSE(app::run::warmPoolWrittenByRossoctl(labelled, shape));
    labelled = app::run::sandboxWarmPoolManifest(shape, 1, "py");
    labelled["metadata"]["annotations"] = {1, 2};
    CHECK_FALSE(app::run::warmPoolWrittenByRossoctl(labelled, shape));
    labelled = app::run::sandboxWarmPoolManifest(shape, 1, "py");
    labelled["spec"]["sandboxTemplateRef"]["name"] = "another";  // its template differs
    CHECK_FALSE(app::run::warmPoolWrittenByRossoctl(labelled, shape));
}
