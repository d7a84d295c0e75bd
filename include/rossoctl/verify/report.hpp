#pragma once
// How verification results are shown: a table per sandbox, JSON for scripts, JUnit XML for CI,
// and the exit code of DESIGN.md section 2.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "rossoctl/verify/runner.hpp"

namespace rossoctl::verify {

// CHECK, RESULT, EVIDENCE (one line per evidence item, static first) and a summary line.
// color paints each RESULT (only when the caller's stdout may take it).
void printReportTable(std::ostream& out, const SandboxReport& report, bool noHeaders,
                      bool color = false);
// "4 checks: 3 pass, 1 fail, 0 unproven (12.3s)"
std::string summaryLine(const SandboxReport& report);

// A check's "result" in -o json and SARIF: "pass", "fail", "unproven", or "notRequired" for one
// that did not pass but nothing asked for (what was measured stays in "measured"), so
// `.checks[] | select(.result == "fail")` finds exactly what fails the gate, as JUnit's
// <failure> does (a not-required check is <skipped> there).
std::string checkResultName(const CheckResult& check);

nlohmann::json reportJson(const SandboxReport& report);

// testsuites > testsuite per sandbox > testcase per check; fail and unproven = <failure>
// (type BoundaryNotHeld / BoundaryUnproven), a sandbox that could not be verified = one <error>
// testcase.
void writeJunit(std::ostream& out, const std::vector<SandboxReport>& reports);

// SARIF 2.1.0: one run, a rule per check, one result per failed or unproven check (level
// error; properties.verdict says which), one per sandbox that could not be verified.
nlohmann::json reportSarif(const std::vector<SandboxReport>& reports);

// Text safe in XML element content and attribute values (also drops characters XML 1.0
// forbids).
std::string xmlEscape(std::string_view text);

// 0 all pass; 1 any sandbox could not be verified, or its run broke (and nothing failed);
// 3 any boundary fails or is unproven, or sandboxes were skipped (suspended: not verified,
// and any project user may resume one, attack 63 S1).
int exitCodeFor(const std::vector<SandboxReport>& reports, std::size_t skipped = 0);

}  // namespace rossoctl::verify
