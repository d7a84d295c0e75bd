// rossoctl __complete KIND: the names the shell completion scripts offer, read from the fake
// apiserver; on any failure nothing on stdout or stderr and exit 0, so a TAB never prints an
// error into the user's command line (issue 18 point 1).
#include <catch2/catch.hpp>

#include "test_host.hpp"

using namespace rossoctl;
using testing::TestHost;
using json = nlohmann::json;

namespace {

const std::string kSandboxesTeam2 = "/apis/agents.x-k8s.io/v1beta1/namespaces/team2/sandboxes";
const std::string kSandboxesTeam1 = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kRuntimes = "/apis/agent.rossoctl.dev/v1alpha1/namespaces/team1/agentruntimes";

json named(const std::vector<std::string>& names) {
    json items = json::array();
    for (const auto& name : names) items.push_back({{"metadata", {{"name", name}}}});
    return {{"kind", "List"}, {"metadata", {{"resourceVersion", "1"}}}, {"items", items}};
}

std::string queryOf(const kube::HttpRequest& request) {
    const size_t mark = request.url.find('?');
    return mark == std::string::npos ? "" : request.url.substr(mark + 1);
}

}  // namespace

TEST_CASE("__complete sandboxes lists the sandboxes of the namespace -n names",
          "[complete][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxesTeam2, 200, named({"orders", "billing"}));
    REQUIRE(host.run({"__complete", "sandboxes", "-n", "team2"}) == 0);
    CHECK(host.out.str() == "orders\nbilling\n");
    CHECK(host.err.str().empty());
    auto lists = host.server.requestsTo("GET", kSandboxesTeam2);
    REQUIRE(lists.size() == 1);
    CHECK(queryOf(lists[0]).find("labelSelector") == std::string::npos);
    CHECK(queryOf(lists[0]).find("limit=500") != std::string::npos);
    CHECK(host.server.writes().empty());
}

TEST_CASE("__complete sandbox-paths offers NAME: for sandbox cp", "[complete][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxesTeam1, 200, named({"orders"}));
    REQUIRE(host.run({"__complete", "sandbox-paths"}) == 0);
    CHECK(host.out.str() == "orders:\n");
}

TEST_CASE("__complete agents lists only the runtimes rossoctl manages", "[complete][command]") {
    TestHost host;
    host.server.onJson("GET", kRuntimes, 200, named({"triage"}));
    REQUIRE(host.run({"__complete", "agents"}) == 0);
    CHECK(host.out.str() == "triage\n");
    auto lists = host.server.requestsTo("GET", kRuntimes);
    REQUIRE(lists.size() == 1);
    CHECK(queryOf(lists[0]).find("labelSelector=app.kubernetes.io%2Fmanaged-by%3Drossoctl") !=
          std::string::npos);
}

TEST_CASE("__complete projects lists the namespaces labelled as projects, in no namespace",
          "[complete][command]") {
    TestHost host;
    host.server.onJson("GET", "/api/v1/namespaces", 200, named({"team1", "team2"}));
    REQUIRE(host.run({"__complete", "projects", "-n", "ignored"}) == 0);
    CHECK(host.out.str() == "team1\nteam2\n");
    auto lists = host.server.requestsTo("GET", "/api/v1/namespaces");
    REQUIRE(lists.size() == 1);
    CHECK(queryOf(lists[0]).find("labelSelector=rossoctl.dev%2Fsandbox-project%3Dtrue") !=
          std::string::npos);
}

TEST_CASE("__complete prints nothing and exits 0 when the apiserver refuses or is unreachable",
          "[complete][command]") {
    SECTION("403") {
        TestHost host;
        host.serveSandboxGroup();
        host.server.on("GET", kSandboxesTeam1, 403,
                       testing::statusBody(403, "Forbidden",
                                           "sandboxes is forbidden: User \"dev\" cannot list"));
        CHECK(host.run({"__complete", "sandboxes"}) == 0);
        CHECK(host.out.str().empty());
        CHECK(host.err.str().empty());
    }
    SECTION("404: the API group is not installed") {
        TestHost host;
        CHECK(host.run({"__complete", "agents"}) == 0);
        CHECK(host.out.str().empty());
        CHECK(host.err.str().empty());
    }
    SECTION("connection refused") {
        TestHost host;
        host.server.onFail("GET", "/api/v1/namespaces", kube::TransportError::Kind::Connect,
                           "connection refused");
        CHECK(host.run({"__complete", "projects"}) == 0);
        CHECK(host.out.str().empty());
        CHECK(host.err.str().empty());
    }
    SECTION("a reply that is no JSON") {
        TestHost host;
        host.server.on("GET", "/api/v1/namespaces", 200, "<html>proxy login</html>");
        CHECK(host.run({"__complete", "projects"}) == 0);
        CHECK(host.out.str().empty());
        CHECK(host.err.str().empty());
    }
}

TEST_CASE("__complete of an unknown kind sends nothing and prints nothing", "[complete][command]") {
    TestHost host;
    CHECK(host.run({"__complete", "secrets"}) == 0);
    CHECK(host.out.str().empty());
    CHECK(host.server.requests.empty());
}

TEST_CASE("__complete never prints the token, even at -v 9 (request headers traced)",
          "[complete][command]") {
    TestHost host;
    host.serveSandboxGroup();
    host.server.on("GET", kSandboxesTeam1, 401, testing::statusBody(401, "Unauthorized"));
    CHECK(host.run({"__complete", "sandboxes", "-v", "9"}) == 0);
    CHECK(host.out.str().empty());
    CHECK(host.err.str().find("t0ken") == std::string::npos);
    CHECK(host.err.str().find(kSandboxesTeam1) != std::string::npos);  // the trace is there
    const auto& request = host.server.requestsTo("GET", kSandboxesTeam1);
    REQUIRE(request.size() == 1);  // the token was sent, to the server only
}

TEST_CASE("__complete offers only names Kubernetes could have given, none a server made up",
          "[complete][command][hostile]") {
    // A control character, a line break or a space would reach the user's command line (or be
    // split into two words by the shell): those are no object's name, so none is offered.
    for (const std::string kind : {"sandboxes", "sandbox-paths", "projects"}) {
        INFO(kind);
        TestHost host;
        host.serveSandboxGroup();
        const json names = named({"orders", "evil\x1b]0;PWNED\x07", "two\nlines", "has space",
                                  "quote'", "Upper", "ok.sub"});
        host.server.onJson("GET", kSandboxesTeam1, 200, names);
        host.server.onJson("GET", "/api/v1/namespaces", 200, names);
        REQUIRE(host.run({"__complete", kind}) == 0);
        const std::string suffix = kind == "sandbox-paths" ? ":" : "";
        CHECK(host.out.str() == "orders" + suffix + "\nok.sub" + suffix + "\n");
    }
    // An item without a name, or with a number there, is skipped; the others are still offered.
    TestHost odd;
    odd.serveSandboxGroup();
    json items = named({"orders"});
    items["items"].push_back({{"metadata", {{"name", 7}}}});
    items["items"].push_back(json::object());
    items["items"].push_back(named({"billing"})["items"][0]);
    odd.server.onJson("GET", kSandboxesTeam1, 200, items);
    REQUIRE(odd.run({"__complete", "sandboxes"}) == 0);
    CHECK(odd.out.str() == "orders\nbilling\n");
}
