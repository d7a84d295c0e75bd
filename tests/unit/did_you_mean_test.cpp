// "Did you mean" for a mistyped flag and a mistyped sandbox name (issue 34 point 10), offline.
#include <catch2/catch.hpp>

#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";

json sandboxNamed(const std::string& name) {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata", {{"name", name}, {"namespace", "team1"}, {"uid", "uid-" + name}}}};
}

// A namespace holding `names` in which `missing` is not found.
void serveSandboxesWithout(TestHost& host, const std::string& missing,
                           const std::vector<std::string>& names) {
    host.serveSandboxGroup();
    host.server.on("GET", kSandboxes + "/" + missing, 404, testing::kNotFoundBody);
    json items = json::array();
    for (const auto& name : names) items.push_back(sandboxNamed(name));
    host.server.onJson("GET", kSandboxes, 200,
                       {{"kind", "SandboxList"}, {"metadata", json::object()}, {"items", items}});
}

}  // namespace

TEST_CASE("a mistyped flag is named with the flag it nearly spells", "[conventions][usage]") {
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    const std::vector<Case> cases = {
        {{"agents", "import", "from-image", "--name", "a", "--envvar", "A=1"},
         "unknown flag: --envvar; did you mean --envVar?"},
        {{"agents", "import", "from-image", "--name", "a", "--image", "busybox"},
         "unknown flag: --image; did you mean --container-image?"},
        {{"sandbox", "list", "--namespcae", "x"},
         "unknown flag: --namespcae; did you mean --namespace?"},
        {{"sandbox", "run", "--fiel", "a.py", "--", "python3", "a.py"},
         "unknown flag: --fiel; did you mean --file?"},
    };
    for (const auto& c : cases) {
        TestHost host;
        INFO(c.args[1] << " " << c.message);
        CHECK(host.run(c.args) != 0);
        CHECK(host.err.str().find(c.message) != std::string::npos);
        CHECK(host.server.requests.empty());
    }
    TestHost far;
    CHECK(far.run({"sandbox", "list", "--zzzzzzzz"}) == kExitUsage);
    CHECK(far.err.str().find("unknown flag: --zzzzzzzz (see") != std::string::npos);
}

TEST_CASE("sandbox get of a mistyped name suggests the sandbox it nearly spells",
          "[conventions][names]") {
    TestHost host;
    serveSandboxesWithout(host, "order", {"orders", "billing"});
    CHECK(host.run({"sandbox", "get", "order"}) == kExitError);
    CHECK(host.err.str() ==
          "error: sandbox \"order\" not found in namespace \"team1\"; did you mean \"orders\"?\n");
    CHECK(host.server.writes().empty());

    TestHost none;
    serveSandboxesWithout(none, "zebra", {"orders"});
    CHECK(none.run({"sandbox", "get", "zebra"}) == kExitError);
    CHECK(none.err.str().find("; run \"rossoctl sandbox list -n team1\"") != std::string::npos);
}

TEST_CASE("sandbox verify of a mistyped name suggests the sandbox and verifies nothing",
          "[conventions][names]") {
    TestHost host;
    serveSandboxesWithout(host, "ordrs", {"orders"});
    CHECK(host.run({"sandbox", "verify", "ordrs"}) == kExitError);
    CHECK(host.err.str().find("not found in namespace team1; did you mean \"orders\"?") !=
          std::string::npos);
    CHECK(host.server.writes().empty());
}
