// sandbox run and Ctrl-C: the exit is 130 (Interrupted) wherever the run was, with -o json
// too, never 125 (rossoctl's own failure); -o json's report says it was interrupted.
#include <catch2/catch.hpp>

#include "rossoctl/app/run/runner.hpp"
#include "rossoctl/app/run/warm_pool.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

namespace {

const std::string kPods = "/api/v1/namespaces/team1/pods";
const std::string kRunPod = "rossoctl-run-00000001";

json runningPod() {
    return {
        {"metadata", {{"name", kRunPod}, {"namespace", "team1"}, {"uid", "uid-run"}}},
        {"status",
         {{"phase", "Running"},
          {"containerStatuses", {{{"name", "run"}, {"state", {{"running", json::object()}}}}}}}}};
}

}  // namespace

TEST_CASE("sandbox run -o json: Ctrl-C while the command prints exits 130, reported Interrupted",
          "[run][command][ended][interrupt]") {
    TestHost host;
    host.server.onJson("POST", kPods, 201, runningPod());
    host.server.onJson(
        "GET", kPods, 200,
        {{"kind", "List"}, {"metadata", {{"resourceVersion", "10"}}}, {"items", {runningPod()}}});
    host.server.on("DELETE", kPods + "/" + kRunPod, 200, "{}");
    // The command prints and goes on; Ctrl-C comes while it does.
    host.server.onExec("team1", kRunPod, [&](const std::vector<std::string>&) {
        host.cancel.cancel();
        testing::ExecScript script;
        script.stdoutText = "y\ny\n";
        script.hangs = true;
        return script;
    });
    CHECK(host.run({"sandbox", "run", "-o", "json", "--", "yes"}) == 130);
    const json result = testing::printedJson(host.out.str());
    CHECK(result["exitCode"] == 130);
    CHECK(result["ended"] == json{{"reason", "Interrupted"}, {"message", "interrupted (Ctrl-C)"}});
    CHECK(result["stdout"] == "y\ny\n");
    CHECK(host.err.str() == "interrupted; pod " + kRunPod + " deleted\n");
    CHECK(host.server.requestsTo("DELETE", kPods + "/" + kRunPod).size() == 1);
}

TEST_CASE("sandbox run: Ctrl-C before the pod (looking up --pool's warm pool) exits 130, not 125",
          "[run][command][ended][interrupt]") {
    const std::string pool =
        "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/team1/sandboxwarmpools/" +
        app::run::warmPoolName(app::run::RunPodShape{});
    for (const std::vector<std::string>& output :
         {std::vector<std::string>{}, std::vector<std::string>{"-o", "json"}}) {
        INFO(output.size());
        TestHost host;
        host.server.on("GET", "/apis/extensions.agents.x-k8s.io", 200,
                       R"({"kind":"APIGroup","name":"extensions.agents.x-k8s.io",)"
                       R"("versions":[{"version":"v1beta1"}]})");
        // Ctrl-C lands while the pool's GET is on the wire, which it then ends.
        host.server.onRequest = [&](const kube::HttpRequest& request) {
            if (request.url.find(pool) != std::string::npos) host.cancel.cancel();
        };
        host.server.onFail("GET", pool, kube::TransportError::Kind::Cancelled, "interrupted");
        std::vector<std::string> args = {"sandbox", "run", "--pool"};
        args.insert(args.end(), output.begin(), output.end());
        args.insert(args.end(), {"--", "true"});
        CHECK(host.run(args) == 130);
        CHECK(host.server.writes().empty());  // nothing was made, so nothing is left
        CHECK(host.out.str().empty());
    }
}
