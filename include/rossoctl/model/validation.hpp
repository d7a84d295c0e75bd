#pragma once
// Input checks that run before any request: names, env, quantities, images, K=V lists.
// Each throws UsageError with one line naming the flag or argument and the rule.
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rossoctl::model {

// RFC 1123 label: lower-case alphanumerics and '-', at most 63, alphanumeric at both ends.
void validateDnsLabel(const std::string& value, const std::string& what);
// RFC 1123 subdomain: labels joined by '.', at most 253.
void validateDnsSubdomain(const std::string& value, const std::string& what);
// Whether value is one (validateDnsSubdomain without the message).
bool isDnsSubdomain(const std::string& value);
// C identifier-ish env names as Kubernetes accepts them: [-._a-zA-Z][-._a-zA-Z0-9]*.
void validateEnvName(const std::string& value, const std::string& what);
// A Kubernetes quantity (500m, 1Gi, 2, 1.5); returns the value in base units.
double parseQuantity(const std::string& value, const std::string& what);
// An image reference: [registry/]path[:tag][@digest], no spaces or upper-case repository.
void validateImageReference(const std::string& value, const std::string& what);
// A port number 1..65535.
int parsePort(const std::string& value, const std::string& what);

struct EnvVar {
    std::string name;
    std::string value;
};

// "K=V" (V may be empty and may contain '='); throws on "K" or "=V".
EnvVar parseEnvAssignment(const std::string& text, const std::string& what);
// K=V lines; blank lines and '#' comments skipped; "export " prefix accepted; quotes around
// the value removed. origin names the file in errors ("env file F: line 3: ...").
std::vector<EnvVar> parseEnvFile(const std::string& text, const std::string& origin);
// Later entries win; the order of first appearance is kept.
std::vector<EnvVar> mergeEnv(const std::vector<EnvVar>& base, const std::vector<EnvVar>& over);

// "30s", "2m", "1h30m", "500ms", "0" -> milliseconds; throws UsageError naming the flag.
std::chrono::milliseconds parseDuration(const std::string& text, const std::string& flag);
// Kubernetes' "24h", "90m", "3600s" for lifetimes; throws UsageError.
std::chrono::seconds parseLifetime(const std::string& text, const std::string& what);

}  // namespace rossoctl::model
