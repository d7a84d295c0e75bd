#include "rossoctl/app/sandbox_restart.hpp"

#include <catch2/catch.hpp>

#include "kube_fakes.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;
using rossoctl::testing::ClientFixture;

namespace {

json sandbox(bool ready, const std::string& mode = "Running") {
    return {{"metadata", {{"name", "orders"}, {"namespace", "team1"}, {"uid", "sandbox-uid"}}},
            {"spec", {{"operatingMode", mode}}},
            {"status",
             {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"},
              {"conditions", json::array({{{"type", "Ready"},
                                           {"status", ready ? "True" : "False"},
                                           {"reason", ready ? "PodReady" : "PodNotReady"}}})}}}};
}

json pod(const std::string& uid, bool ready, const std::string& owner = "sandbox-uid",
         const std::string& phase = "Running") {
    return {{"metadata",
             {{"name", "orders"},
              {"uid", uid},
              {"resourceVersion", "1"},
              {"creationTimestamp", "2026-01-01T00:00:00Z"},
              {"ownerReferences",
               json::array({{{"uid", owner}, {"kind", "Sandbox"}, {"controller", true}}})}}},
            {"status",
             {{"phase", phase},
              {"conditions",
               json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}}}};
}

std::string list(const std::string& rv, const json& items) {
    return json{{"metadata", {{"resourceVersion", rv}}}, {"items", items}}.dump();
}

std::string event(const std::string& type, const json& object) {
    return json{{"type", type}, {"object", object}}.dump() + "\n";
}

int countMethod(const testing::FakeServer& server, const std::string& method) {
    int count = 0;
    for (const auto& request : server.requests) count += request.method == method;
    return count;
}

}  // namespace

TEST_CASE("restart deletes the owned pod by UID and waits for a new ready one", "[restart]") {
    ClientFixture fixture;
    fixture.server.reply(200, list("10", json::array({pod("old", true), pod("x", true, "other")})));
    fixture.server.reply(200, "{}");  // DELETE
    fixture.server.stream({event("DELETED", pod("old", true)), event("ADDED", pod("new", false)),
                           event("MODIFIED", pod("new", true))});
    fixture.server.reply(200, list("20", json::array({sandbox(true)})));
    app::RestartOptions options;
    auto result =
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, sandbox(true));
    CHECK(result.oldUid == "old");
    CHECK(result.newUid == "new");
    REQUIRE(fixture.server.requests.size() == 4);
    const auto& remove = fixture.server.requests[1];
    CHECK(remove.method == "DELETE");
    CHECK(remove.url.find("/api/v1/namespaces/team1/pods/orders") != std::string::npos);
    CHECK(json::parse(remove.body)["preconditions"]["uid"] == "old");
    CHECK(fixture.server.requests[0].url.find(
              "labelSelector=agents.x-k8s.io%2Fsandbox-name-hash%3Dabc") != std::string::npos);
    CHECK(fixture.server.requests[2].url.find("resourceVersion=10") != std::string::npos);
    CHECK(app::describeRestart("orders", result)
              .rfind("sandbox/orders restarted (pod uid old → new", 0) == 0);
}

TEST_CASE("a pod replaced under the restart is never deleted", "[restart]") {
    ClientFixture fixture;
    fixture.server.reply(200, list("10", json::array({pod("old", true)})));
    fixture.server.reply(409, json{{"kind", "Status"},
                                   {"status", "Failure"},
                                   {"code", 409},
                                   {"reason", "Conflict"},
                                   {"message",
                                    "Precondition failed: UID in precondition: old, "
                                    "UID in object meta: replacement"}}
                                  .dump());
    fixture.server.reply(200, list("12", json::array({pod("replacement", false)})));
    fixture.server.stream({event("MODIFIED", pod("replacement", true))});
    fixture.server.reply(200, list("20", json::array({sandbox(true)})));
    app::RestartOptions options;
    auto result =
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, sandbox(true));
    CHECK(countMethod(fixture.server, "DELETE") == 1);
    CHECK(result.newUid == "replacement");
    REQUIRE(result.notes.size() == 1);
    CHECK(result.notes[0].find("replaced by someone else") != std::string::npos);
}

TEST_CASE("wait=false returns right after the delete", "[restart]") {
    ClientFixture fixture;
    fixture.server.reply(200, list("10", json::array({pod("old", true)})));
    fixture.server.reply(200, "{}");
    app::RestartOptions options;
    options.wait = false;
    auto result =
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, sandbox(true));
    CHECK(result.newUid.empty());
    CHECK(fixture.server.requests.size() == 2);
}

TEST_CASE("restart refuses suspended, finished and podless sandboxes", "[restart]") {
    app::RestartOptions options;
    {
        ClientFixture fixture;
        CHECK_THROWS_WITH(
            app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                                "team1", "orders", options, sandbox(false, "Suspended")),
            Catch::Contains("sandbox/orders is suspended"));
        CHECK(fixture.server.requests.empty());
    }
    {
        ClientFixture fixture;
        fixture.server.reply(200,
                             list("1", json::array({pod("done", false, "sandbox-uid", "Failed")})));
        CHECK_THROWS_WITH(
            app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                                "team1", "orders", options, sandbox(false)),
            Catch::Contains("ended in phase Failed"));
        CHECK(countMethod(fixture.server, "DELETE") == 0);
    }
    {
        ClientFixture fixture;
        fixture.server.reply(200, list("1", json::array({pod("foreign", true, "someone-else")})));
        CHECK_THROWS_WITH(
            app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                                "team1", "orders", options, sandbox(false)),
            Catch::Contains("has no pod"));
        CHECK(countMethod(fixture.server, "DELETE") == 0);
    }
}

TEST_CASE("a restart that times out says what the Sandbox's conditions say", "[restart]") {
    ClientFixture fixture;
    fixture.server.latency = std::chrono::seconds(1);
    fixture.server.reply(200, list("10", json::array({pod("old", true)})));
    fixture.server.reply(200, "{}");
    fixture.server.stream({event("DELETED", pod("old", true)), event("ADDED", pod("new", false))});
    fixture.server.reply(200, sandbox(false).dump());  // the GET for the message
    app::RestartOptions options;
    options.timeout = std::chrono::seconds(3);
    CHECK_THROWS_WITH(
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, sandbox(true)),
        Catch::Contains("timed out after 3.0s waiting for a new ready pod") &&
            Catch::Contains("Ready=False (PodNotReady)"));
}

TEST_CASE("a restart with no replacement pod says so, not the stale Ready=True", "[restart]") {
    ClientFixture fixture;
    fixture.server.latency = std::chrono::seconds(1);
    fixture.server.reply(200, list("10", json::array({pod("old", true)})));
    fixture.server.reply(200, "{}");
    fixture.server.stream({event("DELETED", pod("old", true))});
    app::RestartOptions options;
    options.timeout = std::chrono::seconds(3);
    std::string message;
    try {
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, sandbox(true));
    } catch (const Error& error) {
        message = error.what();
    }
    CHECK(message.find("no replacement pod was ever created for pod orders") != std::string::npos);
    CHECK(message.find("controller") != std::string::npos);
    CHECK(message.find("Ready=True") == std::string::npos);
}

TEST_CASE("an apiserver outage before the delete is ridden out within the timeout", "[restart]") {
    ClientFixture fixture;
    fixture.server.clock = &fixture.clock;
    fixture.server.latency = std::chrono::milliseconds(100);
    // 20 refused connections (well past the client's own retries), then the server is back.
    for (int i = 0; i < 20; ++i)
        fixture.server.fail(TransportError::Kind::Connect, "connection refused");
    fixture.server.reply(200, list("10", json::array({pod("old", true)})));
    for (int i = 0; i < 3; ++i)
        fixture.server.fail(TransportError::Kind::Connect, "connection refused");
    fixture.server.reply(200, "{}");  // DELETE
    app::RestartOptions options;
    options.wait = false;
    options.timeout = std::chrono::seconds(90);
    auto result =
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, sandbox(true));
    CHECK(result.oldUid == "old");
    CHECK(countMethod(fixture.server, "DELETE") == 4);
    CHECK(fixture.clock.totalSlept() < std::chrono::seconds(90));
}

TEST_CASE("an outage longer than the restart's timeout fails with the outage", "[restart]") {
    ClientFixture fixture;
    fixture.server.clock = &fixture.clock;
    fixture.server.latency = std::chrono::milliseconds(100);
    for (int i = 0; i < 200; ++i)
        fixture.server.fail(TransportError::Kind::Connect, "connection refused");
    app::RestartOptions options;
    options.timeout = std::chrono::seconds(10);
    CHECK_THROWS_WITH(
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, sandbox(true)),
        Catch::Contains("connection refused"));
    CHECK(countMethod(fixture.server, "DELETE") == 0);
    CHECK(fixture.clock.totalSlept() <= std::chrono::seconds(10));
}

TEST_CASE("a pod deleted by someone else a moment before: the restart waits for the replacement",
          "[restart]") {
    ClientFixture fixture;
    fixture.server.reply(200, list("10", json::array()));  // gone; Ready=True is stale
    fixture.server.stream({event("ADDED", pod("new", false)), event("MODIFIED", pod("new", true))});
    fixture.server.reply(200, list("20", json::array({sandbox(true)})));
    app::RestartOptions options;
    auto result =
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, sandbox(true));
    CHECK(result.newUid == "new");
    CHECK(countMethod(fixture.server, "DELETE") == 0);
    REQUIRE(result.notes.size() == 1);
    CHECK(result.notes[0].find("already deleted") != std::string::npos);
    CHECK(app::describeRestart("orders", result).find("already gone; new pod uid new") !=
          std::string::npos);
}

TEST_CASE("a pod deleted a moment before, status already Ready=False: the restart still waits",
          "[restart]") {
    // The project's fallback controller reports PodTerminating while the replacement is made.
    json terminatingStatus = sandbox(false);
    terminatingStatus["status"]["conditions"][0]["reason"] = "PodTerminating";
    ClientFixture fixture;
    fixture.server.reply(200, list("10", json::array()));
    fixture.server.stream({event("ADDED", pod("new", false)), event("MODIFIED", pod("new", true))});
    fixture.server.reply(200, list("20", json::array({sandbox(true)})));
    app::RestartOptions options;
    auto result =
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, terminatingStatus);
    CHECK(result.newUid == "new");
    CHECK(countMethod(fixture.server, "DELETE") == 0);
}

// Review 47b finding 1: anyone who may create pods could add one naming the Sandbox in a plain
// ownerReference; restart deleted the newest such pod and took the next one for the replacement,
// so verify's canaries were read in a pod that never had them.
TEST_CASE("restart deletes the recorded pod, never a newer pod that only names the Sandbox",
          "[restart][review47b]") {
    ClientFixture fixture;
    auto plainOwner = [](json pod, const std::string& name) {
        pod["metadata"]["name"] = name;
        pod["metadata"]["ownerReferences"][0].erase("controller");
        pod["metadata"]["creationTimestamp"] = "2026-01-01T00:05:00Z";
        return pod;
    };
    fixture.server.reply(
        200, list("10", json::array({pod("real", true), plainOwner(pod("d1", true), "decoy")})));
    fixture.server.reply(200, "{}");  // DELETE
    fixture.server.stream({event("ADDED", plainOwner(pod("d2", true), "decoy2")),
                           event("ADDED", pod("new", false)), event("MODIFIED", pod("new", true))});
    fixture.server.reply(200, list("20", json::array({sandbox(true)})));
    app::RestartOptions options;
    auto result =
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, sandbox(true));
    const auto& remove = fixture.server.requests[1];
    CHECK(remove.method == "DELETE");
    CHECK(remove.url.find("/pods/orders") != std::string::npos);
    CHECK(json::parse(remove.body)["preconditions"]["uid"] == "real");
    CHECK(result.oldUid == "real");
    CHECK(result.newUid == "new");
    CHECK(result.podName == "orders");
}

// Review 48 finding 1: a pod with a controller reference to the Sandbox, made by someone else
// while the old pod terminated, was taken for the replacement (and the controller adopts it).
TEST_CASE("restart never takes a pod it controls that the controller did not make",
          "[restart][review48]") {
    ClientFixture fixture;
    json decoy = pod("d2", true);
    decoy["metadata"]["name"] = "decoy2";
    fixture.server.reply(200, list("10", json::array({pod("real", true)})));
    fixture.server.reply(200, "{}");  // DELETE
    fixture.server.stream({event("ADDED", decoy), event("ADDED", pod("new", true))});
    app::RestartOptions options;
    try {
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, sandbox(true));
        FAIL("the restart took a replacement");
    } catch (const Error& error) {
        CHECK(std::string(error.what())
                  .find("pod decoy2 names it as its controller but is not the pod the controller "
                        "makes (orders)") != std::string::npos);
    }
    CHECK(fixture.server.requests[1].url.find("/pods/orders") != std::string::npos);
}

TEST_CASE("restart refuses to choose among pods it controls when none is the recorded one",
          "[restart][review47b]") {
    ClientFixture fixture;
    json a = pod("a", true);
    a["metadata"]["name"] = "first";
    json b = pod("b", true);
    b["metadata"]["name"] = "second";
    fixture.server.reply(200, list("10", json::array({a, b})));
    app::RestartOptions options;
    CHECK_THROWS_WITH(
        app::restartSandbox(*fixture.client, fixture.clock, resources::sandboxes("v1beta1"),
                            "team1", "orders", options, sandbox(true)),
        Catch::Contains("has 2 pods that name it as their controller (first, second)"));
    CHECK(countMethod(fixture.server, "DELETE") == 0);
}
