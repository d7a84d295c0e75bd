// A server's words on paths other than the main error handler (issue 29 review): its Status
// message, the names and reasons it lists, reach the terminal escaped, whichever command prints
// them and in every table.
#include <catch2/catch.hpp>
#include <sstream>

#include "json_fixtures.hpp"
#include "kube_fakes.hpp"
#include "rossoctl/app/run/run_pod.hpp"
#include "rossoctl/kube/api_error.hpp"
#include "rossoctl/ui/color.hpp"
#include "rossoctl/ui/printer.hpp"
#include "rossoctl/ui/terminal_text.hpp"
#include "rossoctl/verify/report.hpp"
#include "test_host.hpp"

using namespace rossoctl;
using nlohmann::json;
using rossoctl::testing::list;
using rossoctl::testing::TestHost;

namespace {

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/team1/sandboxes";
const std::string kPods = "/api/v1/namespaces/team1/pods";
// A title, a clipboard write (OSC 52) and a screen clear, as the reviewer sent them.
const std::string kEscMessage =
    "denied \x1b]0;PWNED\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\xc2\x9b"
    "31m";
const std::string kEvilName = "orders\x1b]0;PWNED\x07\x1b[8m";

json escStatus() {
    return {{"kind", "Status"}, {"code", 403}, {"reason", "Forbidden"}, {"message", kEscMessage}};
}

// Nothing that steers a terminal: no ESC, BEL or C1 CSI, raw.
void checkNoControls(const std::string& text) {
    INFO(ui::escapeForTerminal(text));
    CHECK(text.find('\x1b') == std::string::npos);
    CHECK(text.find('\x07') == std::string::npos);
    CHECK(text.find("\xc2\x9b") == std::string::npos);
}

json evilSandbox() {
    return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
            {"kind", "Sandbox"},
            {"metadata",
             {{"name", kEvilName},
              {"namespace", "team1"},
              {"uid", "u1"},
              {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
            {"status",
             {{"conditions",
               {{{"type", "Ready"},
                 {"status", "False"},
                 {"reason", "X\x1b[2J"},
                 {"message", "m\x1b]52;c;Zm9v\x07"}}}}}}};
}

}  // namespace

TEST_CASE("an ApiError's message, reason and causes carry no control characters",
          "[hostile][escape]") {
    json body = escStatus();
    body["reason"] = "Forbidden\x1b[2J";
    body["details"] = {
        {"causes", {{{"reason", "R\x1b[1m"}, {"message", "c\x07"}, {"field", "f"}}}}};
    const auto error = kube::apiErrorFromResponse(403, body.dump());
    for (const std::string& text :
         {std::string(error.what()), error.statusMessage(), error.reason(),
          error.causes().at(0).reason, error.causes().at(0).message})
        checkNoControls(text);
    CHECK(error.statusMessage().find("denied \\x1b]0;PWNED\\x07") == 0);
    CHECK(error.reason() == "Forbidden\\x1b[2J");
    json lines = escStatus();
    lines["message"] = "first\nError: fake line";
    CHECK(kube::apiErrorFromResponse(403, lines.dump()).statusMessage() ==
          "first\\nError: fake line");
}

TEST_CASE("sandbox restart, suspend and resume print a server's error escaped",
          "[hostile][escape]") {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"sandbox", "restart", "orders"},
          std::vector<std::string>{"sandbox", "suspend", "orders"},
          std::vector<std::string>{"sandbox", "resume", "orders"}}) {
        TestHost host;
        host.stderrIsTerminal = true;
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes + "/orders", 403, escStatus());
        host.server.onJson("PATCH", kSandboxes + "/orders", 403, escStatus());
        INFO(args[1]);
        CHECK(host.run(args) == kExitError);
        checkNoControls(host.out.str() + host.err.str());
        CHECK(host.err.str().find("\\x1b]52;c;") != std::string::npos);
    }
}

TEST_CASE("sandbox list, -o name and top print a server's names and reasons escaped",
          "[hostile][escape]") {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"sandbox", "list"},
          std::vector<std::string>{"sandbox", "list", "-o", "wide"},
          std::vector<std::string>{"sandbox", "list", "-o", "name"},
          std::vector<std::string>{"sandbox", "top"}}) {
        TestHost host;
        host.stdoutIsTerminal = true;
        host.serveSandboxGroup();
        host.server.onJson("GET", kSandboxes, 200, list({evilSandbox()}));
        host.server.onJson("GET", kPods, 200, list({}));
        INFO(args.back());
        host.run(args);
        checkNoControls(host.out.str() + host.err.str());
        CHECK(host.out.str().find("orders\\x1b]0;PWNED\\x07") != std::string::npos);
    }
}

TEST_CASE("sandbox get's did-you-mean names the server's sandbox escaped", "[hostile][escape]") {
    TestHost host;
    host.stderrIsTerminal = true;
    host.serveSandboxGroup();
    json near = evilSandbox();
    near["metadata"]["name"] = "ordersx\x1b]52;c;Zm9v\x07\xe2\x80\xae";
    host.server.onJson("GET", kSandboxes + "/orders", 404,
                       {{"kind", "Status"}, {"code", 404}, {"reason", "NotFound"}});
    host.server.onJson("GET", kSandboxes, 200, list({near}));
    CHECK(host.run({"sandbox", "get", "orders"}) == kExitError);
    checkNoControls(host.err.str());
    CHECK(host.err.str().find("\xe2\x80\xae") == std::string::npos);  // no bidi override raw
    CHECK(host.err.str().find("did you mean \"ordersx\\x1b]52;c;Zm9v\\x07") != std::string::npos);
}

TEST_CASE("a table escapes every cell, then paints its colours", "[hostile][escape][printer]") {
    ui::Table table;
    table.headers = {"NAME", "STATE"};
    table.rows = {{"a\x1b[2J", "ok"}, {"b", "bad\x07"}};
    table.paints = {{0, 1, ui::Color::Green}};
    std::ostringstream out;
    ui::printTable(out, table, false, false);
    const std::string green = ui::paint(ui::Color::Green, "ok", true);
    CHECK(out.str() ==
          "NAME       STATE\n"
          "a\\x1b[2J   " +
              green +
              "\n"
              "b          bad\\x07\n");
    std::ostringstream streamed;
    ui::StreamingTable streaming(streamed, true, false);
    streaming.print(table);
    CHECK(streamed.str().find("a\\x1b[2J") == 0);
    CHECK(streamed.str().find('\x07') == std::string::npos);
}

TEST_CASE("verify's table names the server's pod and container escaped", "[hostile][escape]") {
    verify::SandboxReport report;
    report.name = "orders";
    report.namespaceName = "team1";
    report.pod = "orders\x1b]0;PWNED\x07";
    report.container = "agent\x1b[2J";
    verify::CheckResult check;
    check.kind = verify::CheckKind::Egress;
    check.staticPart = {verify::Verdict::Pass, {"static"}, ""};
    check.livePart = {verify::Verdict::Fail, {"curl said \x1b[31mred"}, "curl"};
    report.checks = {check};
    std::ostringstream out;
    verify::printReportTable(out, report, false, true);
    const std::string text = out.str();
    // Only the verdict's colour is an escape sequence.
    const std::string red = ui::paint(ui::Color::Red, "fail", true);
    std::string withoutColour = text;
    withoutColour.replace(withoutColour.find(red), red.size(), "fail");
    checkNoControls(withoutColour);
    CHECK(text.find("pod orders\\x1b]0;PWNED\\x07, container agent\\x1b[2J)") != std::string::npos);
    CHECK(text.find("curl said \\x1b[31mred") != std::string::npos);
}

TEST_CASE("sandbox exec's killed note escapes the reason the pod's status gives",
          "[hostile][escape]") {
    TestHost host;
    host.stderrIsTerminal = true;
    host.serveSandboxGroup();
    host.server.onJson("GET", kSandboxes + "/orders", 200,
                       {{"kind", "Sandbox"},
                        {"metadata", {{"name", "orders"}, {"namespace", "team1"}, {"uid", "s1"}}},
                        {"status", {{"selector", "agents.x-k8s.io/sandbox-name-hash=abc"}}}});
    const json pod = {
        {"metadata",
         {{"name", "orders"},
          {"namespace", "team1"},
          {"uid", "p1"},
          {"labels", {{"agents.x-k8s.io/sandbox-name-hash", "abc"}}},
          {"ownerReferences",
           {{{"kind", "Sandbox"}, {"name", "orders"}, {"uid", "s1"}, {"controller", true}}}}}},
        {"spec", {{"containers", {{{"name", "agent"}}}}}},
        {"status",
         {{"phase", "Running"},
          {"containerStatuses",
           {{{"name", "agent"},
             {"state", {{"running", json::object()}}},
             {"lastState", {{"terminated", {{"reason", "Killed\x1b]0;PWNED\x07"}}}}}}}}}}};
    host.server.onJson("GET", kPods + "/orders", 200, pod);
    host.server.onJson("GET", kPods, 200, list({pod}));
    host.server.onExec("team1", "orders", testing::execRan("", "", 137));
    CHECK(host.run({"sandbox", "exec", "orders", "--", "true"}) == 137);
    INFO(ui::escapeForTerminal(host.err.str()));
    CHECK(host.err.str().find("killed (exit 137): the container was terminated (Killed\\x1b]0;") !=
          std::string::npos);
    checkNoControls(host.err.str());
}

TEST_CASE("sandbox run's notes escape the names of the pods it reaped", "[hostile][escape]") {
    TestHost host;
    host.stderrIsTerminal = true;
    const std::string evil = "rossoctl-run-x\x1b]0;PWNED\x07";
    const json leftover = {
        {"metadata",
         {{"name", evil},
          {"uid", "u-left"},
          {"labels",
           {{app::run::kRunLabel, "true"}, {"app.kubernetes.io/managed-by", "rossoctl"}}}}},
        {"status", {{"phase", "Failed"}}}};
    host.server.onJson("GET", kPods, 200, list({leftover}));
    host.server.on("DELETE", kPods + "/*", 200, "{}");  // the name is percent-encoded there
    host.server.onJson("POST", kPods, 403, escStatus());
    CHECK(host.run({"sandbox", "run", "--", "ls"}) == 125);
    INFO(ui::escapeForTerminal(host.err.str()));
    CHECK(host.err.str().find("deleted pod rossoctl-run-x\\x1b]0;PWNED\\x07") != std::string::npos);
    checkNoControls(host.err.str());
}

TEST_CASE("-o json and yaml escape C1 and bidi controls on a terminal, not in a pipe",
          "[hostile][escape][locale]") {
    json sandbox = evilSandbox();
    sandbox["metadata"]["name"] = "orders";
    // U+202E (right-to-left override) hides what follows; U+009B is CSI in 8-bit form.
    sandbox["metadata"]["annotations"] = {{"note", "safe\u202e\u2066txt.exe\u009b2J ok\u00e9"}};
    for (const char* format : {"json", "yaml"}) {
        for (bool terminal : {true, false}) {
            TestHost host;
            host.stdoutIsTerminal = terminal;
            host.serveSandboxGroup();
            host.server.onJson("GET", kSandboxes + "/orders", 200, sandbox);
            host.server.onJson("GET", kPods, 200, list({}));
            INFO(format << (terminal ? " on a terminal" : " in a pipe"));
            REQUIRE(host.run({"sandbox", "get", "orders", "-o", format}) == 0);
            const std::string out = host.out.str();
            INFO(ui::escapeForTerminal(out));
            CHECK((out.find("\xe2\x80\xae") == std::string::npos) == terminal);
            CHECK((out.find("\xe2\x81\xa6") == std::string::npos) == terminal);
            CHECK((out.find("\\u202e\\u2066txt.exe") != std::string::npos) == terminal);
            if (std::string(format) == "json")  // yaml-cpp writes C1 as \x9b itself
                CHECK((out.find("\xc2\x9b") == std::string::npos) == terminal);
            if (terminal) CHECK(out.find("\xc2\x9b") == std::string::npos);
            CHECK(out.find("ok\u00e9") != std::string::npos);  // other text stays as it is
        }
    }
}
