// The agents commands end to end against a scripted server: what they send, in what order,
// and that bad input sends nothing.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "kube_fakes.hpp"
#include "registry.hpp"
#include "temp_dir.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::FakeClock;
using rossoctl::testing::FakeServer;
using rossoctl::testing::FakeTransport;

namespace {

// A CommandHost whose Context talks to a FakeServer; run() parses argv like main does.
class TestHost : public commands::CommandHost {
  public:
    TestHost() {
        globals_.config.server = "https://api.test:6443";
        globals_.config.token = "t0ken";
        globals_.config.namespaceName = "team1";
        root_.fallthrough();
        commands::registerGroups(root_, *this);
    }
    app::Context& context() override {
        if (!context_) {
            kube::Environment env;
            env.getenv = [](const std::string&) { return std::optional<std::string>{}; };
            env.inClusterDir = "/nonexistent";
            context_ = std::make_unique<app::Context>(
                app::Streams{in_, out, err}, globals_, clock, env,
                [this](const kube::RestConfig&, const kube::CancelFlag*) {
                    return std::make_unique<FakeTransport>(server);
                },
                nullptr);
        }
        return *context_;
    }
    CLI::App& root() override { return root_; }

    int run(std::vector<std::string> args) {
        std::vector<const char*> argv{"rossoctl"};
        for (const auto& arg : args) argv.push_back(arg.c_str());
        try {
            root_.parse(static_cast<int>(argv.size()), argv.data());
        } catch (const CLI::ParseError& e) {
            return kExitUsage;
        }
        return exitCode();
    }
    // Discovery answers, in the order the command asks.
    void sandboxGroup() {
        server.reply(200, R"({"kind":"APIGroup","name":"agents.x-k8s.io","versions":[)"
                          R"({"version":"v1beta1"},{"version":"v1alpha1"}],)"
                          R"("preferredVersion":{"version":"v1beta1"}})");
    }
    void runtimeGroup(bool served = true) {
        if (served)
            server.reply(200, R"({"kind":"APIGroup","name":"agent.rossoctl.dev",)"
                              R"("versions":[{"version":"v1alpha1"}]})");
        else
            server.reply(404, R"({"kind":"Status","code":404,"reason":"NotFound"})");
    }
    void serveGroups() {
        sandboxGroup();
        runtimeGroup();
    }
    std::vector<std::string> sent() const {
        std::vector<std::string> lines;
        for (const auto& request : server.requests) {
            std::string path = request.url.substr(std::string("https://api.test:6443").size());
            lines.push_back(request.method + " " + path.substr(0, path.find('?')));
        }
        return lines;
    }

    FakeClock clock;
    FakeServer server;
    std::ostringstream out, err;

  private:
    std::istringstream in_;
    app::GlobalOptions globals_;
    CLI::App root_{"rossoctl"};
    std::unique_ptr<app::Context> context_;
};

const std::string kNotFound = R"({"kind":"Status","code":404,"reason":"NotFound"})";

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
    host.server.reply(200, R"({"metadata":{"name":"team1","annotations":)"
                           R"({"rossoctl.dev/default-lifetime":"2h"}}})");
    REQUIRE(host.run(importArgs({"--envVarsFile", envFile, "--env", "MCP_URL=http://flag",
                                 "--dry-run=client", "-o", "json"})) == 0);
    for (const auto& request : host.server.requests) CHECK(request.method == "GET");
    json list = json::parse(host.out.str());
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

TEST_CASE("agents import refuses an existing agent and overwrites nothing", "[agents]") {
    TestHost host;
    host.serveGroups();
    host.server.reply(200, R"({"metadata":{"name":"team1"}})");               // namespace
    host.server.reply(200, R"({"metadata":{"name":"orders","labels":{}}})");  // a deployment
    for (int i = 0; i < 3; ++i) host.server.reply(404, kNotFound);            // sts, job, sandbox
    CHECK(host.run(importArgs({})) == kExitError);
    CHECK(host.err.str() ==
          "error: agent \"orders\" already exists in namespace \"team1\"; delete it first with "
          "\"rossoctl agents delete orders -n team1\"\n");
    for (const auto& request : host.server.requests) CHECK(request.method == "GET");
}

TEST_CASE("agents import creates the workload then the AgentRuntime", "[agents]") {
    TestHost host;
    host.runtimeGroup();
    host.sandboxGroup();
    for (int i = 0; i < 5; ++i) host.server.reply(404, kNotFound);  // 4 types + runtime
    host.server.reply(200, R"({"items":[]})");                      // limitranges
    host.server.reply(201, R"({"metadata":{"name":"orders"}})");
    host.server.reply(201, R"({"metadata":{"name":"orders"}})");
    REQUIRE(host.run({"agents", "import", "from-image", "--name", "orders", "--container-image",
                      "nginx:1.27", "--deployment-type", "deployment"}) == 0);
    auto sent = host.sent();
    REQUIRE(sent.size() == 10);
    CHECK(sent[7] == "GET /api/v1/namespaces/team1/limitranges");
    CHECK(sent[8] == "POST /apis/apps/v1/namespaces/team1/deployments");
    CHECK(sent[9] == "POST /apis/agent.rossoctl.dev/v1alpha1/namespaces/team1/agentruntimes");
    CHECK(host.out.str() ==
          "deployment.apps/orders created\nagentruntime.agent.rossoctl.dev/orders created\n");
    CHECK(host.err.str().find("rossoctl agents wait orders -n team1") != std::string::npos);
}

TEST_CASE("agents import says what exists when the AgentRuntime cannot be created", "[agents]") {
    TestHost host;
    host.runtimeGroup();
    host.sandboxGroup();
    for (int i = 0; i < 5; ++i) host.server.reply(404, kNotFound);
    host.server.reply(200, R"({"items":[]})");  // limitranges
    host.server.reply(201, R"({"metadata":{"name":"orders"}})");
    host.server.reply(403, R"({"kind":"Status","code":403,"reason":"Forbidden",)"
                           R"("message":"agentruntimes is forbidden"})");
    CHECK(host.run({"agents", "import", "from-image", "--name", "orders", "--containerImage",
                    "nginx"}) == kExitError);
    CHECK(host.err.str().find("created deployment.apps/orders, but creating "
                              "agentruntime.agent.rossoctl.dev/orders failed") !=
          std::string::npos);
}

TEST_CASE("agents import warns once and writes the workload alone without the CRD", "[agents]") {
    TestHost host;
    host.runtimeGroup(/*served=*/false);
    host.sandboxGroup();
    for (int i = 0; i < 4; ++i) host.server.reply(404, kNotFound);
    host.server.reply(200, R"({"items":[]})");  // limitranges
    host.server.reply(201, R"({"metadata":{"name":"orders"}})");
    REQUIRE(host.run({"agents", "import", "from-image", "--name", "orders", "--containerImage",
                      "nginx", "--dry-run=server"}) == 0);
    CHECK(host.server.last().url.find("dryRun=All") != std::string::npos);
    CHECK(host.out.str() == "deployment.apps/orders created (server dry run)\n");
    CHECK(host.err.str().rfind("Warning: the AgentRuntime API", 0) == 0);
}

TEST_CASE("agents wait follows a watch until the sandbox is Ready", "[agents]") {
    TestHost host;
    host.sandboxGroup();
    host.server.reply(404, kNotFound);  // deployment
    host.server.reply(404, kNotFound);  // statefulset
    host.server.reply(404, kNotFound);  // job
    host.server.reply(200, R"({"metadata":{"name":"orders","resourceVersion":"5",)"
                           R"("labels":{"app.kubernetes.io/managed-by":"rossoctl"}}})");
    json ready = {
        {"metadata",
         {{"name", "orders"}, {"namespace", "team1"}, {"uid", "u1"}, {"resourceVersion", "6"}}},
        {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    host.server.stream({R"({"type":"MODIFIED","object":{"metadata":{"resourceVersion":"6"}}})"
                        "\n",
                        json{{"type", "MODIFIED"}, {"object", ready}}.dump() + "\n"});
    // Ready=True is believed only with the pod it describes there and Ready.
    json pod = {{"metadata", {{"name", "orders"}, {"ownerReferences", {{{"uid", "u1"}}}}}},
                {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    host.server.reply(
        200, json{{"metadata", {{"resourceVersion", "7"}}}, {"items", json::array({pod})}}.dump());
    REQUIRE(host.run({"agents", "wait", "orders", "--timeout", "1m"}) == 0);
    const auto& watch = host.server.requests[host.server.requests.size() - 2];
    CHECK(watch.url.find("watch=true") != std::string::npos);
    CHECK(watch.url.find("resourceVersion=5") != std::string::npos);
    CHECK(host.out.str() == "sandbox.agents.x-k8s.io/orders is ready (Ready)\n");
}

TEST_CASE("agents delete of an unknown agent says where to look", "[agents]") {
    TestHost host;
    host.server.reply(200, R"({"kind":"APIGroup","versions":[{"version":"v1alpha1"}]})");
    for (int i = 0; i < 2; ++i) host.server.reply(404, kNotFound);  // runtime, service
    host.server.reply(404, R"({"kind":"Status","code":404,"reason":"NotFound"})");  // sandboxes
    for (int i = 0; i < 3; ++i) host.server.reply(404, kNotFound);  // deploy, sts, job
    CHECK(host.run({"agents", "delete", "ghost"}) == kExitError);
    CHECK(host.err.str().find("agent \"ghost\" not found in namespace \"team1\"") !=
          std::string::npos);
    for (const auto& request : host.server.requests) CHECK(request.method == "GET");
}
