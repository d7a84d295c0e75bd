// What a newcomer read and could not parse (issue 34 point 12): a pod's two error lines with a
// literal \n between them, the apiserver's "Internal error occurred:" said twice, and verify's
// evidence "no policy isolates egress allows every destination".
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "cp_fixtures.hpp"
#include "temp_dir.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::execRan;
using rossoctl::testing::TempDir;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;

TEST_CASE("sandbox cp: the pod's error lines are joined into one line, never a literal \\n",
          "[sandbox][cp][command]") {
    TempDir local;
    std::filesystem::create_directories(local.file("data"));
    std::ofstream(local.file("data/a.txt")) << "alpha\n";
    TestHost host;
    testing::serveCpOrders(host);
    host.server.onExec("team1", "orders", execRan("d - tar\n", "", 0));
    host.server.onExec("team1", "orders",
                       execRan("",
                               "tar: data: Cannot mkdir: No space left on device\r\n"
                               "tar: Exiting with failure status due to previous errors\n",
                               2));
    CHECK(host.run({"sandbox", "cp", local.file("data"), "orders:/"}) == kExitError);
    const std::string said = host.err.str();
    INFO(said);
    CHECK(said.find("failed in the pod (exit 2): tar: data: Cannot mkdir: No space left on "
                    "device; tar: Exiting with failure status due to previous errors\n") !=
          std::string::npos);
    CHECK(said.find("\\n") == std::string::npos);
    CHECK(said.find("\\r") == std::string::npos);
    CHECK(std::count(said.begin(), said.end(), '\n') == 1);  // one line

    TestHost hostile;  // a control sequence in a line is still shown, never run
    testing::serveCpOrders(hostile);
    hostile.server.onExec("team1", "orders", execRan("d - tar\n", "", 0));
    hostile.server.onExec("team1", "orders", execRan("", "tar: \x1b]52;c;eA==\x07 bad\n", 2));
    CHECK(hostile.run({"sandbox", "cp", local.file("data"), "orders:/"}) == kExitError);
    CHECK(hostile.err.str().find("tar: \\x1b]52;c;eA==\\x07 bad") != std::string::npos);
}

TEST_CASE("\"Internal error occurred:\" is said once, however often the server wrapped it",
          "[sandbox][command]") {
    TestHost exec;  // the apiserver wraps the kubelet's wrapped exec failure
    testing::serveCpOrders(exec);
    auto failed = execRan("", "", 1);
    failed.statusBody = json{
        {"kind", "Status"},
        {"status", "Failure"},
        {"reason", "InternalError"},
        {"message",
         "Internal error occurred: Internal error occurred: error executing "
         "command in container: exec: \"nosuch\": executable file not found "
         "in $PATH"}}.dump();
    exec.server.onExec("team1", "orders", failed);
    CHECK(exec.run({"sandbox", "exec", "orders", "--", "nosuch"}) == 126);
    CHECK(exec.err.str() ==
          "error: Internal error occurred: error executing command in container: exec: "
          "\"nosuch\": executable file not found in $PATH\n");

    TestHost api;  // and in an API error's message
    api.serveSandboxGroup();
    api.server.on("GET", testing::kCpSandboxes + "/orders", 500,
                  testing::statusBody(500, "InternalError",
                                      "Internal error occurred: Internal error occurred: "
                                      "Internal error occurred: etcd is away"));
    CHECK(api.run({"sandbox", "get", "orders"}) == kExitError);
    CHECK(api.err.str() ==
          "Error from server (InternalError): Internal error occurred: etcd is away\n");
}

TEST_CASE("sandbox verify: a pod no policy limits reads as Kubernetes' default, in plain words",
          "[verify][command]") {
    TestHost host;
    // No NetworkPolicy in the namespace (queued before the fixture's two).
    host.server.onJson("GET", "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies", 200,
                       list({}));
    serveHardened(host, "none");
    CHECK(host.run({"sandbox", "verify", "orders", "--no-restart", "-o", "json"}) == 3);
    const json egress = verdicts(testing::printedJson(host.out.str()))["egress"];
    const std::string evidence = egress["static"]["evidence"].dump();
    INFO(evidence);
    CHECK(egress["static"]["result"] == "fail");
    CHECK(evidence.find("Kubernetes' default (no policy limits this pod's egress) allows every "
                        "destination on every port: beyond the project") != std::string::npos);
    CHECK(evidence.find("isolates egress allows") == std::string::npos);
}
