// What a pod or server sends that once overflowed the stack (issue 29 review): std::regex's
// recursion per character, and JSON nested past what copying and dumping can recurse into.
#include <catch2/catch.hpp>
#include <sstream>

#include "kube_fakes.hpp"
#include "rossoctl/kube/base64.hpp"
#include "rossoctl/kube/wait.hpp"
#include "rossoctl/ui/printer.hpp"
#include "rossoctl/verify/pod_checks.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::ClientFixture;

namespace {

std::string base64Url(const std::string& text) {
    std::string encoded = kube::base64Encode(text);
    for (auto& c : encoded) c = c == '+' ? '-' : c == '/' ? '_' : c;
    while (!encoded.empty() && encoded.back() == '=') encoded.pop_back();
    return encoded;
}

}  // namespace

TEST_CASE("credentials by shape: long values are scanned whole, without recursion",
          "[hostile][verify][stack]") {
    // "eyJ" and a million letters crashed the JWT regex; it is no token.
    CHECK(verify::credentialShape("eyJ" + std::string(1'000'000, 'A'), "").verdict ==
          verify::Verdict::Pass);
    // A service-account token after a megabyte of padding is still found: no cut, no pass.
    const std::string token = "eyJhbGciOiJSUzI1NiJ9." +
                              base64Url(R"({"iss":"kubernetes/serviceaccount","sub":"x"})") +
                              ".c2ln";
    CHECK(verify::credentialShape(std::string(1'000'000, 'A') + "." + token, "").verdict ==
          verify::Verdict::Fail);
    CHECK(verify::credentialShape(token.substr(0, 21) + "eyJ" + token.substr(21), "").verdict ==
          verify::Verdict::Pass);  // a header followed by eyJ... with no valid claims
    // 200,000 line breaks crashed the kubeconfig regexes; a kubeconfig after them is found.
    const std::string kubeconfig =
        "apiVersion: v1\nclusters:\n- name: c\nusers:\n- name: u\n  user:\n    token: abc\n";
    CHECK(verify::credentialShape(std::string(200'000, '\n'), "").verdict == verify::Verdict::Pass);
    CHECK(verify::credentialShape(std::string(200'000, '\n') + kubeconfig, "").verdict ==
          verify::Verdict::Fail);
    CHECK(verify::credentialShape(R"({"clusters": [], "users": [{"user": {"token" : "t"}}]})", "")
              .verdict == verify::Verdict::Fail);
    CHECK(verify::credentialShape("clusters and users, a token: none of it keyed", "").verdict ==
          verify::Verdict::Pass);
}

TEST_CASE("-o yaml of a long date-like string does not overflow the stack",
          "[hostile][yaml][stack]") {
    std::ostringstream out;
    ui::printYaml(out, json{{"a", "2026-01-02" + std::string(1'000'000, ' ') + "x"}});
    CHECK(out.str().size() > 1'000'000);
    std::ostringstream date;
    ui::printYaml(date, json{{"a", "2026-01-02"}});
    CHECK(date.str() == "a: \"2026-01-02\"\n");  // still quoted: YAML 1.1 reads it as a date
}

TEST_CASE("a response or watch event nested 200,000 deep is refused, not copied",
          "[hostile][server][stack]") {
    const std::string deep = std::string(200'000, '[') + std::string(200'000, ']');
    ClientFixture get;
    get.server.reply(200, R"({"kind":"Sandbox","metadata":{"name":"orders"},"spec":)" + deep + "}");
    CHECK_THROWS_WITH(get.client->get(kube::resources::pods(), "team1", "orders"),
                      Catch::Contains("nested over 256 levels"));

    ClientFixture watch;
    watch.server.reply(200, R"({"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]})");
    watch.server.stream(
        {R"({"type":"ADDED","object":{"metadata":{"name":"p"},"spec":)" + deep + "}}\n"});
    kube::WaitOptions options;
    options.timeout = std::chrono::minutes(1);
    CHECK_THROWS_WITH(kube::waitForSet(*watch.client, watch.clock, kube::resources::pods(), "team1",
                                       options, [](const kube::ObjectSet&) { return false; }),
                      Catch::Contains("nested over 256 levels"));

    // -v 8 masks a traced body by walking it: a deep one is masked as text instead.
    ClientFixture traced(8);
    traced.server.reply(403, deep);  // not retried, as a 5xx is
    CHECK_THROWS(traced.client->get(kube::resources::pods(), "team1", "orders"));

    // As deep as real objects go still parses.
    const std::string fine = std::string(200, '[') + std::string(200, ']');
    ClientFixture ok;
    ok.server.reply(200, R"({"kind":"Pod","spec":)" + fine + "}");
    CHECK(ok.client->get(kube::resources::pods(), "team1", "orders")["kind"] == "Pod");
}

TEST_CASE("a sandbox without metadata is no crash", "[hostile][server][stack]") {
    testing::TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes/orders",
                       200, {{"apiVersion", "agents.x-k8s.io/v1beta1"}, {"kind", "Sandbox"}});
    host.server.onJson(
        "GET", "/api/v1/namespaces/team1/pods", 200,
        {{"kind", "PodList"}, {"metadata", json::object()}, {"items", json::array()}});
    // Each reads the sandbox's metadata (its pod's name, its UID): a clean answer, no crash.
    for (const char* command : {"get", "exec", "logs", "restart"}) {
        std::vector<std::string> args = {"sandbox", command, "orders"};
        if (std::string(command) == "exec") args.insert(args.end(), {"--", "true"});
        INFO(command);
        const int exitCode = host.run(args);
        CHECK((exitCode == 0 || exitCode == 1));
    }
}
