// `sandbox verify -o sarif`: SARIF 2.1.0 for code-scanning dashboards.
#include <fmt/format.h>

#include "rossoctl/verify/report.hpp"

namespace rossoctl::verify {

using nlohmann::json;

namespace {

constexpr CheckKind kKinds[] = {
    CheckKind::ServiceAccountToken, CheckKind::Egress,        CheckKind::Limits,
    CheckKind::NothingSurvives,     CheckKind::HostIsolation, CheckKind::KernelIsolation,
    CheckKind::ImageProvenance};

json location(const SandboxReport& report) {
    return json::array(
        {{{"logicalLocations",
           json::array({{{"name", report.name},
                         {"fullyQualifiedName",
                          fmt::format("{}/sandbox/{}", report.namespaceName, report.name)},
                         {"kind", "resource"}}})}}});
}

}  // namespace

json reportSarif(const std::vector<SandboxReport>& reports) {
    json rules = json::array();
    for (const auto kind : kKinds)
        rules.push_back({{"id", checkId(kind)},
                         {"name", checkTitle(kind)},
                         {"shortDescription", {{"text", checkTitle(kind)}}},
                         {"defaultConfiguration", {{"level", "error"}}}});
    rules.push_back({{"id", "verify"},
                     {"name", "sandbox could be verified"},
                     {"shortDescription", {{"text", "the sandbox could be verified"}}}});
    json results = json::array();
    for (const auto& report : reports) {
        if (!report.error.empty()) {
            results.push_back({{"ruleId", "verify"},
                               {"ruleIndex", std::size(kKinds)},
                               {"level", "error"},
                               {"message", {{"text", report.error}}},
                               {"locations", location(report)}});
            continue;
        }
        for (const auto& check : report.checks) {
            const Verdict verdict = check.verdict();
            if (verdict == Verdict::Pass) continue;
            std::vector<std::string> evidence;
            for (const auto& line : check.staticPart.evidence)
                evidence.push_back("static: " + line);
            for (const auto& line : check.livePart.evidence) evidence.push_back("live: " + line);
            const Finding& first =
                check.staticPart.verdict != Verdict::Pass ? check.staticPart : check.livePart;
            const std::string why = first.evidence.empty() ? "" : ": " + first.evidence.front();
            size_t index = 0;
            while (index < std::size(kKinds) && kKinds[index] != check.kind) ++index;
            results.push_back(
                {{"ruleId", checkId(check.kind)},
                 {"ruleIndex", index},
                 {"level", check.required ? "error" : "note"},
                 {"message",
                  {{"text", fmt::format("sandbox/{} {}: {}{}", report.name, checkTitle(check.kind),
                                        verdictName(verdict), why)}}},
                 {"locations", location(report)},
                 {"properties",
                  {{"verdict", verdictName(verdict)},
                   {"result", checkResultName(check)},
                   {"required", check.required},
                   {"namespace", report.namespaceName},
                   {"pod", report.pod},
                   {"podUid", report.podUid},
                   {"evidence", evidence}}}});
        }
    }
    return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
            {"version", "2.1.0"},
            {"runs",
             json::array(
                 {{{"tool", {{"driver", {{"name", "rossoctl sandbox verify"}, {"rules", rules}}}}},
                   {"results", results}}})}};
}

}  // namespace rossoctl::verify
