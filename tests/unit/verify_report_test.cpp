// sandbox verify output: table, JSON, JUnit XML (escaping) and exit codes.
#include <catch2/catch.hpp>
#include <sstream>

#include "rossoctl/verify/report.hpp"

using namespace rossoctl::verify;

namespace {

SandboxReport sampleReport() {
    SandboxReport report;
    report.name = "orders";
    report.namespaceName = "team1";
    report.pod = "orders";
    report.podUid = "1234";
    report.container = "agent";
    report.took = std::chrono::milliseconds(2500);
    auto check = [](CheckKind kind, Verdict staticVerdict, Verdict liveVerdict,
                    std::string evidence) {
        CheckResult result;
        result.kind = kind;
        result.staticPart = {staticVerdict, {"static evidence"}, ""};
        result.livePart = {liveVerdict, {std::move(evidence)}, "curl"};
        result.took = std::chrono::milliseconds(120);
        return result;
    };
    report.checks = {
        check(CheckKind::ServiceAccountToken, Verdict::Pass, Verdict::Pass, "No such file"),
        check(CheckKind::Egress, Verdict::Pass, Verdict::Fail,
              "curl connected to <https://x?a=1&b=\"2\"> 'q'\x01"),
        check(CheckKind::Limits, Verdict::Pass, Verdict::Unproven, "cgroup unreadable"),
        check(CheckKind::NothingSurvives, Verdict::Pass, Verdict::Pass, "gone"),
    };
    return report;
}

}  // namespace

TEST_CASE("xmlEscape: markup characters and forbidden control characters") {
    CHECK(xmlEscape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;");
    CHECK(xmlEscape("line1\nline2\t") == "line1&#10;line2&#9;");
    CHECK(xmlEscape(std::string("x\x01y\x1b")) == "x\xEF\xBF\xBDy\xEF\xBF\xBD");
    CHECK(xmlEscape("naïve → ok") == "naïve → ok");
}

TEST_CASE("JUnit: one suite per sandbox, failure for fail and for unproven") {
    SandboxReport broken;
    broken.name = "gone";
    broken.namespaceName = "team1";
    broken.error = "sandbox/gone not found in namespace team1";
    std::ostringstream out;
    writeJunit(out, {sampleReport(), broken});
    const std::string xml = out.str();
    CHECK(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", 0) == 0);
    CHECK(xml.find("tests=\"5\" failures=\"2\" errors=\"1\" skipped=\"0\"") != std::string::npos);
    CHECK(xml.find("<testsuite name=\"team1/orders\" tests=\"4\" failures=\"2\"") !=
          std::string::npos);
    CHECK(xml.find("<testcase classname=\"rossoctl.sandbox.verify.team1.orders\" name=\"egress "
                   "denied\" time=\"0.120\">") != std::string::npos);
    CHECK(xml.find("<failure message=\"curl connected to &lt;https://x?a=1&amp;b=&quot;2&quot;&gt; "
                   "&apos;q&apos;\xEF\xBF\xBD\"") != std::string::npos);
    CHECK(xml.find("<failure message=\"unproven: cgroup unreadable\" type=\"BoundaryUnproven\">") !=
          std::string::npos);
    CHECK(xml.find("<skipped") == std::string::npos);
    CHECK(xml.find("<error message=\"sandbox/gone not found in namespace team1\"") !=
          std::string::npos);
    CHECK(xml.find('\x01') == std::string::npos);
}

TEST_CASE("JSON: result, static and live evidence, timing per check") {
    auto value = reportJson(sampleReport());
    CHECK(value["result"] == "fail");
    CHECK(value["tookMs"] == 2500);
    REQUIRE(value["checks"].size() == 4);
    CHECK(value["checks"][1]["id"] == "egress");
    CHECK(value["checks"][1]["result"] == "fail");
    CHECK(value["checks"][1]["live"]["probe"] == "curl");
    CHECK(value["checks"][1]["static"]["result"] == "pass");
    CHECK(value["checks"][2]["result"] == "unproven");
    CHECK(value["checks"][0]["tookMs"] == 120);
    CHECK(value["summary"]["fail"] == 1);
}

TEST_CASE("table: a row per evidence line and a summary") {
    std::ostringstream out;
    printReportTable(out, sampleReport(), false);
    const std::string text = out.str();
    CHECK(text.find("CHECK") != std::string::npos);
    CHECK(text.find("static: static evidence") != std::string::npos);
    CHECK(text.find("live (curl): No such file") != std::string::npos);
    CHECK(text.find("sandbox/orders: fail — 4 checks: 2 pass, 1 fail, 1 unproven (2.5s)") !=
          std::string::npos);
}

TEST_CASE("table: colored results keep their columns; no color means no escape codes") {
    std::ostringstream plain, colored;
    printReportTable(plain, sampleReport(), false, false);
    printReportTable(colored, sampleReport(), false, true);
    CHECK(plain.str().find('\033') == std::string::npos);
    CHECK(colored.str().find("\033[31mfail\033[0m") != std::string::npos);
    CHECK(colored.str().find("\033[33munproven\033[0m") != std::string::npos);
    // Stripped of its escape codes, the colored table is the plain one, padding and all.
    std::string stripped = colored.str();
    for (size_t at; (at = stripped.find('\033')) != std::string::npos;)
        stripped.erase(at, stripped.find('m', at) - at + 1);
    CHECK(stripped == plain.str());
}

TEST_CASE("exit codes: 0 all pass, 3 fail or unproven, 1 could not verify") {
    SandboxReport passing = sampleReport();
    for (auto& check : passing.checks) check.livePart.verdict = Verdict::Pass;
    CHECK(exitCodeFor({passing}) == 0);
    CHECK(exitCodeFor({passing, sampleReport()}) == 3);
    // Attack 63 S1: a suspended sandbox skipped by --all is not verified, and any project user
    // may resume it as it is: the run is not a pass.
    CHECK(exitCodeFor({passing}, 1) == 3);
    SandboxReport broken;
    broken.error = "not found";
    CHECK(exitCodeFor({sampleReport(), broken}) == 1);
    SECTION("a broken run is 1 unless a boundary fails outright") {
        SandboxReport unproven = passing;
        unproven.checks[2].livePart.verdict = Verdict::Unproven;
        unproven.runProblems = {"exec sh in pod orders: connection reset"};
        CHECK(exitCodeFor({unproven}) == 1);
        SandboxReport failing = sampleReport();
        failing.runProblems = unproven.runProblems;
        CHECK(exitCodeFor({failing}) == 3);
    }
}

TEST_CASE("SARIF 2.1.0: a result per failed or unproven check, one per unverifiable sandbox") {
    SandboxReport broken;
    broken.name = "gone";
    broken.namespaceName = "team1";
    broken.error = "sandbox/gone not found";
    const auto sarif = reportSarif({sampleReport(), broken});
    CHECK(sarif["version"] == "2.1.0");
    REQUIRE(sarif["runs"].size() == 1);
    const auto& run = sarif["runs"][0];
    // A rule per check (the seed's four, host and kernel isolation, image provenance) + verify.
    CHECK(run["tool"]["driver"]["rules"].size() == 8);
    const auto& results = run["results"];
    REQUIRE(results.size() == 3);
    CHECK(results[0]["ruleId"] == "egress");
    CHECK(results[0]["properties"]["verdict"] == "fail");
    CHECK(results[0]["ruleIndex"] == 1);
    CHECK(results[1]["ruleId"] == "limits");
    CHECK(results[1]["properties"]["verdict"] == "unproven");
    CHECK(results[1]["level"] == "error");
    CHECK(results[2]["ruleId"] == "verify");
    CHECK(results[0]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] ==
          "team1/sandbox/orders");
}

TEST_CASE("table: evidence from the pod reaches the terminal without control characters") {
    SandboxReport report = sampleReport();
    report.checks[1].livePart.evidence = {
        "wget: \x1b]0;title\x07 \x1b[2J\xc2\x9b"
        "31m"};
    std::ostringstream out;
    printReportTable(out, report, false);
    CHECK(out.str().find('\x1b') == std::string::npos);
    CHECK(out.str().find('\x07') == std::string::npos);
    CHECK(out.str().find("\xc2\x9b") == std::string::npos);
    CHECK(out.str().find("\\x1b]0;title") != std::string::npos);
}

TEST_CASE("exit codes: a check left unproven by an API outage is 1, not 3", "[fault]") {
    SandboxReport cutShort = sampleReport();
    cutShort.checks[1].livePart.verdict = Verdict::Unproven;  // only unproven is left
    cutShort.runError = "connection refused";
    CHECK(exitCodeFor({cutShort}) == 1);
    CHECK(exitCodeFor({sampleReport()}) == 3);
    // A boundary proven open stays the sandbox's, whatever else broke.
    SandboxReport openAndCut = sampleReport();
    openAndCut.runError = "connection refused";
    CHECK(exitCodeFor({openAndCut}) == 3);
}
