// A server's strings on the paths the hostile-server review (H3) found raw: version's Server
// Version, project describe's fields, -o jsonpath on a terminal and sandbox set-env --list. A
// window title (OSC 0), a clipboard write (OSC 52) and a screen clear reached the terminal.
#include <catch2/catch.hpp>

#include "json_fixtures.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kNamespaces = "/api/v1/namespaces";
// What the reviewer's s_poison.py puts in every string: title, clear, clipboard.
const std::string kPoison = "\x1b]0;PWNTITLE\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07";
const std::string kPoisonShown = "\\x1b]0;PWNTITLE\\x07\\x1b[2J\\x1b]52;c;cHduZWQ=\\x07";

size_t count(const std::string& text, char byte) {
    return static_cast<size_t>(std::count(text.begin(), text.end(), byte));
}

// No ESC and no BEL, raw: nothing that steers a terminal.
void checkNoControls(const std::string& text) {
    INFO(ui::escapeForTerminal(text));
    CHECK(count(text, '\x1b') == 0);
    CHECK(count(text, '\x07') == 0);
}

json poisonedSandbox() {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", "orders" + kPoison},
              {"namespace", "team1"},
              {"uid", "u1"},
              {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
            {"spec",
             {{"podTemplate",
               {{"spec",
                 {{"containers",
                   {{{"name", "agent" + kPoison},
                     {"image", "busybox"},
                     {"env", {{{"name", "E"}, {"value", "v" + kPoison}}}}}}}}}}}}},
            {"status",
             {{"conditions",
               {{{"type", "Ready"},
                 {"status", "False"},
                 {"reason", "R"},
                 {"message", "first line\n\tsecond" + kPoison}}}}}}};
}

}  // namespace

TEST_CASE("version prints the server's gitVersion escaped", "[hostile][escape][version]") {
    TestHost host;
    host.stdoutIsTerminal = true;
    host.server.onJson("GET", "/version", 200, {{"gitVersion", "v1.30" + kPoison}});
    REQUIRE(host.run({"version"}) == 0);
    checkNoControls(host.out.str());
    CHECK(host.out.str().find("Server Version: v1.30" + kPoisonShown + "\n") != std::string::npos);

    TestHost number;  // not a string: unknown, as when it is missing
    number.server.onJson("GET", "/version", 200, {{"gitVersion", 130}});
    REQUIRE(number.run({"version"}) == 0);
    CHECK(number.out.str().find("Server Version: unknown\n") != std::string::npos);
}

TEST_CASE("project describe prints the server's names, phase, labels and kinds escaped",
          "[hostile][escape][project]") {
    TestHost host;
    host.stdoutIsTerminal = true;
    for (const std::string& prefix : std::vector<std::string>{
             kNamespaces + "/team1/*", "/apis/networking.k8s.io/v1/namespaces/team1/*"})
        host.server.onJson("GET", prefix, 200, list({}));
    host.server.onJson("GET", kNamespaces + "/team1", 200,
                       {{"kind", "Namespace"},
                        {"metadata",
                         {{"name", "team1" + kPoison},
                          {"creationTimestamp", "2026-01-01T00:00:00Z"},
                          {"labels",
                           {{"pod-security.kubernetes.io/enforce", "restricted" + kPoison},
                            {"app.kubernetes.io/managed-by", "rossoctl" + kPoison}}},
                          {"annotations", {{"rossoctl.dev/default-lifetime", "24h" + kPoison}}}}},
                        {"status", {{"phase", "Active" + kPoison}}}});
    host.server.onJson("GET", kNamespaces + "/team1/resourcequotas", 200,
                       list({{{"metadata", {{"name", "quota" + kPoison}}},
                              {"spec", {{"hard", {{"pods", "20"}}}}}}}));
    host.server.onJson("GET", kNamespaces + "/team1/limitranges", 200,
                       list({{{"metadata", {{"name", "limits" + kPoison}}},
                              {"spec", {{"limits", {{{"type", "Container" + kPoison}}}}}}}}));
    host.server.onJson(
        "GET", "/apis/networking.k8s.io/v1/namespaces/team1/networkpolicies", 200,
        list({{{"kind", "NetworkPolicy" + kPoison},
               {"metadata", {{"name", "deny" + kPoison}}},
               {"spec",
                {{"podSelector", json::object()}, {"policyTypes", {"Ingress", "Egress"}}}}}}));
    REQUIRE(host.run({"project", "describe", "team1"}) == 0);
    const std::string out = host.out.str();
    checkNoControls(out);
    for (const std::string& shown :
         {"Name:              team1" + kPoisonShown, "Status:            Active" + kPoisonShown,
          "enforce=restricted" + kPoisonShown, "Default lifetime:  24h" + kPoisonShown,
          "Managed by:        rossoctl" + kPoisonShown, "Quota quota" + kPoisonShown,
          "Limits limits" + kPoisonShown + " (per Container" + kPoisonShown,
          // the kind lower-cased, as kubectl names a resource
          "networkpolicy\\x1b]0;pwntitle\\x07\\x1b[2j\\x1b]52;c;chduzwq=\\x07/deny" +
              kPoisonShown}) {
        INFO(shown);
        CHECK(out.find(shown) != std::string::npos);
    }
}

TEST_CASE("-o jsonpath on a terminal escapes the server's strings; into a pipe, as they are",
          "[hostile][escape][jsonpath]") {
    const std::vector<std::string> names = {"sandbox", "list", "-o",
                                            "jsonpath={.items[*].metadata.name}"};
    const std::vector<std::string> message = {"sandbox", "get", "orders", "-o",
                                              "jsonpath={.status.conditions[0].message}"};
    for (const bool terminal : {true, false}) {
        INFO("terminal " << terminal);
        TestHost host;
        host.stdoutIsTerminal = terminal;
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes, 200, list({poisonedSandbox()}));
        host.server.onJson("GET", kSandboxes + "/orders", 200, poisonedSandbox());
        REQUIRE(host.run(names) == 0);
        REQUIRE(host.run(message) == 0);
        if (terminal) {
            checkNoControls(host.out.str());
            // A value's line breaks and tabs are kept, as a pod's logs on a terminal.
            CHECK(host.out.str() ==
                  "orders" + kPoisonShown + "first line\n\tsecond" + kPoisonShown);
        } else {
            // What a script reads, as kubectl prints it.
            CHECK(host.out.str() == "orders" + kPoison + "first line\n\tsecond" + kPoison);
        }
    }
}

TEST_CASE("sandbox set-env --list prints the pod spec's names and values escaped",
          "[hostile][escape][sandbox]") {
    TestHost host;
    host.stdoutIsTerminal = true;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200, poisonedSandbox());
    REQUIRE(host.run({"sandbox", "set-env", "orders", "--list"}) == 0);
    checkNoControls(host.out.str());
    CHECK(host.out.str() ==
          "# sandbox/orders, container agent" + kPoisonShown + "\nE=v" + kPoisonShown + "\n");
}
