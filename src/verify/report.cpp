#include "rossoctl/verify/report.hpp"

#include <fmt/format.h>

#include "rossoctl/errors.hpp"
#include "rossoctl/ui/color.hpp"
#include "rossoctl/ui/printer.hpp"
#include "rossoctl/ui/terminal_text.hpp"

namespace rossoctl::verify {

using nlohmann::json;

Verdict SandboxReport::verdict() const {
    if (!error.empty()) return Verdict::Fail;
    Verdict overall = Verdict::Pass;
    for (const auto& check : checks) {
        if (!check.required) continue;  // reported, not judged
        if (check.verdict() == Verdict::Fail) return Verdict::Fail;
        if (check.verdict() == Verdict::Unproven) overall = Verdict::Unproven;
    }
    return overall;
}

namespace {

std::string seconds(std::chrono::milliseconds duration) {
    return fmt::format("{:.3f}", static_cast<double>(duration.count()) / 1000.0);
}

struct Counts {
    int pass = 0, fail = 0, unproven = 0, notRequired = 0;
};

Counts countChecks(const SandboxReport& report) {
    Counts counts;
    for (const auto& check : report.checks) {
        if (!check.required && check.verdict() != Verdict::Pass) {
            ++counts.notRequired;
            continue;
        }
        switch (check.verdict()) {
            case Verdict::Pass:
                ++counts.pass;
                break;
            case Verdict::Fail:
                ++counts.fail;
                break;
            case Verdict::Unproven:
                ++counts.unproven;
                break;
        }
    }
    return counts;
}

std::string partText(const char* which, const Finding& finding) {
    std::string text = fmt::format("{} ({}{}):", which, verdictName(finding.verdict),
                                   finding.probe.empty() ? "" : ", " + finding.probe);
    // Evidence quotes what the pod printed: never let its control characters through.
    for (const auto& line : finding.evidence) text += "\n  " + ui::escapeForTerminal(line);
    return text;
}

}  // namespace

namespace {

// pass green, fail red, unproven yellow: the column a reviewer scans first.
ui::Color verdictColor(Verdict verdict) {
    return verdict == Verdict::Pass   ? ui::Color::Green
           : verdict == Verdict::Fail ? ui::Color::Red
                                      : ui::Color::Yellow;
}

}  // namespace

std::string summaryLine(const SandboxReport& report) {
    const Counts counts = countChecks(report);
    return fmt::format("sandbox/{}: {} — {} checks: {} pass, {} fail, {} unproven{} ({:.1f}s)",
                       report.name, verdictName(report.verdict()), report.checks.size(),
                       counts.pass, counts.fail, counts.unproven,
                       counts.notRequired
                           ? fmt::format(", {} not held but not required", counts.notRequired)
                           : "",
                       static_cast<double>(report.took.count()) / 1000.0) +
           (report.interrupted ? "; partial: verify was interrupted (Ctrl-C), and what it cut "
                                 "short is unproven"
                               : "");
}

void printReportTable(std::ostream& out, const SandboxReport& report, bool noHeaders, bool color) {
    ui::Table table;
    table.headers = {"CHECK", "RESULT", "EVIDENCE"};
    for (const auto& check : report.checks) {
        bool first = true;
        // The printer escapes every cell (evidence quotes the pod), then paints the verdict.
        auto row = [&](const std::string& evidence) {
            if (first && color)
                table.paints.push_back({table.rows.size(), 1, verdictColor(check.verdict())});
            table.rows.push_back(
                {first ? checkTitle(check.kind) : "",
                 first ? verdictName(check.verdict()) + (check.required ? "" : " (not required)")
                       : "",
                 evidence});
            first = false;
        };
        for (const auto& line : check.staticPart.evidence) row("static: " + line);
        for (const auto& line : check.livePart.evidence)
            row((check.livePart.probe.empty() ? "live: "
                                              : "live (" + check.livePart.probe + "): ") +
                line);
        if (first) row("");
    }
    // The pod's and container's names are the server's.
    out << ui::escapeErrorLine(fmt::format("sandbox/{} (namespace {}, pod {}, container {})",
                                           report.name, report.namespaceName, report.pod,
                                           report.container))
        << '\n';
    ui::printTable(out, table, noHeaders, false);
    for (const auto& problem : report.runProblems)
        out << "run problem (not the sandbox's): " << ui::escapeForTerminal(problem) << '\n';
    out << ui::escapeErrorLine(summaryLine(report)) << '\n';
}

std::string checkResultName(const CheckResult& check) {
    return !check.required && check.verdict() != Verdict::Pass ? "notRequired"
                                                               : verdictName(check.verdict());
}

json reportJson(const SandboxReport& report) {
    json out = {{"sandbox", report.name},
                {"namespace", report.namespaceName},
                {"result", report.error.empty() ? verdictName(report.verdict()) : "error"},
                {"tookMs", report.took.count()}};
    if (report.interrupted) out["interrupted"] = true;  // Ctrl-C: a partial report
    if (!report.error.empty()) {
        out["error"] = report.error;
        return out;
    }
    out["pod"] = report.pod;
    out["podUid"] = report.podUid;
    out["container"] = report.container;
    json checks = json::array();
    for (const auto& check : report.checks) {
        auto part = [](const Finding& finding) {
            json value = {{"result", verdictName(finding.verdict)}, {"evidence", finding.evidence}};
            if (!finding.probe.empty()) value["probe"] = finding.probe;
            return value;
        };
        checks.push_back({{"id", checkId(check.kind)},
                          {"name", checkTitle(check.kind)},
                          {"result", checkResultName(check)},
                          {"measured", verdictName(check.verdict())},
                          {"required", check.required},
                          {"static", part(check.staticPart)},
                          {"live", part(check.livePart)},
                          {"tookMs", check.took.count()}});
    }
    out["checks"] = std::move(checks);
    if (!report.runProblems.empty()) out["runProblems"] = report.runProblems;
    if (!report.notes.empty()) out["notes"] = report.notes;
    const Counts counts = countChecks(report);
    out["summary"] = {{"pass", counts.pass},
                      {"fail", counts.fail},
                      {"unproven", counts.unproven},
                      {"notRequired", counts.notRequired}};
    return out;
}

std::string xmlEscape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            case '\n':
                out += "&#10;";
                break;
            case '\t':
                out += "&#9;";
                break;
            case '\r':
                out += "&#13;";
                break;
            default:
                // XML 1.0 allows no other control characters, not even as references.
                if (c < 0x20 || c == 0x7f)
                    out += "\xEF\xBF\xBD";
                else
                    out += static_cast<char>(c);
        }
    }
    return out;
}

void writeJunit(std::ostream& out, const std::vector<SandboxReport>& reports) {
    int tests = 0, failures = 0, skipped = 0, errors = 0;
    std::chrono::milliseconds total{0};
    std::string suites;
    for (const auto& report : reports) {
        const std::string suiteName = report.namespaceName + "/" + report.name;
        const std::string className =
            "rossoctl.sandbox.verify." + report.namespaceName + "." + report.name;
        total += report.took;
        if (!report.error.empty()) {
            ++tests;
            ++errors;
            suites += fmt::format(
                "  <testsuite name=\"{}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" "
                "time=\"{}\">\n    <testcase classname=\"{}\" name=\"verify\" time=\"{}\">\n"
                "      <error message=\"{}\" type=\"VerificationError\"/>\n    </testcase>\n"
                "  </testsuite>\n",
                xmlEscape(suiteName), seconds(report.took), xmlEscape(className),
                seconds(report.took), xmlEscape(report.error));
            continue;
        }
        const Counts counts = countChecks(report);
        tests += static_cast<int>(report.checks.size());
        failures += counts.fail + counts.unproven;
        skipped += counts.notRequired;
        suites += fmt::format(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
            "time=\"{}\">\n",
            xmlEscape(suiteName), report.checks.size(), counts.fail + counts.unproven,
            counts.notRequired, seconds(report.took));
        suites += fmt::format(
            "    <properties>\n      <property name=\"pod\" value=\"{}\"/>\n"
            "      <property name=\"podUid\" value=\"{}\"/>\n    </properties>\n",
            xmlEscape(report.pod), xmlEscape(report.podUid));
        for (const auto& check : report.checks) {
            const std::string evidence =
                partText("static", check.staticPart) + "\n" + partText("live", check.livePart);
            const std::string firstLine = [&] {
                const Finding& failing =
                    check.staticPart.verdict != Verdict::Pass ? check.staticPart : check.livePart;
                return failing.evidence.empty() ? verdictName(check.verdict())
                                                : failing.evidence.front();
            }();
            suites += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{}\">\n",
                                  xmlEscape(className), xmlEscape(checkTitle(check.kind)),
                                  seconds(check.took));
            if (!check.required && check.verdict() != Verdict::Pass)
                // Not held, and nothing asked for it: said, without turning the gate red.
                suites += fmt::format("      <skipped message=\"not required: {}: {}\"/>\n",
                                      verdictName(check.verdict()), xmlEscape(firstLine));
            else if (check.verdict() == Verdict::Fail)
                suites += fmt::format(
                    "      <failure message=\"{}\" type=\"BoundaryNotHeld\">{}</failure>\n",
                    xmlEscape(firstLine), xmlEscape(evidence));
            else if (check.verdict() == Verdict::Unproven)
                // Not proven is not held: a CI gate must go red, so never <skipped>.
                suites += fmt::format(
                    "      <failure message=\"unproven: {}\" "
                    "type=\"BoundaryUnproven\">{}</failure>\n",
                    xmlEscape(firstLine), xmlEscape(evidence));
            suites += fmt::format("      <system-out>{}</system-out>\n    </testcase>\n",
                                  xmlEscape(evidence));
        }
        suites += "  </testsuite>\n";
    }
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << fmt::format(
               "<testsuites name=\"rossoctl sandbox verify\" tests=\"{}\" failures=\"{}\" "
               "errors=\"{}\" skipped=\"{}\" time=\"{}\">\n",
               tests, failures, errors, skipped, seconds(total))
        << suites << "</testsuites>\n";
}

int exitCodeFor(const std::vector<SandboxReport>& reports, std::size_t skipped) {
    bool notProven = skipped > 0;
    for (const auto& report : reports) {
        if (!report.error.empty()) return kExitError;
        // A broken run (an outage, a broken stream) leaves checks unproven through no doing of
        // the sandbox's; a boundary proven open is still the sandbox's, exit 3.
        if ((!report.runError.empty() || !report.runProblems.empty()) &&
            report.verdict() != Verdict::Fail)
            return kExitError;
        if (report.verdict() != Verdict::Pass) notProven = true;
    }
    return notProven ? kExitBoundaryNotProven : kExitOk;
}

}  // namespace rossoctl::verify
