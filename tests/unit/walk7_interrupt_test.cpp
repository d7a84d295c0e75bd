// The fifth newcomer walkthrough (notes walk5, issue 34): what verify, restart and suspend say
// when they are interrupted or wait on a pod that is slow to stop. Each case failed on the code
// before its fix.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "verify_fixtures.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;
using rossoctl::testing::watchEvent;
using namespace rossoctl::testing::verify_fixtures;

TEST_CASE("sandbox verify interrupted early says so in one line, not \"error: cancelled\"",
          "[walk7][verify][command]") {
    // walk5 MINOR 12: INT before any check gave "error: cancelled".
    TestHost host;
    serveHardened(host, "none");
    host.server.onRequest = [&host](const kube::HttpRequest& request) {
        if (request.method == "GET" && contains(request.url, kSandboxes + "/orders")) {
            host.cancel.cancel();  // Ctrl-C as the first read goes out
            throw kube::TransportError(kube::TransportError::Kind::Cancelled, "cancelled");
        }
    };
    CHECK(host.run({"sandbox", "verify", "orders"}) == kExitCancelled);
    CHECK(host.err.str() ==
          "error: sandbox verify was interrupted (Ctrl-C); sandbox/orders not verified\n");
    CHECK(host.out.str().empty());
}

TEST_CASE("sandbox verify interrupted late prints a report that says it is partial",
          "[walk7][verify][command]") {
    // walk5 MINOR 12: INT during the restart printed a whole report and exited 130 with no word
    // of the interruption.
    for (const std::string format : {"table", "json"}) {
        TestHost host;
        serveHardened(host, "none");
        host.server.onRequest = [&host](const kube::HttpRequest& request) {
            if (request.method == "DELETE" && contains(request.url, kPods + "/orders"))
                host.cancel.cancel();  // Ctrl-C as verify's restart deletes the pod
        };
        INFO(format);
        CHECK(host.run({"sandbox", "verify", "orders", "-o", format}) == kExitCancelled);
        const std::string err = host.err.str();
        INFO(err);
        CHECK(contains(err,
                       "error: sandbox verify was interrupted (Ctrl-C); the report of "
                       "sandbox/orders is partial (what it cut short is unproven)\n"));
        CHECK(contains(err, "/workspace is gone with it"));  // the files note stays
        if (format == "table")
            CHECK(contains(host.out.str(),
                           "; partial: verify was interrupted (Ctrl-C), and what it cut short is "
                           "unproven\n"));
        else
            CHECK(testing::printedJson(host.out.str())["interrupted"] == true);
    }
}

namespace {

// Pod orders being deleted, its agent ignoring SIGTERM: there until the grace period ends.
json stoppingPod(const std::string& uid) {
    json pod = hardenedPod(uid);
    pod["metadata"]["deletionTimestamp"] = "2023-11-14T22:13:30Z";
    pod["metadata"]["deletionGracePeriodSeconds"] = 30;
    return pod;
}

const std::string kStopLine = "sandbox/orders: waiting for pod orders to stop (grace period 30s)\n";

size_t count(const std::string& text, const std::string& part) {
    size_t found = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++found;
    return found;
}

}  // namespace

TEST_CASE("sandbox restart interrupted as its pod's DELETE goes out says /workspace may be gone",
          "[walk7][restart][workspace][command]") {
    // Verify and suspend said it; a plain restart said only "error: cancelled".
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
    host.server.onJson("GET", kPods, 200, list({hardenedPod("pod-uid-1")}));
    host.server.onRequest = [&host](const kube::HttpRequest& request) {
        if (request.method == "DELETE" && contains(request.url, kPods + "/orders")) {
            host.cancel.cancel();  // Ctrl-C as the DELETE goes out: the request is cut
            throw kube::TransportError(kube::TransportError::Kind::Cancelled, "cancelled");
        }
    };
    CHECK(host.run({"sandbox", "restart", "orders"}) == kExitCancelled);
    const std::string err = host.err.str();
    INFO(err);
    CHECK(contains(err,
                   "note: what pod orders wrote to /workspace is gone with it (an emptyDir; a "
                   "sandbox imported with --storage keeps its work volume), unless its DELETE, "
                   "cut short before the answer came, never arrived\n"));
    CHECK(count(err, "/workspace") == 1);
}

TEST_CASE("restart and set-env --restart say once why they wait on a pod slow to stop",
          "[walk7][restart][command]") {
    // walk5 MINOR 13: an agent ignoring SIGTERM held its pod ~31 s with nothing printed.
    for (const bool setEnv : {false, true}) {
        TestHost host;
        host.serveSandboxGroup();
        host.server.latency = std::chrono::seconds(1);
        host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
        host.server.onJson("PUT", kSandboxes + "/orders", 200, sandbox());
        host.server.onJson("GET", kSandboxes, 200, list({sandbox()}));
        host.server.onJson("GET", kPods, 200, list({hardenedPod("pod-uid-1")}));
        host.server.on("DELETE", kPods + "/orders", 200, "{}");
        for (int i = 0; i < 8; ++i)  // a second or more each: the old pod still stops
            host.server.onStream("GET", kPods + "?watch=true",
                                 {watchEvent("MODIFIED", stoppingPod("pod-uid-1"))});
        host.server.onStream("GET", kPods + "?watch=true",
                             {watchEvent("DELETED", stoppingPod("pod-uid-1")),
                              watchEvent("ADDED", hardenedPod("pod-uid-2"))});
        INFO(setEnv);
        const int code = setEnv ? host.run({"sandbox", "set-env", "orders", "A=1", "--restart"})
                                : host.run({"sandbox", "restart", "orders"});
        INFO(host.err.str());
        CHECK(code == 0);
        CHECK(count(host.err.str(), kStopLine) == 1);
        CHECK(contains(host.out.str(), "sandbox/orders restarted (pod uid pod-uid-… → pod-uid-…"));
    }

    TestHost unseen;  // no watch event shows the deletion: the pod still listed is stopping
    unseen.serveSandboxGroup();
    unseen.server.latency = std::chrono::seconds(1);
    unseen.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
    unseen.server.onJson("GET", kSandboxes, 200, list({sandbox()}));
    unseen.server.onJson("GET", kPods, 200, list({hardenedPod("pod-uid-1")}));
    unseen.server.on("DELETE", kPods + "/orders", 200, "{}");
    for (int i = 0; i < 8; ++i) unseen.server.onStream("GET", kPods + "?watch=true", {});
    unseen.server.onStream("GET", kPods + "?watch=true",
                           {watchEvent("DELETED", hardenedPod("pod-uid-1")),
                            watchEvent("ADDED", hardenedPod("pod-uid-2"))});
    CHECK(unseen.run({"sandbox", "restart", "orders"}) == 0);
    INFO(unseen.err.str());
    CHECK(count(unseen.err.str(), kStopLine) == 1);

    TestHost quick;  // a pod that stops at once: nothing said
    quick.serveSandboxGroup();
    quick.server.onJson("GET", kSandboxes + "/orders", 200, sandbox());
    quick.server.onJson("GET", kSandboxes, 200, list({sandbox()}));
    quick.server.onJson("GET", kPods, 200, list({hardenedPod("pod-uid-1")}));
    quick.server.on("DELETE", kPods + "/orders", 200, "{}");
    quick.server.onStream("GET", kPods + "?watch=true",
                          {watchEvent("MODIFIED", stoppingPod("pod-uid-1")),
                           watchEvent("DELETED", stoppingPod("pod-uid-1")),
                           watchEvent("ADDED", hardenedPod("pod-uid-2"))});
    CHECK(quick.run({"sandbox", "restart", "orders"}) == 0);
    CHECK(!contains(quick.err.str(), "waiting for pod"));
}

TEST_CASE("sandbox suspend says once why it waits on a pod slow to stop",
          "[walk7][suspend][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.latency = std::chrono::seconds(1);
    host.server.onJson("GET", kSandboxes + "/orders", 200,
                       testing::ordersSandbox("Running", {testing::condition("Ready", "True")}));
    host.server.onJson("PATCH", kSandboxes + "/orders", 200, testing::suspendedOrdersSandbox());
    host.server.onJson("GET", kSandboxes, 200, list({testing::suspendedOrdersSandbox()}));
    host.server.onJson("GET", kPods, 200, list({stoppingPod("pod-uid-1")}));
    for (int i = 0; i < 3; ++i) host.server.onStream("GET", kPods + "?watch=true", {});
    host.server.onStream("GET", kPods + "?watch=true",
                         {watchEvent("DELETED", stoppingPod("pod-uid-1"))});
    CHECK(host.run({"sandbox", "suspend", "orders"}) == 0);
    INFO(host.err.str());
    CHECK(count(host.err.str(), kStopLine) == 1);
    CHECK(contains(host.out.str(), "sandbox/orders suspended"));
}
