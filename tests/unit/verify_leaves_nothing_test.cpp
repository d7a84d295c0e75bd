// sandbox verify, as a newcomer meets it (issue 34 point 9): a pod that cannot pull its image is
// not something to wait for, every command suggested carries -n, and a --storage sandbox keeps
// no canary of verify's in the user's volume.
#include <catch2/catch.hpp>
#include <filesystem>

#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;
using namespace rossoctl::testing::verify_fixtures;
namespace fs = std::filesystem;

TEST_CASE(
    "sandbox verify on a Pending pod: an unpullable image is not waited for, and the "
    "suggested wait names the namespace",
    "[verify][command]") {
    json pod = hardenedPod("pod-uid-1");
    pod["status"] = json::parse(R"({"phase": "Pending", "containerStatuses": [{"name": "agent",
        "image": "registry.test/acme/orders:nope", "state": {"waiting": {"reason": "ImagePullBackOff",
        "message": "Back-off pulling image \"registry.test/acme/orders:nope\""}}}]})");
    TestHost image;
    image.serveSandboxGroup();
    image.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
    image.server.onJson("GET", kPods, 200, list({pod}));
    CHECK(image.run({"sandbox", "verify", "orders"}) == kExitError);
    const std::string said = image.err.str();
    CHECK(contains(said,
                   "in phase Pending, not Running: image registry.test/acme/orders:nope "
                   "cannot be pulled (ImagePullBackOff)"));
    CHECK(contains(said, "waiting will not help"));
    CHECK(contains(said, "\"rossoctl agents delete orders -n team1\""));
    CHECK_FALSE(contains(said, "agents wait"));
    CHECK(image.server.execs.empty());

    TestHost scheduling;  // merely not scheduled yet: wait, in the right namespace, then again
    scheduling.serveSandboxGroup();
    scheduling.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
    pod["status"] = {{"phase", "Pending"}};
    scheduling.server.onJson("GET", kPods, 200, list({pod}));
    CHECK(scheduling.run({"sandbox", "verify", "orders"}) == kExitError);
    CHECK(contains(scheduling.err.str(),
                   "wait with \"rossoctl agents wait orders -n team1\", then verify again"));

    TestHost exec;  // exec and cp say the same
    exec.serveSandboxGroup();
    exec.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
    exec.server.onJson("GET", kPods, 200, list({pod}));
    CHECK(exec.run({"sandbox", "exec", "orders", "--", "ls"}) == kExitError);
    CHECK(contains(exec.err.str(), "wait with \"rossoctl agents wait orders -n team1\""));
}

namespace {

// The pod's files, kept in `root` across the restart (as a PVC keeps them): the canary write
// and read scripts run here with a real sh (and rm), their paths below root.
testing::RoutedServer::ExecResponder persistentFiles(const std::string& root) {
    auto others = hardenedPodAnswers("none");
    return [root, others](const std::vector<std::string>& command) {
        const std::string script = command.size() > 2 ? command[2] : "";
        const bool write = contains(script, "rossoctl-written");
        if (!write && !contains(script, "rossoctl-present")) return others(command);
        std::vector<std::string> local = command;
        for (size_t i = write ? 5 : 4; i < local.size(); ++i) {
            local[i] = root + command[i];
            fs::create_directories(fs::path(local[i]).parent_path());
        }
        auto output = testing::runLocally(local, {"sh", "rm"});
        std::string text = output.stdoutText;
        for (auto at = text.find(root); at != std::string::npos; at = text.find(root, at))
            text.erase(at, root.size());
        return testing::execRan(text, output.stderrText, output.exitCode);
    };
}

std::vector<std::string> canariesUnder(const std::string& root) {
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(root))
        if (entry.path().filename().string().rfind(".rossoctl-canary-", 0) == 0)
            found.push_back(entry.path().string());
    return found;
}

}  // namespace

TEST_CASE("sandbox verify of a --storage sandbox removes the canaries it wrote in the volume",
          "[verify][command]") {
    testing::TempDir root;
    json box = sandbox();
    box["spec"]["volumeClaimTemplates"] = json::parse(R"([{"metadata": {"name": "workspace"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}])");
    json pod = hardenedPod("pod-uid-1"), next = hardenedPod("pod-uid-2");
    for (json* each : {&pod, &next})
        (*each)["spec"]["volumes"] = json::parse(
            R"([{"name": "workspace", "persistentVolumeClaim": {"claimName": "workspace-orders"}}])");
    TestHost host;
    serveHardened(host, "none", box, pod, next, persistentFiles(root.path()));
    CHECK(host.run({"sandbox", "verify", "orders", "-o", "json"}) == 3);
    const json checks = verdicts(testing::printedJson(host.out.str()));
    const std::string evidence = checks["nothing-survives"].dump();
    INFO(evidence);
    CHECK(checks["nothing-survives"]["result"] == "fail");  // the volume outlives the pod
    CHECK(contains(evidence, "/workspace/.rossoctl-canary-"));
    CHECK(contains(evidence, "data outlives the pod; removed"));
    // The canary was really written in the volume, and is gone from it afterwards.
    CHECK(fs::exists(root.file("workspace")));
    CHECK(canariesUnder(root.path()).empty());
}

TEST_CASE("sandbox verify whose restart fails says where the canaries it wrote remain",
          "[verify][command]") {
    testing::TempDir root;
    json box = sandbox();
    box["spec"]["volumeClaimTemplates"] = json::parse(R"([{"metadata": {"name": "workspace"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}])");
    json pod = hardenedPod("pod-uid-1");
    pod["spec"]["volumes"] = json::parse(
        R"([{"name": "workspace", "persistentVolumeClaim": {"claimName": "workspace-orders"}}])");
    TestHost host;
    // The pod may not be deleted: the restart stops before any canary is read back.
    host.server.on("DELETE", kPods + "/orders", 403,
                   testing::statusBody(403, "Forbidden", "pods \"orders\" is forbidden"));
    serveHardened(host, "none", box, pod, hardenedPod("pod-uid-2"), persistentFiles(root.path()));
    CHECK(host.run({"sandbox", "verify", "orders", "-o", "json"}) == 3);
    const json checks = verdicts(testing::printedJson(host.out.str()));
    const std::string evidence = checks["nothing-survives"].dump();
    INFO(evidence);
    const auto left = canariesUnder(root.path());
    REQUIRE_FALSE(left.empty());  // written, and not removed: the user is told where
    CHECK(contains(evidence, "the restart did not complete"));
    CHECK(contains(evidence, "verify's canary files may remain at "));
    for (const auto& path : left) CHECK(contains(evidence, path.substr(root.path().size())));
    CHECK(contains(evidence, ": remove them by hand"));
}

TEST_CASE("sandbox verify says the pod's /workspace went with its restart, as restart does",
          "[verify][command][walkthrough49]") {
    // A newcomer's second walkthrough: a file written to /workspace was gone after verify, with
    // nothing on stderr, where restart, suspend and set-env --restart each say so.
    const std::string lost =
        "note: sandbox/orders: verify restarted it to prove nothing survives: what pod orders "
        "wrote to /workspace is gone with it (an emptyDir; a sandbox imported with --storage "
        "keeps its work volume)\n";
    TestHost host;
    serveHardened(host, "none");
    const int code = host.run({"sandbox", "verify", "orders", "-o", "json"});
    INFO(host.err.str());
    CHECK(contains(host.err.str(), lost));
    // Exit 3 under a machine format still says why on stderr, for a CI log.
    CHECK(code == 3);
    CHECK(contains(host.err.str(), "sandbox/orders: unproven: egress denied"));
    const json report = testing::printedJson(host.out.str());
    REQUIRE(report.contains("notes"));
    CHECK(contains(report["notes"][0].get<std::string>(), "/workspace is gone with it"));

    TestHost skipped;  // --no-restart deletes nothing, and says nothing of it
    serveHardened(skipped, "none");
    skipped.run({"sandbox", "verify", "orders", "--no-restart"});
    CHECK_FALSE(contains(skipped.err.str(), "is gone with it"));
}

TEST_CASE("sandbox verify interrupted after its pod's DELETE still says /workspace went with it",
          "[verify][command][walk53]") {
    // The fourth walkthrough: Ctrl-C once verify had deleted the pod exited 130 with nothing on
    // stderr, and the file written to /workspace was gone.
    TestHost host;
    serveHardened(host, "none");
    host.server.onRequest = [&host](const kube::HttpRequest& request) {
        if (request.method == "DELETE" && contains(request.url, kPods + "/orders"))
            host.cancel.cancel();  // Ctrl-C as the DELETE goes out
    };
    const int code = host.run({"sandbox", "verify", "orders"});
    INFO(host.err.str() << host.out.str());
    CHECK(code == kExitCancelled);
    CHECK(contains(host.err.str(),
                   "note: sandbox/orders: verify deleted its pod to prove nothing survives: what "
                   "pod orders wrote to /workspace is gone with it"));
}

TEST_CASE("sandbox verify interrupted with its pod's DELETE unanswered says /workspace may be gone",
          "[verify][command][walk5]") {
    // walk5 J2: Ctrl-C while the DELETE was on its way cut the request, so no answer said the
    // pod was deleted; verify exited 130 with nothing on stderr and /workspace was gone.
    TestHost host;
    serveHardened(host, "none");
    host.server.onRequest = [&host](const kube::HttpRequest& request) {
        if (request.method == "DELETE" && contains(request.url, kPods + "/orders")) {
            host.cancel.cancel();  // Ctrl-C as the DELETE goes out: the request is cut
            throw kube::TransportError(kube::TransportError::Kind::Cancelled, "cancelled");
        }
    };
    const int code = host.run({"sandbox", "verify", "orders"});
    INFO(host.err.str() << host.out.str());
    CHECK(code == kExitCancelled);
    CHECK(contains(host.err.str(),
                   "note: sandbox/orders: verify deleted its pod to prove nothing survives: what "
                   "pod orders wrote to /workspace is gone with it"));
    CHECK(contains(host.err.str(),
                   "unless its DELETE, cut short before the answer came, never "
                   "arrived"));
}
