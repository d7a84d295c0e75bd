// Reading `sandbox verify -o json`'s report in the verify cases.
#pragma once

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.hpp"
#include "rossoctl/model/sandbox.hpp"

namespace harness {

// The check with this id; the case fails when the report has none.
inline const nlohmann::json& checkNamed(const nlohmann::json& report, const std::string& id) {
    for (const auto& check : report["checks"])
        if (check["id"] == id) return check;
    FAIL("no check " << id);
    static const nlohmann::json none;
    return none;
}

// A check's static and live evidence, a line each.
inline std::string evidenceOf(const nlohmann::json& check) {
    std::string text;
    for (const char* part : {"static", "live"})
        for (const auto& line : check[part]["evidence"]) text += line.get<std::string>() + "\n";
    return text;
}

// `rossoctl project create NS --no-check`, which must succeed.
inline void createProject(const std::string& ns) {
    auto created = rossoctl({"project", "create", ns, "--no-check"});
    INFO(created.out << created.err);
    REQUIRE(created.exitCode == 0);
}

inline bool sandboxReadyNow(const std::string& ns, const std::string& name) {
    auto sandbox = admin().getIfExists(sandboxRef(), ns, name);
    return sandbox && rossoctl::model::sandboxReady(*sandbox);
}

// `sandbox verify NAME --no-restart --trusted-probe busybox:1.36` against the outside server,
// as JSON; the case fails when stdout is no report.
struct VerifyRun {
    RunResult result;
    nlohmann::json report;
};
inline VerifyRun verifyTrusted(const std::string& ns, const std::string& name) {
    VerifyRun run;
    run.result = rossoctl({"sandbox", "verify", name, "-n", ns, "--no-restart", "--trusted-probe",
                           "busybox:1.36", "--egress-target", outsideUrl(), "-o", "json"},
                          {}, {}, 300);
    INFO(run.result.out << run.result.err);
    run.report = nlohmann::json::parse(run.result.out, nullptr, false);
    REQUIRE(run.report.is_object());
    return run;
}

// A token of ServiceAccount `account` in `ns` (a TokenRequest, one hour), as a tenant would get
// with `kubectl create token`.
inline std::string issueToken(const std::string& ns, const std::string& account) {
    const auto issued = admin().request(
        "POST", "/api/v1/namespaces/" + ns + "/serviceaccounts/" + account + "/token",
        nlohmann::json{{"apiVersion", "authentication.k8s.io/v1"},
                       {"kind", "TokenRequest"},
                       {"spec", {{"expirationSeconds", 3600}}}}
            .dump(),
        "application/json", false);
    const std::string token = nlohmann::json::parse(issued.body)["status"]["token"];
    REQUIRE(token.size() > 100);
    return token;
}

}  // namespace harness
