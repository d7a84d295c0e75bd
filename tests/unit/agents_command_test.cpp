// The agents commands end to end against a scripted server: what they send, in what order,
// and that bad input sends nothing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "json_fixtures.hpp"
#include "temp_dir.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::statusBody;
using rossoctl::testing::TestHost;

namespace {

const std::string kNotFound = R"({"kind":"Status","code":404,"reason":"NotFound"})";
const std::string kNamespace = "/api/v1/namespaces/team1";
const std::string kLimitRanges = kNamespace + "/limitranges";
const std::string kServices = kNamespace + "/services";
const std::string kDeployments = "/apis/apps/v1/namespaces/team1/deployments";
const std::string kStatefulSets = "/apis/apps/v1/namespaces/team1/statefulsets";
const std::string kJobs = "/apis/batch/v1/namespaces/team1/jobs";
const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kRuntimes = "/apis/agent.rossoctl.dev/v1alpha1/namespaces/team1/agentruntimes";

std::vector<std::string> importArgs(std::vector<std::string> extra) {
    std::vector<std::string> args = {"agents",  "import",           "--deployment-type",
                                     "sandbox", "from-image",       "--name",
                                     "orders",  "--containerImage", "ghcr.io/acme/orders:1.4"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

}  // namespace

TEST_CASE("agents import rejects bad input before sending anything", "[agents]") {
    rossoctl::testing::TempDir dir;
    std::string unreadable = dir.path() + "/missing.env";
    std::vector<std::vector<std::string>> bad = {
        {"--name", "Orders!"},     {"--envVar", "1BAD=x"},
        {"--envVar", "NOVALUE"},   {"--port", "70000"},
        {"--cpu", "lots"},         {"--memory", "0"},
        {"--lifetime", "forever"}, {"--envVarsFile", unreadable},
        {"--dry-run=maybe"},       {"--runtime-class", "Bad_Class"},
        {"-o", "table"},
    };
    for (const auto& extra : bad) {
        TestHost host;
        INFO(extra.front());
        CHECK(host.run(importArgs(extra)) == kExitUsage);
        CHECK(host.server.requests.empty());
    }
    TestHost host;
    CHECK(host.run({"agents", "import", "from-image", "--name", "o", "--containerImage",
                    "Busybox:1.36"}) == kExitUsage);
    CHECK(host.run({"agents", "import", "--deployment-type", "pod", "from-image", "--name", "o",
                    "--containerImage", "busybox"}) == kExitUsage);
    CHECK(host.err.str().find("deployment, statefulset, job or sandbox") != std::string::npos);
    CHECK(host.server.requests.empty());
}

TEST_CASE("agents import --dry-run=client prints a List and writes nothing", "[agents]") {
    rossoctl::testing::TempDir dir;
    std::string envFile = dir.path() + "/agent.env";
    std::ofstream(envFile) << "# settings\nMCP_URL=http://file\nLOG_LEVEL=debug\n";
    TestHost host;
    host.serveGroups();
    host.server.on("GET", kNamespace, 200,
                   R"({"metadata":{"name":"team1","annotations":)"
                   R"({"rossoctl.dev/default-lifetime":"2h"}}})");
    REQUIRE(host.run(importArgs({"--envVarsFile", envFile, "--env", "MCP_URL=http://flag",
                                 "--dry-run=client", "-o", "json"})) == 0);
    for (const auto& request : host.server.requests) CHECK(request.method == "GET");
    json list = testing::printedJson(host.out.str());
    CHECK(list["kind"] == "List");
    REQUIRE(list["items"].size() == 2);
    const json& sandbox = list["items"][0];
    CHECK(sandbox["apiVersion"] == "agents.x-k8s.io/v1beta1");
    CHECK(sandbox["spec"]["podTemplate"]["spec"]["activeDeadlineSeconds"] == 7200);
    const json& env = sandbox["spec"]["podTemplate"]["spec"]["containers"][0]["env"];
    CHECK(env == json::parse(R"([{"name":"MCP_URL","value":"http://flag"},)"
                             R"({"name":"LOG_LEVEL","value":"debug"}])"));
    CHECK(list["items"][1]["kind"] == "AgentRuntime");
}

TEST_CASE("agents import writes the egress gate only into a project's sandbox", "[agents][gate]") {
    // The gate waits for the API server to be denied; only a project's default-deny denies it,
    // so elsewhere it would hold every start for its whole bound (stop 55's CI: 20 s each).
    struct Case {
        int status;
        std::string namespaceBody;
        std::string gateImage;  // "" = no gate
        std::string warning;    // on stderr, walk 7 W6
    };
    const std::vector<Case> cases = {
        {200,
         R"({"metadata":{"name":"team1","labels":{"rossoctl.dev/sandbox-project":"true"},)"
         R"("annotations":{"rossoctl.dev/gate-image":"registry.local/busybox:1.36"}}})",
         "registry.local/busybox:1.36", ""},
        {200, R"({"metadata":{"name":"team1"}})", "",
         "Warning: the sandbox gets no egress gate, so \"rossoctl sandbox verify\" will leave "
         "its egress unproven: namespace team1 is no rossoctl project (no default-deny egress, "
         "no quota): \"rossoctl project create team1 --adopt\" makes it one, then import again\n"},
        {200, R"({"metadata":{"name":"team1","labels":{"rossoctl.dev/sandbox-project":"true"}}})",
         "",
         "project team1 was made by an older rossoctl: run \"rossoctl project create team1\" "
         "again"},
        {403, R"({"kind":"Status","code":403,"reason":"Forbidden"})", "busybox:1.36", ""},
    };
    for (const auto& c : cases) {
        INFO(c.namespaceBody);
        TestHost host;
        host.serveGroups();
        host.server.on("GET", kNamespace, c.status, c.namespaceBody);
        REQUIRE(host.run(importArgs({"--lifetime", "1h", "--dry-run=client", "-o", "json"})) == 0);
        const json sandbox = testing::printedJson(host.out.str())["items"][0];
        const json& spec = sandbox["spec"]["podTemplate"]["spec"];
        if (c.warning.empty())
            CHECK(host.err.str().find("egress gate") == std::string::npos);
        else
            CHECK(host.err.str().find(c.warning) != std::string::npos);
        if (c.gateImage.empty()) {
            CHECK_FALSE(spec.contains("initContainers"));
        } else {
            REQUIRE(spec["initContainers"].size() == 1);
            CHECK(spec["initContainers"][0]["name"] == "rossoctl-egress-gate");
            CHECK(spec["initContainers"][0]["image"] == c.gateImage);
        }
    }
}

TEST_CASE("agents import refuses an existing agent and overwrites nothing", "[agents]") {
    TestHost host;
    host.serveGroups();
    host.server.on("GET", kNamespace, 200, testing::kProjectNamespace);
    // A deployment "orders"; the statefulset, job and sandbox are 404.
    host.server.on("GET", kDeployments + "/orders", 200,
                   R"({"metadata":{"name":"orders","labels":{}}})");
    CHECK(host.run(importArgs({})) == kExitError);
    CHECK(host.err.str() ==
          "error: agent \"orders\" already exists in namespace \"team1\"; delete it first with "
          "\"rossoctl agents delete orders -n team1\"\n");
    CHECK(host.server.requestsTo("GET", kDeployments + "/orders").size() == 1);
    for (const auto& request : host.server.requests) CHECK(request.method == "GET");
}

TEST_CASE("agents import creates the workload then the AgentRuntime", "[agents]") {
    TestHost host;
    host.serveGroups();  // the 4 workload types and the runtime: 404, the agent is new
    host.server.on("GET", kLimitRanges, 200, R"({"items":[]})");
    host.server.on("POST", kDeployments, 201, R"({"metadata":{"name":"orders"}})");
    host.server.on("POST", kRuntimes, 201, R"({"metadata":{"name":"orders"}})");
    REQUIRE(host.run({"agents", "import", "from-image", "--name", "orders", "--container-image",
                      "nginx:1.27", "--deployment-type", "deployment"}) == 0);
    auto sent = host.sent();
    REQUIRE(sent.size() == 10);
    for (const auto& path : {kDeployments, kStatefulSets, kJobs, kSandboxes, kRuntimes})
        CHECK(std::count(sent.begin(), sent.begin() + 7, "GET " + path + "/orders") == 1);
    CHECK(sent[7] == "GET /api/v1/namespaces/team1/limitranges");
    CHECK(sent[8] == "POST /apis/apps/v1/namespaces/team1/deployments");
    CHECK(sent[9] == "POST /apis/agent.rossoctl.dev/v1alpha1/namespaces/team1/agentruntimes");
    CHECK(host.out.str() ==
          "deployment.apps/orders created\nagentruntime.agent.rossoctl.dev/orders created\n");
    CHECK(host.err.str().find("rossoctl agents wait orders -n team1") != std::string::npos);
}

TEST_CASE("agents import says what exists when the AgentRuntime cannot be created", "[agents]") {
    TestHost host;
    host.serveGroups();
    host.server.on("GET", kLimitRanges, 200, R"({"items":[]})");
    host.server.on("POST", kDeployments, 201, R"({"metadata":{"name":"orders"}})");
    host.server.on("POST", kRuntimes, 403,
                   R"({"kind":"Status","code":403,"reason":"Forbidden",)"
                   R"("message":"agentruntimes is forbidden"})");
    CHECK(host.run({"agents", "import", "from-image", "--name", "orders", "--containerImage",
                    "nginx"}) == kExitError);
    CHECK(host.server.writes() ==
          std::vector<std::string>{"POST " + kDeployments, "POST " + kRuntimes});
    CHECK(host.err.str().find("created deployment.apps/orders, but creating "
                              "agentruntime.agent.rossoctl.dev/orders failed") !=
          std::string::npos);
}

TEST_CASE("agents import warns once and writes the workload alone without the CRD", "[agents]") {
    TestHost host;
    host.serveRuntimeGroup(/*served=*/false);
    host.serveSandboxGroup();
    host.server.on("GET", kLimitRanges, 200, R"({"items":[]})");
    host.server.on("POST", kDeployments, 201, R"({"metadata":{"name":"orders"}})");
    REQUIRE(host.run({"agents", "import", "from-image", "--name", "orders", "--containerImage",
                      "nginx", "--dry-run=server"}) == 0);
    CHECK(host.server.writes() == std::vector<std::string>{"POST " + kDeployments});
    CHECK(host.server.last().url.find("dryRun=All") != std::string::npos);
    CHECK(host.server.requestsTo("GET", kRuntimes + "/orders").empty());
    CHECK(host.out.str() == "deployment.apps/orders created (server dry run)\n");
    CHECK(host.err.str().rfind("Warning: the AgentRuntime API", 0) == 0);
}

TEST_CASE(
    "agents import's default lifetime: 24h if the namespace may not be read, else an "
    "error for a missing namespace or a bad annotation",
    "[agents]") {
    const auto args = importArgs({"--dry-run=client", "-o", "json"});
    const std::string ns = "/api/v1/namespaces/team1";
    TestHost forbidden;
    forbidden.serveGroups();
    forbidden.server.on("GET", ns, 403, testing::statusBody(403, "Forbidden", "no"));
    REQUIRE(forbidden.run(args) == 0);
    const json sandbox = json::parse(forbidden.out.str())["items"][0];
    CHECK(sandbox["spec"]["podTemplate"]["spec"]["activeDeadlineSeconds"] == 86400);

    // A real import needs the namespace; a client dry run does not (issue 34 point 8).
    TestHost missing;
    missing.serveGroups();
    CHECK(missing.run(importArgs({"-o", "json"})) == kExitError);
    CHECK(missing.err.str() ==
          "error: namespace \"team1\" not found; run \"rossoctl project create team1\" first\n");
    CHECK(missing.server.writes().empty());
    TestHost dryMissing;
    dryMissing.serveGroups();
    REQUIRE(dryMissing.run(args) == 0);
    CHECK(json::parse(dryMissing.out.str())["items"][0]["spec"]["podTemplate"]["spec"]
                                           ["activeDeadlineSeconds"] == 86400);

    TestHost bad;
    bad.serveGroups();
    bad.server.on("GET", ns, 200,
                  R"({"metadata":{"annotations":{"rossoctl.dev/default-lifetime":"soon"}}})");
    CHECK(bad.run(args) == kExitError);
    CHECK(bad.err.str() ==
          "error: namespace \"team1\": invalid value \"soon\" for annotation "
          "rossoctl.dev/default-lifetime: want a duration such as 30s, 2m or 1h30m; fix it or "
          "pass --lifetime\n");
    CHECK(bad.out.str().empty());
}

TEST_CASE("agents import refuses cpu a LimitRange forbids (exit 2), creating nothing", "[agents]") {
    TestHost host;
    host.serveGroups();
    host.server.on("GET", "/api/v1/namespaces/team1/limitranges", 200,
                   R"({"items":[{"metadata":{"name":"sandbox-limits"},"spec":{"limits":)"
                   R"([{"type":"Container","max":{"cpu":"2","memory":"4Gi"}}]}}]})");
    CHECK(host.run({"agents", "import", "from-image", "--name", "orders", "--containerImage",
                    "nginx", "--cpu", "4"}) == kExitUsage);
    CHECK(host.err.str() ==
          "error: --cpu 4 is more than a container may have in namespace team1 (max cpu 2, "
          "LimitRange sandbox-limits); nothing was created\n");
    CHECK(host.server.writes().empty());
}

TEST_CASE("agents import that loses the race to create the agent says it already exists",
          "[agents]") {
    TestHost host;
    host.serveGroups();
    const std::string deployments = "/apis/apps/v1/namespaces/team1/deployments";
    host.server.on("GET", deployments + "/orders", 404, kNotFound);
    host.server.on("GET", deployments + "/orders", 200, R"({"metadata":{"name":"orders"}})");
    host.server.on("GET", "/api/v1/namespaces/team1/limitranges", 200, R"({"items":[]})");
    host.server.on("POST", deployments, 409, testing::statusBody(409, "AlreadyExists", "taken"));
    CHECK(host.run({"agents", "import", "from-image", "--name", "orders", "--containerImage",
                    "nginx"}) == kExitError);
    CHECK(host.err.str() ==
          "error: agent \"orders\" already exists in namespace \"team1\"; delete it first with "
          "\"rossoctl agents delete orders -n team1\"\n");
    CHECK(host.server.writes() == std::vector<std::string>{"POST " + deployments});
}

TEST_CASE(
    "agents import names what it created before a failed create; a server dry run only "
    "reports the error",
    "[agents]") {
    const std::vector<std::string> args = {"agents", "import", "from-image",
                                           "--name", "orders", "--containerImage",
                                           "nginx",  "--port", "8080"};
    auto serve = [](TestHost& host) {
        host.serveGroups();
        host.server.on("GET", "/api/v1/namespaces/team1/limitranges", 200, R"({"items":[]})");
        host.server.on("POST", "/apis/apps/v1/namespaces/team1/deployments", 201, "{}");
        host.server.on("POST", "/api/v1/namespaces/team1/services", 500,
                       testing::statusBody(500, "InternalError", "etcd is away"));
    };
    TestHost host;
    serve(host);
    CHECK(host.run(args) == kExitError);
    CHECK(host.err.str() ==
          "error: created deployment.apps/orders, but creating service/orders failed: etcd is "
          "away; remove what was created with \"rossoctl agents delete orders -n team1\"\n");

    TestHost dryRun;
    serve(dryRun);
    auto dryRunArgs = args;
    dryRunArgs.push_back("--dry-run=server");
    CHECK(dryRun.run(dryRunArgs) == kExitError);
    CHECK(dryRun.err.str() == "Error from server (InternalError): etcd is away\n");
}

TEST_CASE("agents wait follows a watch until the sandbox is Ready", "[agents]") {
    // A reply without metadata.namespace still waits in the namespace asked, not cluster-wide.
    const bool namespaced = GENERATE(true, false);
    TestHost host;
    host.serveSandboxGroup();  // no deployment, statefulset or job "orders": 404
    json sandbox = {{"metadata",
                     {{"name", "orders"},
                      {"resourceVersion", "5"},
                      {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}}};
    if (namespaced) sandbox["metadata"]["namespace"] = "team1";
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox);
    json ready = {
        {"metadata",
         {{"name", "orders"}, {"namespace", "team1"}, {"uid", "u1"}, {"resourceVersion", "6"}}},
        {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    host.server.onStream("GET", kSandboxes + "?watch=true",
                         {R"({"type":"MODIFIED","object":{"metadata":{"resourceVersion":"6"}}})"
                          "\n",
                          json{{"type", "MODIFIED"}, {"object", ready}}.dump() + "\n"});
    // Ready=True is believed only with the pod it describes there and Ready.
    json pod = {
        {"metadata",
         {{"name", "orders"}, {"ownerReferences", {{{"uid", "u1"}, {"controller", true}}}}}},
        {"status",
         {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    const std::string pods =
        json{{"metadata", {{"resourceVersion", "7"}}}, {"items", json::array({pod})}}.dump();
    host.server.on("GET", "/api/v1/namespaces/team1/pods", 200, pods);
    const int waited = host.run({"agents", "wait", "orders", "--timeout", "1m"});
    std::string sent;
    for (const auto& line : host.server.sent()) sent += line + "\n";
    INFO(host.err.str() << sent.substr(0, 2000));
    REQUIRE(waited == 0);
    const auto watches = host.server.requestsTo("GET", kSandboxes);
    REQUIRE(watches.size() == 1);
    const auto& watch = watches.front();
    CHECK(watch.url.find("watch=true") != std::string::npos);
    CHECK(watch.url.find("resourceVersion=5") != std::string::npos);
    CHECK(host.out.str() == "sandbox.agents.x-k8s.io/orders is ready (Ready)\n");
}

TEST_CASE("agents delete of an unknown agent says where to look", "[agents]") {
    TestHost host;
    host.serveGroups();  // every part of "ghost" is 404
    CHECK(host.run({"agents", "delete", "ghost"}) == kExitError);
    CHECK(host.err.str().find("agent \"ghost\" not found in namespace \"team1\"") !=
          std::string::npos);
    for (const auto& path : {kRuntimes, kServices, kDeployments, kStatefulSets, kJobs, kSandboxes})
        CHECK(host.server.requestsTo("GET", path + "/ghost").size() == 1);
    for (const auto& request : host.server.requests) CHECK(request.method == "GET");
}

namespace {

const std::string kManagedSelector = "labelSelector=app.kubernetes.io%2Fmanaged-by%3Drossoctl";

json managedDeployment(const std::string& name) {
    return {
        {"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata",
         {{"name", name},
          {"namespace", "team1"},
          {"uid", "uid-" + name},
          {"creationTimestamp", "2023-11-14T22:00:00Z"},
          {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}},
        {"spec",
         {{"replicas", 1},
          {"template", {{"spec", {{"containers", {{{"name", "agent"}, {"image", "nginx"}}}}}}}}}},
        {"status", {{"replicas", 1}, {"readyReplicas", 1}, {"availableReplicas", 1}}}};
}

// Every workload type answers with an empty list, but deployments with `deployments`.
void serveWorkloads(TestHost& host, const std::vector<json>& deployments) {
    host.serveSandboxGroup();
    host.server.onJson("GET", "/apis/apps/v1/namespaces/team1/deployments", 200, list(deployments));
    for (const char* path :
         {"/apis/apps/v1/namespaces/team1/statefulsets", "/apis/batch/v1/namespaces/team1/jobs",
          "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes",
          "/api/v1/namespaces/team1/pods"})
        host.server.onJson("GET", path, 200, list({}));
}

}  // namespace

TEST_CASE("agents list and get: every help example parses and validates", "[agents]") {
    rossoctl::testing::checkHelpExamples({"agents", "list"});
    rossoctl::testing::checkHelpExamples({"agents", "get"});
}

TEST_CASE("agents list asks every workload type for managed agents", "[agents]") {
    TestHost host;
    serveWorkloads(host, {managedDeployment("orders")});
    REQUIRE(host.run({"agents", "list"}) == 0);
    for (const auto& request : host.server.requests) {
        CHECK(request.method == "GET");
        if (request.url.find("/apis/agents.x-k8s.io?") == std::string::npos &&
            request.url.find("/namespaces/team1/") != std::string::npos)
            CHECK(request.url.find(kManagedSelector) != std::string::npos);
    }
    CHECK(host.out.str().rfind("NAME", 0) == 0);
    CHECK(host.out.str().find("orders") != std::string::npos);

    TestHost names;
    serveWorkloads(names, {managedDeployment("orders")});
    REQUIRE(names.run({"agents", "list", "-o", "name"}) == 0);
    CHECK(names.out.str() == "deployment.apps/orders\n");

    TestHost asJson;
    serveWorkloads(asJson, {managedDeployment("orders")});
    REQUIRE(asJson.run({"agents", "list", "-o", "json"}) == 0);
    CHECK(testing::printedJson(asJson.out.str())["items"].size() == 1);
}

TEST_CASE("agents list: bad -o sends nothing; empty and 403 say so", "[agents]") {
    TestHost bad;
    CHECK(bad.run({"agents", "list", "-o", "csv"}) == kExitUsage);
    CHECK(bad.server.requests.empty());

    TestHost empty;
    for (const char* path :
         {"/apis/apps/v1/namespaces/team1/deployments",
          "/apis/apps/v1/namespaces/team1/statefulsets", "/apis/batch/v1/namespaces/team1/jobs"})
        empty.server.onJson("GET", path, 200, list({}));
    REQUIRE(empty.run({"agents", "list"}) == 0);
    CHECK(empty.err.str() == "No agents found in namespace \"team1\".\n");

    TestHost forbidden;
    forbidden.server.on("GET", "/apis/apps/v1/namespaces/team1/deployments", 403,
                        R"({"kind":"Status","code":403,"reason":"Forbidden",)"
                        R"("message":"deployments.apps is forbidden"})");
    CHECK(forbidden.run({"agents", "list"}) == kExitError);
    CHECK(forbidden.err.str() == "Error from server (Forbidden): deployments.apps is forbidden\n");
}

TEST_CASE("agents get shows the agent's type, status and pod", "[agents]") {
    TestHost host;
    serveWorkloads(host, {});
    host.server.onJson("GET", "/apis/apps/v1/namespaces/team1/deployments/orders", 200,
                       managedDeployment("orders"));
    REQUIRE(host.run({"agents", "get", "orders"}) == 0);
    CHECK(host.out.str().find("orders") != std::string::npos);
    CHECK(host.out.str().find("deployment") != std::string::npos);
    CHECK(host.server.writes().empty());

    TestHost asJson;
    serveWorkloads(asJson, {});
    asJson.server.onJson("GET", "/apis/apps/v1/namespaces/team1/deployments/orders", 200,
                         managedDeployment("orders"));
    REQUIRE(asJson.run({"agents", "get", "orders", "-o", "json"}) == 0);
    CHECK(testing::printedJson(asJson.out.str())["kind"] == "Deployment");
}

TEST_CASE("agents get: bad input sends nothing; 404 and 403 read well", "[agents]") {
    TestHost bad;
    CHECK(bad.run({"agents", "get", "Orders!"}) == kExitUsage);
    CHECK(bad.run({"agents", "get", "orders", "-o", "csv"}) == kExitUsage);
    CHECK(bad.server.requests.empty());

    TestHost missing;
    CHECK(missing.run({"agents", "get", "ghost"}) == kExitError);
    CHECK(missing.err.str().find("\"ghost\" not found in namespace \"team1\"") !=
          std::string::npos);

    TestHost forbidden;
    forbidden.server.on("GET", "/apis/apps/v1/namespaces/team1/deployments/orders", 403,
                        R"({"kind":"Status","code":403,"reason":"Forbidden",)"
                        R"("message":"deployments.apps \"orders\" is forbidden"})");
    CHECK(forbidden.run({"agents", "get", "orders"}) == kExitError);
    CHECK(forbidden.err.str().rfind("Error from server (Forbidden)", 0) == 0);
}

namespace {

json agentPart(const std::string& uid) {
    return {
        {"metadata",
         {{"name", "orders"},
          {"namespace", "team1"},
          {"uid", uid},
          {"labels",
           {{"app.kubernetes.io/managed-by", "rossoctl"}, {"app.kubernetes.io/name", "orders"}}}}}};
}

// An agent of three parts: AgentRuntime, Service and Deployment; every list is empty, so a
// wait for a part to be gone is satisfied by its first LIST (routes set before win).
void serveAgentParts(TestHost& host) {
    serveWorkloads(host, {});
    host.serveRuntimeGroup();
    host.server.onJson("GET", kRuntimes + "/orders", 200, agentPart("uid-runtime"));
    host.server.onJson("GET", kServices + "/orders", 200, agentPart("uid-service"));
    host.server.onJson("GET", kDeployments + "/orders", 200, managedDeployment("orders"));
    host.server.onJson("GET", kRuntimes, 200, list({}));
    host.server.onJson("GET", kServices, 200, list({}));
    for (const auto& path : {kRuntimes, kServices, kDeployments})
        host.server.on("DELETE", path + "/orders", 200, "{}");
}

}  // namespace

TEST_CASE("agents delete: every help example parses and bad input sends nothing",
          "[agents][command]") {
    rossoctl::testing::checkHelpExamples({"agents", "delete"});
    rossoctl::testing::checkUsageErrors({{"agents", "delete"},
                                         {"agents", "delete", "Orders!"},
                                         {"agents", "delete", "orders", "--timeout", "soon"},
                                         {"agents", "delete", "orders", "-o", "yaml"},
                                         {"agents", "delete", "pod/orders"}});
}

TEST_CASE("agents delete removes the runtime, the Service, then the workload, each by UID",
          "[agents][command]") {
    TestHost host;
    serveAgentParts(host);
    REQUIRE(host.run({"agents", "delete", "orders"}) == 0);
    CHECK(host.server.writes() == std::vector<std::string>{"DELETE " + kRuntimes + "/orders",
                                                           "DELETE " + kServices + "/orders",
                                                           "DELETE " + kDeployments + "/orders"});
    for (const auto& [path, uid] : {std::pair{kRuntimes, "uid-runtime"},
                                    {kServices, "uid-service"},
                                    {kDeployments, "uid-orders"}}) {
        const json body = json::parse(host.server.requestsTo("DELETE", path + "/orders")[0].body);
        CHECK(body["preconditions"]["uid"] == uid);
        CHECK(body["propagationPolicy"] == "Foreground");
    }
    CHECK(host.out.str() ==
          "agentruntime.agent.rossoctl.dev/orders deleted\nservice/orders deleted\n"
          "deployment.apps/orders deleted\n");

    TestHost names;
    serveAgentParts(names);
    REQUIRE(names.run({"agents", "delete", "deployment/orders", "-o", "name", "--wait=false"}) ==
            0);
    CHECK(names.out.str() ==
          "agentruntime.agent.rossoctl.dev/orders\nservice/orders\ndeployment.apps/orders\n");
}

TEST_CASE("agents delete: a workload it did not make, a refused delete, a part that stays",
          "[agents][command]") {
    TestHost foreign;
    serveWorkloads(foreign, {});
    foreign.serveRuntimeGroup(false);
    json unmanaged = managedDeployment("orders");
    unmanaged["metadata"].erase("labels");
    foreign.server.onJson("GET", kDeployments + "/orders", 200, unmanaged);
    CHECK(foreign.run({"agents", "delete", "orders"}) == kExitError);
    CHECK(foreign.err.str().find("is not an agent: it lacks the label") != std::string::npos);
    CHECK(foreign.server.writes().empty());

    TestHost refused;
    refused.server.on("DELETE", kRuntimes + "/orders", 403,
                      statusBody(403, "Forbidden", "agentruntimes \"orders\" is forbidden"));
    serveAgentParts(refused);
    CHECK(refused.run({"agents", "delete", "orders"}) == kExitError);
    CHECK(refused.err.str() ==
          "Error from server (Forbidden): agentruntimes \"orders\" is forbidden\n");
    CHECK(refused.server.writes().size() == 1);  // nothing after the refusal

    TestHost stays;
    stays.server.latency = std::chrono::milliseconds(200);  // each request moves the clock on
    stays.server.onJson("GET", kDeployments, 200, list({managedDeployment("orders")}));
    stays.server.onStream("GET", kDeployments + "?watch=true", {});
    serveAgentParts(stays);
    CHECK(stays.run({"agents", "delete", "orders", "--timeout", "5s"}) == kExitError);
    CHECK(stays.err.str() ==
          "error: deployment.apps/orders is still being deleted after 5s; check it with "
          "\"rossoctl agents get orders -n team1\"\n");
}

TEST_CASE("agents import and wait: every help example parses and validates", "[agents]") {
    rossoctl::testing::checkHelpExamples({"agents", "import", "from-image"});
    rossoctl::testing::checkHelpExamples({"agents", "wait"});
}

TEST_CASE("agents wait rejects bad input before sending anything", "[agents]") {
    rossoctl::testing::checkUsageErrors({
        {"agents", "wait"},
        {"agents", "wait", "Orders!"},
        {"agents", "wait", "orders", "--timeout", "soon"},
        {"agents", "wait", "pod/orders"},
        {"agents", "wait", "orders", "extra"},
    });
}

TEST_CASE("agents wait: a missing agent is named with its -n; a refused read is the server's",
          "[agents]") {
    TestHost missing;
    missing.serveGroups();  // every type of "ghost" is 404
    CHECK(missing.run({"agents", "wait", "ghost", "-n", "team1"}) == kExitError);
    CHECK(missing.err.str().find("agent \"ghost\" not found in namespace \"team1\"") !=
          std::string::npos);
    CHECK(missing.server.writes().empty());
    CHECK(missing.server.requestsTo("GET", kSandboxes).empty());  // no watch of nothing

    TestHost forbidden;
    forbidden.serveGroups();
    for (const auto& path : {kDeployments, kStatefulSets, kJobs, kSandboxes})
        forbidden.server.on("GET", path + "/orders", 403,
                            statusBody(403, "Forbidden", "orders is forbidden: User \"dev\""));
    CHECK(forbidden.run({"agents", "wait", "orders"}) == kExitError);
    CHECK(forbidden.err.str().find("forbidden: User \"dev\"") != std::string::npos);
    CHECK(forbidden.out.str().empty());
    CHECK(forbidden.server.writes().empty());
}

TEST_CASE("agents delete: a part replaced under it (409 on the UID) is kept and named",
          "[agents][command]") {
    TestHost host;
    host.server.on("DELETE", kServices + "/orders", 409,
                   statusBody(409, "Conflict",
                              "Precondition failed: UID in precondition: uid-svc, UID in object "
                              "meta: uid-new"));
    serveAgentParts(host);
    CHECK(host.run({"agents", "delete", "orders", "--wait=false"}) == kExitError);
    CHECK(host.err.str() ==
          "error: service/orders was replaced by a new object while rossoctl deleted the agent; "
          "the new one is kept: check it with \"rossoctl agents get orders -n team1\" and run the "
          "delete again to remove it\n");
    // The runtime went first; nothing after the replaced part is deleted.
    CHECK(host.server.writes() == std::vector<std::string>{"DELETE " + kRuntimes + "/orders",
                                                           "DELETE " + kServices + "/orders"});
}

TEST_CASE("agents wait rides out an apiserver outage that cuts its watch", "[agents][fault]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.latency = std::chrono::milliseconds(100);
    json sandbox = {{"metadata",
                     {{"name", "orders"},
                      {"namespace", "team1"},
                      {"uid", "u1"},
                      {"resourceVersion", "5"},
                      {"labels", {{"app.kubernetes.io/managed-by", "rossoctl"}}}}}};
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox);
    json ready = sandbox;
    ready["metadata"]["resourceVersion"] = "6";
    ready["status"] = {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
    // The first watch is refused (the apiserver restarts); the LIST after it sees Ready.
    host.server.onFail("GET", kSandboxes + "?watch=true", kube::TransportError::Kind::Connect,
                       "Failed to connect to api.test port 6443: Connection refused");
    host.server.onJson("GET", kSandboxes, 200,
                       json{{"metadata", {{"resourceVersion", "6"}}}, {"items", {ready}}});
    json pod = {
        {"metadata",
         {{"name", "orders"}, {"ownerReferences", {{{"uid", "u1"}, {"controller", true}}}}}},
        {"status",
         {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    host.server.onJson("GET", "/api/v1/namespaces/team1/pods", 200,
                       json{{"metadata", {{"resourceVersion", "7"}}}, {"items", {pod}}});
    const int waited = host.run({"agents", "wait", "orders", "--timeout", "1m"});
    INFO(host.err.str());
    CHECK(waited == 0);
    CHECK(host.out.str() == "sandbox.agents.x-k8s.io/orders is ready (Ready)\n");
}
