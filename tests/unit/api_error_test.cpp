#include "rossoctl/kube/api_error.hpp"

#include <catch2/catch.hpp>

using namespace rossoctl::kube;

TEST_CASE("a metav1.Status becomes an ApiError with its message", "[api_error]") {
    ApiError error = apiErrorFromResponse(
        404, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                 "message":"sandboxes.agents.x-k8s.io \"orders\" not found","reason":"NotFound",
                 "details":{"name":"orders","group":"agents.x-k8s.io","kind":"sandboxes"},
                 "code":404})");
    CHECK(error.code() == 404);
    CHECK(error.reason() == "NotFound");
    CHECK(std::string(error.what()) == R"(sandboxes.agents.x-k8s.io "orders" not found)");
    CHECK(error.statusMessage() == error.what());
    CHECK(error.details()["name"] == "orders");
    CHECK(error.isNotFound());
    CHECK(error.exitCode() == 1);
}

TEST_CASE("Status causes are kept", "[api_error]") {
    ApiError error = apiErrorFromResponse(
        422, R"({"kind":"Status","status":"Failure","reason":"Invalid","code":422,
                 "message":"Sandbox.agents.x-k8s.io \"Bad\" is invalid",
                 "details":{"causes":[{"reason":"FieldValueInvalid","message":"Invalid value",
                                       "field":"metadata.name"}]}})");
    REQUIRE(error.causes().size() == 1);
    CHECK(error.causes()[0].field == "metadata.name");
    CHECK(error.causes()[0].reason == "FieldValueInvalid");
}

TEST_CASE("conflict and already-exists are told apart by reason", "[api_error]") {
    ApiError conflict = apiErrorFromResponse(409, R"({"kind":"Status","reason":"Conflict",
                                                       "message":"changed","code":409})");
    ApiError exists = apiErrorFromResponse(409, R"({"kind":"Status","reason":"AlreadyExists",
                                                     "message":"exists","code":409})");
    CHECK(conflict.isConflict());
    CHECK_FALSE(conflict.isAlreadyExists());
    CHECK(exists.isAlreadyExists());
    CHECK_FALSE(exists.isConflict());
}

TEST_CASE("a Status without message or reason gets client-go's wording", "[api_error]") {
    ApiError error = apiErrorFromResponse(403, R"({"kind":"Status","status":"Failure"})");
    CHECK(error.reason() == "Forbidden");
    CHECK(error.isForbidden());
    CHECK(std::string(error.what()) ==
          "the server does not allow access to the requested resource");
}

TEST_CASE("an HTML error page is summarised, not dumped", "[api_error]") {
    std::string page = "<html>\n  <head><title>502 Bad Gateway</title></head>\n<body>\x01" +
                       std::string(500, 'x') + "</body></html>";
    ApiError error = apiErrorFromResponse(502, page);
    std::string message = error.what();
    CHECK(error.code() == 502);
    CHECK(message.rfind("the server responded with status 502 (Bad Gateway) and a "
                        "non-Kubernetes body: <html> <head><title>502 Bad Gateway</title>",
                        0) == 0);
    std::string excerpt = message.substr(message.find("body: ") + 6);
    CHECK(excerpt.size() == 80);
    CHECK(message.find('\x01') == std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("JSON that is not a Status is also a non-Kubernetes body", "[api_error]") {
    ApiError error = apiErrorFromResponse(500, R"({"error":"boom"})");
    CHECK(error.reason() == "InternalError");
    CHECK(std::string(error.what()) == R"(the server responded with status 500 (Internal Server )"
                                       R"(Error) and a non-Kubernetes body: {"error":"boom"})");
}

TEST_CASE("an empty body gets a message from the status code", "[api_error]") {
    CHECK(std::string(apiErrorFromResponse(404, "").what()) ==
          "the server could not find the requested resource");
    CHECK(std::string(apiErrorFromResponse(401, "").what()) ==
          "the server has asked for the client to provide credentials");
    CHECK(apiErrorFromResponse(401, "").reason() == "Unauthorized");
    CHECK(std::string(apiErrorFromResponse(503, "").what()) ==
          "the server is currently unable to handle the request");
}
