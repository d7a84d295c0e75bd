#include "rossoctl/kube/client.hpp"

#include <catch2/catch.hpp>

#include "kube_fakes.hpp"

using namespace rossoctl;
using namespace rossoctl::kube;
using rossoctl::testing::ClientFixture;
using rossoctl::testing::FakeClock;

namespace {

std::string headerOf(const HttpRequest& request, const std::string& name) {
    for (const auto& [key, value] : request.headers) {
        if (key == name) return value;
    }
    return {};
}

const std::string kNotFoundStatus =
    R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,)"
    R"("message":"sandboxes.agents.x-k8s.io \"orders\" not found"})";

}  // namespace

TEST_CASE("get builds the URL and sends Accept, User-Agent and the bearer token", "[client]") {
    ClientFixture fixture;
    fixture.server.reply(200, R"({"kind":"Sandbox","metadata":{"name":"orders"}})");
    json sandbox = fixture.client->get(resources::sandboxes("v1alpha1"), "team-a", "orders");
    CHECK(sandbox["metadata"]["name"] == "orders");
    const HttpRequest& sent = fixture.server.last();
    CHECK(sent.method == "GET");
    CHECK(sent.url ==
          "https://api.test:6443/apis/agents.x-k8s.io/v1alpha1/namespaces/team-a/sandboxes/orders");
    CHECK(headerOf(sent, "Accept") == "application/json");
    CHECK(headerOf(sent, "User-Agent") == std::string("rossoctl/") + ROSSOCTL_VERSION);
    CHECK(headerOf(sent, "Authorization") == "Bearer s3cr3t-token-0123456789");
    CHECK(fixture.client->stats().requests == 1);
}

TEST_CASE("a Status body becomes an ApiError worded like kubectl", "[client]") {
    ClientFixture fixture;
    fixture.server.reply(404, kNotFoundStatus);
    try {
        fixture.client->get(resources::sandboxes("v1alpha1"), "team-a", "orders");
        FAIL("no error thrown");
    } catch (const ApiError& error) {
        CHECK(error.isNotFound());
        CHECK(error.reason() == "NotFound");
        CHECK(std::string(error.what()) == R"(sandboxes.agents.x-k8s.io "orders" not found)");
    }
    CHECK(fixture.server.requests.size() == 1);
}

TEST_CASE("getIfExists turns only NotFound into nullopt", "[client]") {
    ClientFixture fixture;
    fixture.server.reply(404, kNotFoundStatus);
    CHECK_FALSE(fixture.client->getIfExists(resources::pods(), "a", "p").has_value());
    fixture.server.reply(403,
                         R"({"kind":"Status","reason":"Forbidden","code":403,"message":"no"})");
    CHECK_THROWS_AS(fixture.client->getIfExists(resources::pods(), "a", "p"), ApiError);
}

TEST_CASE("list follows continue tokens across three pages", "[client]") {
    ClientFixture fixture;
    fixture.server.reply(200,
                         R"({"kind":"PodList","metadata":{"continue":"c1","resourceVersion":"10"},
                                  "items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})");
    fixture.server.reply(200,
                         R"({"kind":"PodList","metadata":{"continue":"c2","resourceVersion":"10"},
                                  "items":[{"metadata":{"name":"c"}},{"metadata":{"name":"d"}}]})");
    fixture.server.reply(200, R"({"kind":"PodList","metadata":{"resourceVersion":"10"},
                                  "items":[{"metadata":{"name":"e"}}]})");
    ListOptions options;
    options.limit = 2;
    options.labelSelector = "app.kubernetes.io/managed-by=rossoctl";
    json list = fixture.client->list(resources::pods(), "team-a", options);

    REQUIRE(list["items"].size() == 5);
    CHECK(list["items"][4]["metadata"]["name"] == "e");
    CHECK_FALSE(list["metadata"].contains("continue"));
    CHECK(list["kind"] == "PodList");
    REQUIRE(fixture.server.requests.size() == 3);
    const std::string base =
        "https://api.test:6443/api/v1/namespaces/team-a/pods?labelSelector="
        "app.kubernetes.io%2Fmanaged-by%3Drossoctl&limit=2";
    CHECK(fixture.server.requests[0].url == base);
    CHECK(fixture.server.requests[1].url == base + "&continue=c1");
    CHECK(fixture.server.requests[2].url == base + "&continue=c2");
}

TEST_CASE("listPages stops when the callback says so", "[client]") {
    ClientFixture fixture;
    fixture.server.reply(200, R"({"metadata":{"continue":"c1"},"items":[{}]})");
    int pages = 0;
    fixture.client->listPages(resources::pods(), "a", {}, [&](const json&) {
        ++pages;
        return false;
    });
    CHECK(pages == 1);
    CHECK(fixture.server.requests.size() == 1);
}

TEST_CASE("an idempotent GET is retried on 503 with exponential backoff", "[client]") {
    ClientFixture fixture;
    fixture.server.reply(503, "");
    fixture.server.reply(503, "");
    fixture.server.reply(200, R"({"major":"1"})");
    CHECK(fixture.client->getPath("/version")["major"] == "1");
    CHECK(fixture.client->stats().requests == 3);
    CHECK(fixture.client->stats().retries == 2);
    CHECK(fixture.clock.totalSlept() == std::chrono::milliseconds(200 + 400));
}

TEST_CASE("a POST is not retried on 503", "[client]") {
    ClientFixture fixture;
    fixture.server.reply(503, R"({"kind":"Status","code":503,"reason":"ServiceUnavailable",
                                  "message":"etcd is unavailable"})");
    CHECK_THROWS_WITH(
        fixture.client->create(resources::configMaps(), "a", json{{"metadata", {{"name", "x"}}}}),
        "etcd is unavailable");
    CHECK(fixture.server.requests.size() == 1);
    CHECK(fixture.clock.totalSlept().count() == 0);
}

TEST_CASE("a create refused by a quota update race (409 on resourcequotas) is sent again",
          "[client]") {
    // The body the apiserver sent in CI when three pods were created at once in one namespace.
    const std::string quotaConflict =
        R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
        R"("Operation cannot be fulfilled on resourcequotas \"sandbox-quota\": the object has )"
        R"(been modified; please apply your changes to the latest version and try again",)"
        R"("reason":"Conflict","details":{"name":"sandbox-quota","kind":"resourcequotas"},)"
        R"("code":409})";
    ClientFixture fixture;
    fixture.server.reply(409, quotaConflict);
    fixture.server.reply(201, R"({"metadata":{"name":"x"}})");
    fixture.client->create(resources::pods(), "a", json{{"metadata", {{"name", "x"}}}});
    CHECK(fixture.server.requests.size() == 2);
    CHECK(fixture.client->stats().retries == 1);
    CHECK(fixture.clock.totalSlept() == std::chrono::milliseconds(200));
}

TEST_CASE("a 409 about the object itself is final", "[client]") {
    ClientFixture fixture;
    fixture.server.reply(409, R"({"kind":"Status","status":"Failure","reason":"AlreadyExists",)"
                              R"("details":{"name":"x","kind":"pods"},"code":409,)"
                              R"("message":"pods \"x\" already exists"})");
    fixture.server.reply(409, R"({"kind":"Status","status":"Failure","reason":"Conflict",)"
                              R"("details":{"name":"x","kind":"pods"},"code":409,)"
                              R"("message":"the object has been modified"})");
    CHECK_THROWS_WITH(
        fixture.client->create(resources::pods(), "a", json{{"metadata", {{"name", "x"}}}}),
        Catch::Contains("already exists"));
    CHECK_THROWS_WITH(
        fixture.client->create(resources::pods(), "a", json{{"metadata", {{"name", "x"}}}}),
        Catch::Contains("has been modified"));
    CHECK(fixture.server.requests.size() == 2);
    CHECK(fixture.clock.totalSlept().count() == 0);
}

TEST_CASE("429 is retried for any method after Retry-After", "[client]") {
    ClientFixture fixture;
    fixture.server.reply(429, "", {{"retry-after", "3"}});
    fixture.server.reply(201, R"({"metadata":{"name":"x"}})");
    fixture.client->create(resources::configMaps(), "a", json{{"metadata", {{"name", "x"}}}});
    CHECK(fixture.server.requests.size() == 2);
    CHECK(fixture.clock.totalSlept() == std::chrono::seconds(3));
}

TEST_CASE("transport failures: refused connections retried, resets only when idempotent",
          "[client]") {
    ClientFixture fixture;
    fixture.server.fail(TransportError::Kind::Connect, "refused");
    fixture.server.reply(201, "{}");
    fixture.client->create(resources::configMaps(), "a", json{{"metadata", {{"name", "x"}}}});
    CHECK(fixture.server.requests.size() == 2);

    fixture.server.fail(TransportError::Kind::Reset, "reset");
    CHECK_THROWS_AS(
        fixture.client->create(resources::configMaps(), "a", json{{"metadata", {{"name", "x"}}}}),
        TransportError);
    CHECK(fixture.server.requests.size() == 3);

    fixture.server.fail(TransportError::Kind::Reset, "reset");
    fixture.server.reply(200, "{}");
    fixture.client->get(resources::configMaps(), "a", "x");
    CHECK(fixture.server.requests.size() == 5);
}

TEST_CASE("retries stop after the policy's attempts", "[client]") {
    ClientFixture fixture;
    for (int i = 0; i < 5; ++i) fixture.server.reply(500, "");
    CHECK_THROWS_AS(fixture.client->getPath("/version"), ApiError);
    CHECK(fixture.server.requests.size() == 5);
}

TEST_CASE("a 401 re-runs the exec plugin once and retries", "[client]") {
    struct CountingRunner : ExecPluginRunner {
        int* runs;
        explicit CountingRunner(int* counter) : runs(counter) {}
        std::string run(const ExecConfig&, const std::string&) override {
            ++*runs;
            return R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
                       "status":{"token":"plugin-token-)" +
                   std::to_string(*runs) + R"("}})";
        }
    };
    RestConfig config = rossoctl::testing::fakeRestConfig();
    config.token.clear();
    config.exec = ExecConfig{"client.authentication.k8s.io/v1", "get-token", {}, {}, "", false};
    FakeClock authClock;
    int runs = 0;
    ClientFixture fixture(0, config,
                          std::make_unique<Authenticator>(config, authClock,
                                                          std::make_unique<CountingRunner>(&runs)));
    fixture.server.reply(401, R"({"kind":"Status","code":401,"reason":"Unauthorized",
                                  "message":"Unauthorized"})");
    fixture.server.reply(200, "{}");
    fixture.client->getPath("/version");
    CHECK(runs == 2);
    REQUIRE(fixture.server.requests.size() == 2);
    CHECK(headerOf(fixture.server.requests[0], "Authorization") == "Bearer plugin-token-1");
    CHECK(headerOf(fixture.server.requests[1], "Authorization") == "Bearer plugin-token-2");

    SECTION("but only once per request") {
        fixture.server.reply(401, "");
        fixture.server.reply(401, "");
        CHECK_THROWS_WITH(fixture.client->getPath("/version"),
                          "the server has asked for the client to provide credentials");
        CHECK(fixture.server.requests.size() == 4);
    }
}

TEST_CASE("an exec plugin's client certificate is pushed into the transport once", "[client]") {
    struct CertRunner : ExecPluginRunner {
        std::string run(const ExecConfig&, const std::string&) override {
            return R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
                       "status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}})";
        }
    };
    RestConfig config = rossoctl::testing::fakeRestConfig();
    config.token.clear();
    config.exec = ExecConfig{"client.authentication.k8s.io/v1", "get-cert", {}, {}, "", false};
    FakeClock authClock;
    ClientFixture fixture(
        0, config,
        std::make_unique<Authenticator>(config, authClock, std::make_unique<CertRunner>()));
    fixture.server.reply(200, "{}");
    fixture.server.reply(200, "{}");
    fixture.client->getPath("/version");
    fixture.client->getPath("/version");
    REQUIRE(fixture.server.certificates.size() == 1);
    CHECK(fixture.server.certificates[0].certPem == "CERT");
    CHECK(headerOf(fixture.server.last(), "Authorization").empty());
}

TEST_CASE("a cancelled client sends nothing", "[client]") {
    CancelFlag cancel;
    cancel.cancel();
    ClientFixture fixture(0, rossoctl::testing::fakeRestConfig(), nullptr, &cancel);
    try {
        fixture.client->getPath("/version");
        FAIL("no error thrown");
    } catch (const TransportError& error) {
        CHECK(error.kind() == TransportError::Kind::Cancelled);
    }
    CHECK(fixture.server.requests.empty());
}

TEST_CASE("a GET answered without a body is an error, not an empty object", "[client]") {
    // curl reports 200 when a server closes after the status line.
    ClientFixture fixture(0, rossoctl::testing::fakeRestConfig());
    fixture.server.reply(200, "");
    CHECK_THROWS_WITH(fixture.client->getPath("/version"),
                      Catch::Contains("the server sent an empty response to GET"));
}

TEST_CASE("a verb on one object never becomes a verb on its collection", "[client][hostile]") {
    // An empty name dropped its path segment: DELETE /api/v1/namespaces/a/pods is a
    // deletecollection (review 29, H5). '/', '..' and '%' would reach other paths.
    ClientFixture fixture;
    for (const std::string name : {"", ".", "..", "a/b", "x%2Fy"}) {
        INFO(name);
        CHECK_THROWS_WITH(fixture.client->remove(resources::pods(), "a", name),
                          Catch::StartsWith("refused: Pod name"));
        CHECK_THROWS_AS(fixture.client->get(resources::pods(), "a", name), rossoctl::Error);
        CHECK_THROWS_AS(fixture.client->patch(resources::pods(), "a", name, PatchType::Merge, "{}"),
                        rossoctl::Error);
        CHECK_THROWS_AS(
            fixture.client->update(resources::pods(), "a", json{{"metadata", {{"name", name}}}}),
            rossoctl::Error);
    }
    // A namespaced object needs a valid namespace; a collection's may be "" (every namespace).
    CHECK_THROWS_WITH(fixture.client->remove(resources::pods(), "", "p"),
                      Catch::Contains("namespace \"\" for pods is empty"));
    CHECK_THROWS_AS(fixture.client->remove(resources::pods(), "../kube-system", "p"),
                    rossoctl::Error);
    CHECK_THROWS_AS(fixture.client->list(resources::pods(), "a/b"), rossoctl::Error);
    CHECK(fixture.server.requests.empty());
    CHECK(objectPath(resources::namespaces(), "ignored", "team1") == "/api/v1/namespaces/team1");
    CHECK(objectPath(resources::pods(), "a", "p", "log") == "/api/v1/namespaces/a/pods/p/log");
    CHECK(collectionPath(resources::pods(), "") == "/api/v1/pods");
}
