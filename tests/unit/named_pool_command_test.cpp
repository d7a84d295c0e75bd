// Warm pools by name (issue 33): `sandbox pool NAME` makes and resizes one without touching
// what rossoctl did not make, `sandbox pool list` lists every SandboxWarmPool with its shape,
// and `sandbox run --pool=NAME` takes from one, whoever made it, or says why it cannot.
#include <catch2/catch.hpp>

#include "conventions.hpp"
#include "json_fixtures.hpp"
#include "rossoctl/app/run/named_pool.hpp"
#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/model/egress_gate.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::statusBody;
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

// A pool and template as `sandbox pool NAME` writes them.
json ourPool(const std::string& name, const app::run::RunPodShape& shape, int ready) {
    json pool = app::run::sandboxWarmPoolManifest(shape, 2, name);
    pool["metadata"]["namespace"] = "team1";
    pool["metadata"]["creationTimestamp"] = "2023-11-14T21:00:00Z";
    pool["status"] = {{"replicas", 2}, {"readyReplicas", ready}};
    return pool;
}
json ourTemplate(const std::string& name, const app::run::RunPodShape& shape) {
    json object = app::run::sandboxTemplateManifest(shape, 3600, name);
    object["metadata"]["namespace"] = "team1";
    return object;
}

// As upstream's docs write them: a template of its own container name and work volume, and a
// pool that refers to it; neither carries rossoctl's labels.
json upstreamTemplate(const std::string& name, bool mountsData = true) {
    json container = {{"name", "python-runtime"},
                      {"image", "registry.example/python-runtime-sandbox:v1"},
                      {"workingDir", "/data"},
                      {"resources", {{"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}}}};
    if (mountsData) container["volumeMounts"] = {{{"name", "data"}, {"mountPath", "/data"}}};
    return {{"apiVersion", "extensions.agents.x-k8s.io/v1beta1"},
            {"kind", "SandboxTemplate"},
            {"metadata", {{"name", name}, {"namespace", "team1"}}},
            {"spec",
             {{"podTemplate",
               {{"spec",
                 {{"runtimeClassName", "gvisor"},
                  {"containers", {container}},
                  {"volumes", {{{"name", "data"}, {"emptyDir", json::object()}}}}}}}}}}};
}
json upstreamPool(const std::string& name, const std::string& templateName) {
    return {
        {"apiVersion", "extensions.agents.x-k8s.io/v1beta1"},
        {"kind", "SandboxWarmPool"},
        {"metadata",
         {{"name", name}, {"namespace", "team1"}, {"creationTimestamp", "2023-11-14T20:00:00Z"}}},
        {"spec", {{"replicas", 3}, {"sandboxTemplateRef", {{"name", templateName}}}}},
        {"status", {{"replicas", 3}, {"readyReplicas", 3}}}};
}

app::run::RunPodShape busybox() {
    app::run::RunPodShape shape;
    shape.image = "busybox:1.36";
    return shape;
}

}  // namespace

TEST_CASE("sandbox pool list: every help example parses and validates", "[run][command][pool]") {
    testing::checkHelpExamples({"sandbox", "pool", "list"});
}

TEST_CASE("sandbox pool NAME rejects a bad name before sending anything", "[run][command][pool]") {
    testing::checkUsageErrors({
        {"sandbox", "pool", "Bad_Name", "--size", "1"},
        {"sandbox", "pool", "py", "--size", "1", "--bare-pods"},
        {"sandbox", "pool", "py"},  // --size stays required
        {"sandbox", "pool", "list", "-o", "xml"},
    });
}

TEST_CASE("sandbox pool NAME makes the template and pool under that name", "[run][command][pool]") {
    TestHost host;
    serveExtensions(host);
    host.server.on("PATCH", kTemplates + "/py", 200, "{}");
    host.server.onJson("PATCH", kPools + "/py", 200,
                       {{"status", {{"replicas", 2}, {"readyReplicas", 0}}}});
    REQUIRE(host.run({"sandbox", "pool", "py", "--size", "2", "--image", "busybox:1.36"}) == 0);
    CHECK(host.out.str() == "SandboxWarmPool py in team1: 2 wanted, 0 ready\n");
    // Both looked at first (nothing of someone else's is overwritten), the namespace read for
    // its egress gate, then both written.
    CHECK(host.sent() ==
          std::vector<std::string>{"GET /apis/extensions.agents.x-k8s.io", "GET " + kPools + "/py",
                                   "GET " + kTemplates + "/py", "GET /api/v1/namespaces/team1",
                                   "PATCH " + kTemplates + "/py", "PATCH " + kPools + "/py"});
    const json pool = json::parse(host.server.requestsTo("PATCH", kPools + "/py").front().body);
    CHECK(pool["metadata"]["name"] == "py");
    CHECK(pool["spec"]["sandboxTemplateRef"]["name"] == "py");
    CHECK(pool["spec"]["replicas"] == 2);
    const json made = json::parse(host.server.requestsTo("PATCH", kTemplates + "/py").front().body);
    CHECK(made["spec"]["podTemplate"]["spec"]["containers"][0]["image"] == "busybox:1.36");
    CHECK_FALSE(made["spec"]["podTemplate"]["spec"].contains("initContainers"));  // no project

    TestHost unnamed;  // without NAME: named after the shape, and looked at first the same way
    serveExtensions(unnamed);
    const std::string derived = app::run::warmPoolName(app::run::RunPodShape{});
    unnamed.server.on("PATCH", kTemplates + "/" + derived, 200, "{}");
    unnamed.server.on("PATCH", kPools + "/" + derived, 200, "{}");
    REQUIRE(unnamed.run({"sandbox", "pool", "--size", "1"}) == 0);
    CHECK(unnamed.sent().size() == 6);
    CHECK(unnamed.out.str() == "SandboxWarmPool " + derived + " in team1: 1 wanted, 0 ready\n");
}

TEST_CASE("a pool in a project starts its spares with the project's egress gate",
          "[run][command][pool][gate]") {
    // A claimed spare is someone's sandbox: without the gate verify leaves its egress unproven.
    TestHost host;
    serveExtensions(host);
    host.server.on("GET", "/api/v1/namespaces/team1", 200,
                   R"({"metadata":{"name":"team1","annotations":)"
                   R"({"rossoctl.dev/gate-image":"registry.local/busybox:1.36"}}})");
    host.server.on("PATCH", kTemplates + "/py", 200, "{}");
    host.server.on("PATCH", kPools + "/py", 200, "{}");
    REQUIRE(host.run({"sandbox", "pool", "py", "--size", "1", "--image", "python:3.12"}) == 0);
    const json made = json::parse(host.server.requestsTo("PATCH", kTemplates + "/py").front().body);
    const json& spec = made["spec"]["podTemplate"]["spec"];
    REQUIRE(spec["initContainers"].size() == 1);
    CHECK(spec["initContainers"][0] == model::egressGateContainer("registry.local/busybox:1.36"));
    CHECK(model::egressGateMismatch(spec, "registry.local/busybox:1.36").empty());
}

TEST_CASE("sandbox pool NAME resizes its pool on its own shape, refuses another",
          "[run][command][pool]") {
    TestHost host;
    serveExtensions(host);
    host.server.onJson("GET", kPools + "/py", 200, ourPool("py", busybox(), 1));
    host.server.onJson("GET", kTemplates + "/py", 200, ourTemplate("py", busybox()));
    host.server.on("PATCH", kTemplates + "/py", 200, "{}");
    host.server.on("PATCH", kPools + "/py", 200, "{}");
    // No --image: the pool's busybox, not the default image.
    REQUIRE(host.run({"sandbox", "pool", "py", "--size", "5"}) == 0);
    const json made = json::parse(host.server.requestsTo("PATCH", kTemplates + "/py").front().body);
    CHECK(made["spec"]["podTemplate"]["spec"]["containers"][0]["image"] == "busybox:1.36");
    CHECK_FALSE(made["spec"]["podTemplate"]["spec"].contains("initContainers"));  // no project
    CHECK(json::parse(
              host.server.requestsTo("PATCH", kPools + "/py").front().body)["spec"]["replicas"] ==
          5);

    TestHost other;
    serveExtensions(other);
    other.server.onJson("GET", kPools + "/py", 200, ourPool("py", busybox(), 1));
    other.server.onJson("GET", kTemplates + "/py", 200, ourTemplate("py", busybox()));
    CHECK(other.run({"sandbox", "pool", "py", "--size", "5", "--image", "alpine:3", "--cpu",
                     "0.5"}) == kExitError);
    // 0.5 is the pool's 500m: only the image differs.
    CHECK(other.err.str() ==
          "error: SandboxWarmPool py in team1 keeps another shape: --image alpine:3 (the pool's: "
          "busybox:1.36); drop that flag to resize it, or empty it first (--size 0) to change "
          "its shape\n");
    CHECK(other.server.writes().empty());
}

TEST_CASE("sandbox pool NAME leaves a pool or template rossoctl did not make alone",
          "[run][command][pool]") {
    for (const bool poolIsTheirs : {true, false}) {
        TestHost host;
        serveExtensions(host);
        if (poolIsTheirs) host.server.onJson("GET", kPools + "/py", 200, upstreamPool("py", "py"));
        host.server.onJson("GET", kTemplates + "/py", 200, upstreamTemplate("py"));
        host.server.on("DELETE", "*", 200, "{}");
        for (const std::string size : {"3", "0"}) {
            INFO("pool theirs: " << poolIsTheirs << ", --size " << size);
            CHECK(host.run({"sandbox", "pool", "py", "--size", size}) == kExitError);
            CHECK(host.err.str().find(poolIsTheirs
                                          ? "SandboxWarmPool py in team1 was not made by "
                                            "rossoctl sandbox pool: it is left alone"
                                          : "SandboxTemplate py in team1 was not made "
                                            "by rossoctl sandbox pool: it is left alone") !=
                  std::string::npos);
            CHECK(host.server.writes().empty());
        }
    }
}

TEST_CASE("sandbox pool NAME --size 0 deletes its pool and template; none there is no error",
          "[run][command][pool]") {
    TestHost host;
    serveExtensions(host);
    host.server.onJson("GET", kPools + "/py", 200, ourPool("py", busybox(), 1));
    host.server.onJson("GET", kTemplates + "/py", 200, ourTemplate("py", busybox()));
    host.server.on("DELETE", kPools + "/py", 200, "{}");
    host.server.on("DELETE", kTemplates + "/py", 200, "{}");
    REQUIRE(host.run({"sandbox", "pool", "py", "--size", "0"}) == 0);
    CHECK(host.server.writes() ==
          std::vector<std::string>{"DELETE " + kPools + "/py", "DELETE " + kTemplates + "/py"});
    CHECK(host.out.str() == "SandboxWarmPool py in team1: deleted (with its template)\n");

    TestHost none;
    serveExtensions(none);
    REQUIRE(none.run({"sandbox", "pool", "py", "--size", "0"}) == 0);
    CHECK(none.server.writes().empty());
    CHECK(none.out.str() == "SandboxWarmPool py in team1: not there, nothing to delete\n");
}

TEST_CASE("sandbox pool NAME needs SandboxWarmPool: no bare pods under a name",
          "[run][command][pool]") {
    TestHost host;  // the extensions answer 404
    CHECK(host.run({"sandbox", "pool", "py", "--size", "2"}) == kExitError);
    CHECK(host.err.str().find("a named pool is a SandboxWarmPool, which this cluster does not "
                              "serve") != std::string::npos);
    CHECK(host.server.writes().empty());
}

TEST_CASE("sandbox pool list shows each pool's ready/wanted and its template's shape",
          "[run][command][pool]") {
    TestHost host;
    serveExtensions(host);
    json evil = upstreamPool("evil", "gone");  // its template is not there
    evil["metadata"]["name"] = "evil\x1b]0;owned\x07";
    host.server.onJson(
        "GET", kPools, 200,
        list({upstreamPool("upstream", "python-runtime"), ourPool("py", busybox(), 1), evil}));
    host.server.onJson("GET", kTemplates, 200,
                       list({upstreamTemplate("python-runtime"), ourTemplate("py", busybox())}));
    REQUIRE(host.run({"sandbox", "pool", "list"}) == 0);
    INFO(host.out.str());
    const std::string out = host.out.str();
    CHECK(out.find("NAME") == 0);
    CHECK(out.find("READY") != std::string::npos);
    CHECK(out.find("RUNTIME-CLASS") != std::string::npos);
    CHECK(out.find("TEMPLATE") == std::string::npos);  // -o wide only
    // In name order; escape sequences in a name are shown, not run.
    CHECK(out.find("evil\\x1b]0;owned\\x07   3/3") != std::string::npos);
    CHECK(out.find("<no template>") != std::string::npos);
    CHECK(out.find('\x1b') == std::string::npos);
    CHECK(out.find("py ") < out.find("upstream "));
    CHECK(out.find("1/2     busybox:1.36") != std::string::npos);
    CHECK(out.find("registry.example/python-runtime-sandbox:v1") != std::string::npos);
    CHECK(out.find(" gvisor ") != std::string::npos);
    CHECK(host.sent() == std::vector<std::string>{"GET /apis/extensions.agents.x-k8s.io",
                                                  "GET " + kPools, "GET " + kTemplates});

    TestHost wide;
    serveExtensions(wide);
    wide.server.onJson("GET", kPools, 200, list({upstreamPool("upstream", "python-runtime")}));
    wide.server.onJson("GET", kTemplates, 200, list({upstreamTemplate("python-runtime")}));
    REQUIRE(wide.run({"sandbox", "pool", "list", "-o", "wide"}) == 0);
    CHECK(wide.out.str().find("python-runtime") != std::string::npos);
    CHECK(wide.out.str().find("/data") != std::string::npos);

    TestHost names;
    serveExtensions(names);
    names.server.onJson("GET", kPools, 200, list({upstreamPool("upstream", "python-runtime")}));
    REQUIRE(names.run({"sandbox", "pool", "list", "-o", "name"}) == 0);
    CHECK(names.out.str() == "sandboxwarmpool.extensions.agents.x-k8s.io/upstream\n");
    CHECK(names.sent().size() == 2);  // no template LIST: -o name shows none of it

    TestHost asJson;
    serveExtensions(asJson);
    asJson.server.onJson("GET", kPools, 200, list({upstreamPool("upstream", "python-runtime")}));
    REQUIRE(asJson.run({"sandbox", "pool", "list", "-o", "json"}) == 0);
    const json printed = testing::printedJson(asJson.out.str());
    CHECK(printed["kind"] == "List");
    REQUIRE(printed["items"].size() == 1);
    CHECK(printed["items"][0]["kind"] == "SandboxWarmPool");
    CHECK(printed["items"][0]["spec"]["sandboxTemplateRef"]["name"] == "python-runtime");
}

TEST_CASE("sandbox pool list -A lists every namespace's pools under NAMESPACE",
          "[run][command][pool]") {
    TestHost host;
    serveExtensions(host);
    json other = upstreamPool("upstream", "python-runtime");
    other["metadata"]["namespace"] = "team2";
    host.server.onJson("GET", "/apis/extensions.agents.x-k8s.io/v1beta1/sandboxwarmpools", 200,
                       list({other}));
    host.server.onJson("GET", "/apis/extensions.agents.x-k8s.io/v1beta1/sandboxtemplates", 200,
                       list({}));
    REQUIRE(host.run({"sandbox", "pool", "ls", "-A"}) == 0);
    CHECK(host.out.str().find("NAMESPACE") == 0);
    CHECK(host.out.str().find("team2") != std::string::npos);

    TestHost empty;
    serveExtensions(empty);
    empty.server.onJson("GET", kPools, 200, list({}));
    empty.server.onJson("GET", kTemplates, 200, list({}));
    REQUIRE(empty.run({"sandbox", "pool", "list"}) == 0);
    CHECK(empty.out.str().empty());
    CHECK(empty.err.str().find("No warm pools found in namespace \"team1\".") == 0);

    TestHost unserved;  // no extensions: a note, nothing listed, exit 0
    REQUIRE(unserved.run({"sandbox", "pool", "list"}) == 0);
    CHECK(unserved.err.str().find("is not served here") != std::string::npos);

    TestHost forbidden;
    serveExtensions(forbidden);
    forbidden.server.on("GET", kPools, 403,
                        statusBody(403, "Forbidden", "sandboxwarmpools is forbidden"));
    CHECK(forbidden.run({"sandbox", "pool", "list"}) == kExitError);
    CHECK(forbidden.err.str() == "Error from server (Forbidden): sandboxwarmpools is forbidden\n");
}

TEST_CASE("sandbox run --pool NAME: parsed as the pool's name only before --",
          "[run][command][pool][parse]") {
    struct Case {
        std::vector<std::string> args;
        std::vector<std::string> pool;     // what --pool received
        std::vector<std::string> command;  // the command's words
    };
    for (const auto& c : std::vector<Case>{
             {{"--pool", "--", "python3", "-V"}, {""}, {"python3", "-V"}},
             {{"--pool", "py", "--", "python3", "-V"}, {"py"}, {"python3", "-V"}},
             {{"--pool=py", "--", "python3"}, {"py"}, {"python3"}},
             {{"--pool=py", "python3"}, {"py"}, {"python3"}},
             // No --: the word is the command's, as before --pool took a name.
             {{"--pool", "python3", "main.py"}, {""}, {"python3", "main.py"}},
             {{"--pool", "--image", "busybox", "--", "true"}, {""}, {"true"}},
         }) {
        TestHost host;
        std::vector<std::string> line = {"sandbox", "run"};
        line.insert(line.end(), c.args.begin(), c.args.end());
        std::ostringstream out, err;
        std::string shown = "rossoctl";
        for (const auto& word : line) shown += " " + word;
        INFO(shown);
        REQUIRE(commands::parseCommandLine(host.root(), line, out, err) == -1);
        const CLI::App* run = host.root().get_subcommand("sandbox")->get_subcommand("run");
        CHECK(run->get_option("--pool")->results() == c.pool);
        CHECK(run->get_option("command")->results() == c.command);
    }
}

TEST_CASE("sandbox run --pool=NAME: a pool that is not there is named with those that are",
          "[run][command][pool]") {
    TestHost host;
    serveExtensions(host);
    json evil = upstreamPool("x", "x");
    evil["metadata"]["name"] = "evil\x1b[2J";
    host.server.onJson("GET", kPools, 200, list({upstreamPool("upstream", "t"), evil}));
    CHECK(host.run({"sandbox", "run", "--pool=nope", "--", "true"}) == app::run::kExitRunFailed);
    CHECK(host.err.str() ==
          "error: SandboxWarmPool nope not found in team1; pools in team1: evil\\x1b[2J, upstream "
          "(rossoctl sandbox pool list -n team1)\n");
    CHECK(host.server.writes().empty());

    TestHost none;
    serveExtensions(none);
    none.server.onJson("GET", kPools, 200, list({}));
    CHECK(none.run({"sandbox", "run", "--pool", "nope", "--", "true"}) == app::run::kExitRunFailed);
    CHECK(none.err.str().find("there is no SandboxWarmPool in team1; make one with: rossoctl "
                              "sandbox pool NAME -n team1 --size N") != std::string::npos);
}

TEST_CASE("sandbox run --pool=NAME: a shape flag the pool's pods do not have is named",
          "[run][command][pool]") {
    TestHost host;
    serveExtensions(host);
    host.server.onJson("GET", kPools + "/upstream", 200, upstreamPool("upstream", "rt"));
    host.server.onJson("GET", kTemplates + "/rt", 200, upstreamTemplate("rt"));
    CHECK(host.run({"sandbox", "run", "--pool=upstream", "--image", "busybox:1.36", "--memory",
                    "1024Mi", "--runtime-class", "kata", "--", "true"}) ==
          app::run::kExitRunFailed);
    // 1024Mi is the pool's 1Gi; the image and the runtime class are not its.
    CHECK(host.err.str() ==
          "error: SandboxWarmPool upstream in team1 does not match this run: --image busybox:1.36 "
          "(the pool's: registry.example/python-runtime-sandbox:v1); --runtime-class kata (the "
          "pool's: gvisor); drop those flags to run on its pods as they are, or take another "
          "pool (rossoctl sandbox pool list -n team1)\n");
    CHECK(host.server.writes().empty());  // nothing claimed
}

TEST_CASE("sandbox run --pool=NAME: the work dir must be one of the pool's mounts",
          "[run][command][pool]") {
    TestHost host;
    serveExtensions(host);
    host.server.onJson("GET", kPools + "/upstream", 200, upstreamPool("upstream", "rt"));
    host.server.onJson("GET", kTemplates + "/rt", 200, upstreamTemplate("rt"));
    CHECK(host.run({"sandbox", "run", "--pool=upstream", "--workdir", "/workspace", "--",
                    "true"}) == app::run::kExitRunFailed);
    CHECK(host.err.str().find("its pods mount nothing at /workspace, where the run's files go; "
                              "give --workdir one of its mounts: /data") != std::string::npos);
    CHECK(host.server.writes().empty());

    TestHost bare;
    serveExtensions(bare);
    bare.server.onJson("GET", kPools + "/upstream", 200, upstreamPool("upstream", "rt"));
    bare.server.onJson("GET", kTemplates + "/rt", 200, upstreamTemplate("rt", false));
    CHECK(bare.run({"sandbox", "run", "--pool=upstream", "--", "true"}) ==
          app::run::kExitRunFailed);
    CHECK(bare.err.str().find("mount an emptyDir in its template (SandboxTemplate rt)") !=
          std::string::npos);
    CHECK(bare.server.writes().empty());
}

TEST_CASE("sandbox run --pool=NAME: bad names and clusters without SandboxWarmPool",
          "[run][command][pool]") {
    TestHost bad;
    CHECK(bad.run({"sandbox", "run", "--pool=Bad_Name", "--", "true"}) == app::run::kExitRunFailed);
    CHECK(bad.server.requests.empty());
    CHECK(bad.err.str().rfind("error: ", 0) == 0);

    TestHost unserved;  // the extensions answer 404
    CHECK(unserved.run({"sandbox", "run", "--pool=py", "--", "true"}) == app::run::kExitRunFailed);
    CHECK(unserved.err.str().find("--pool=py takes from a SandboxWarmPool, which this cluster "
                                  "does not serve") != std::string::npos);
    CHECK(unserved.server.writes().empty());
}

TEST_CASE("the template's shape is read defensively", "[run][pool]") {
    CHECK_FALSE(app::run::templateShape(json::object()));
    CHECK_FALSE(app::run::templateShape({{"spec", {{"podTemplate", {{"spec", "x"}}}}}}));
    json hostile = upstreamTemplate("rt");
    hostile["spec"]["podTemplate"]["spec"]["containers"][0]["image"] = 7;
    hostile["spec"]["podTemplate"]["spec"]["containers"][0]["resources"] = "lots";
    hostile["spec"]["podTemplate"]["spec"]["containers"][0]["volumeMounts"] = {1, "x"};
    const auto shape = app::run::templateShape(hostile);
    REQUIRE(shape);
    CHECK(shape->shape.image.empty());
    CHECK(shape->shape.cpu.empty());
    CHECK(shape->mounts.empty());
    CHECK(shape->container == "python-runtime");
}

TEST_CASE("completion offers warm pool names for sandbox pool NAME, never a server's invention",
          "[run][command][pool][completion]") {
    TestHost host;
    json evil = upstreamPool("x", "t");
    evil["metadata"]["name"] = "a; rm -rf ~";
    host.server.onJson("GET", kPools, 200, list({upstreamPool("upstream", "t"), evil}));
    REQUIRE(host.run({"__complete", "warm-pools"}) == 0);
    CHECK(host.out.str() == "upstream\n");

    TestHost script;
    REQUIRE(script.run({"completion", "bash"}) == 0);
    const std::string bash = script.out.str();
    const size_t line = bash.find("\"sandbox pool\")");
    REQUIRE(line != std::string::npos);
    const std::string poolLine = bash.substr(line, bash.find('\n', line) - line);
    CHECK(poolLine.find("subs=\"list delete\"") != std::string::npos);
    CHECK(poolLine.find("dyn=\"warm-pools\"") != std::string::npos);
}
