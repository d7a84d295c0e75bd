#include "rossoctl/kube/trace.hpp"

#include <catch2/catch.hpp>
#include <sstream>

using namespace rossoctl::kube;

namespace {

HttpRequest sampleRequest() {
    HttpRequest request;
    request.method = "GET";
    request.url = "https://api.test:6443/api/v1/namespaces/default/pods";
    request.headers = {{"Accept", "application/json"},
                       {"Authorization", "Bearer abcdef-secret-token"}};
    return request;
}

}  // namespace

TEST_CASE("-v 6 prints method, URL, status and time only", "[trace]") {
    std::ostringstream out;
    RequestTracer tracer(out, 6);
    tracer.request(sampleRequest());
    tracer.response(sampleRequest(), 200, std::chrono::milliseconds(12), R"({"items":[]})");
    CHECK(out.str() ==
          "GET https://api.test:6443/api/v1/namespaces/default/pods 200 OK in 12 milliseconds\n");
}

TEST_CASE("below -v 6 nothing is printed", "[trace]") {
    std::ostringstream out;
    RequestTracer tracer(out, 5);
    tracer.request(sampleRequest());
    tracer.response(sampleRequest(), 200, std::chrono::milliseconds(1), "{}");
    tracer.failure(sampleRequest(), "refused");
    CHECK(out.str().empty());
}

TEST_CASE("-v 7 adds request headers with Authorization masked", "[trace]") {
    std::ostringstream out;
    RequestTracer tracer(out, 7);
    tracer.request(sampleRequest());
    CHECK(out.str().find("    Accept: application/json\n") != std::string::npos);
    CHECK(out.str().find("    Authorization: Bearer <masked>\n") != std::string::npos);
    CHECK(out.str().find("abcdef-secret-token") == std::string::npos);
    CHECK(out.str().find("Response Body") == std::string::npos);
}

TEST_CASE("-v 8 adds bodies, truncated to 10 KiB", "[trace]") {
    std::ostringstream out;
    RequestTracer tracer(out, 8);
    tracer.response(sampleRequest(), 200, std::chrono::milliseconds(3), std::string(20000, 'a'));
    std::string text = out.str();
    CHECK(text.find("Response Body: " + std::string(10240, 'a') + " [truncated 9760 bytes]") !=
          std::string::npos);
}

TEST_CASE("failures are traced with the reason", "[trace]") {
    std::ostringstream out;
    RequestTracer tracer(out, 6);
    tracer.failure(sampleRequest(), "connection refused");
    CHECK(out.str() ==
          "GET https://api.test:6443/api/v1/namespaces/default/pods failed: connection refused\n");
}

TEST_CASE("maskHeaderValue hides credentials but keeps the scheme", "[trace]") {
    CHECK(maskHeaderValue("Authorization", "Bearer abc") == "Bearer <masked>");
    CHECK(maskHeaderValue("authorization", "Basic dXNlcjpwYXNz") == "Basic <masked>");
    CHECK(maskHeaderValue("Authorization", "opaque") == "<masked>");
    CHECK(maskHeaderValue("Accept", "application/json") == "application/json");
}

TEST_CASE("maskSecrets blanks JSON token and key values", "[trace]") {
    CHECK(maskSecrets(R"({"status":{"token":"tok123","expirationTimestamp":"x"}})") ==
          R"({"status":{"token":"***","expirationTimestamp":"x"}})");
    CHECK(maskSecrets(R"({"kind":"ExecCredential","status":{"clientKeyData":"KEYDATA"}})") ==
          R"({"kind":"ExecCredential","status":{"clientKeyData":"***"}})");
    CHECK(maskSecrets(R"({"password" : "hunter2", "user":"me"})") ==
          R"({"password" : "***", "user":"me"})");
    CHECK(maskSecrets(R"({"name":"token","value":"visible"})") ==
          R"({"name":"token","value":"visible"})");
}

TEST_CASE("maskSecrets reaches JSON escaped inside a string", "[trace]") {
    std::string annotation = R"({"last-applied":"{\"token\":\"inner-secret\",\"a\":\"b\"}"})";
    std::string masked = maskSecrets(annotation);
    CHECK(masked.find("inner-secret") == std::string::npos);
    CHECK(masked.find(R"(\"a\":\"b\")") != std::string::npos);
}

TEST_CASE("maskSecrets blanks YAML secret lines", "[trace]") {
    std::string kubeconfig =
        "users:\n- name: me\n  user:\n    client-key-data: LS0tS0VZ\n    token: abc\n"
        "    client-certificate-data: LS0tQ0VSVA==\n";
    std::string masked = maskSecrets(kubeconfig);
    CHECK(masked.find("LS0tS0VZ") == std::string::npos);
    CHECK(masked.find("token: ***") != std::string::npos);
    CHECK(masked.find("client-certificate-data: LS0tQ0VSVA==") != std::string::npos);
}

TEST_CASE("maskSecrets removes PEM private keys, also cut-off ones", "[trace]") {
    std::string pem =
        "cert\n-----BEGIN CERTIFICATE-----\nPUBLIC\n-----END CERTIFICATE-----\n"
        "-----BEGIN EC PRIVATE KEY-----\nSECRETKEY\n-----END EC PRIVATE KEY-----\n";
    std::string masked = maskSecrets(pem);
    CHECK(masked.find("SECRETKEY") == std::string::npos);
    CHECK(masked.find("PUBLIC") != std::string::npos);
    CHECK(masked.find("-----END EC PRIVATE KEY-----") != std::string::npos);
    CHECK(maskSecrets("-----BEGIN PRIVATE KEY-----\nHALFAKEY").find("HALFAKEY") ==
          std::string::npos);
}

TEST_CASE("maskSecrets removes bearer tokens and JWTs anywhere", "[trace]") {
    CHECK(maskSecrets("header was Bearer abc.def-ghi, then") == "header was Bearer ***, then");
    std::string jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJtZSJ9.c2lnbmF0dXJl";
    CHECK(maskSecrets("id " + jwt + " end") == "id *** end");
}
