#pragma once
// The four boundaries of `sandbox verify`: each check's static part is a pure function of the
// objects read from the API, and each live probe is a shell script plus a pure parser of what
// it printed, so both are unit-tested without a cluster.
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rossoctl::verify {

enum class Verdict { Pass, Fail, Unproven };
std::string verdictName(Verdict verdict);  // "pass", "fail", "unproven"

// One half of a check: its verdict and the evidence lines that justify it.
struct Finding {
    Verdict verdict = Verdict::Unproven;
    std::vector<std::string> evidence;
    std::string probe;  // the live tool used (curl, wget, ...); empty for static parts
};

// A check passes only when both halves pass; a failing half fails it; anything else is
// unproven.
Verdict combine(Verdict staticVerdict, Verdict liveVerdict);

enum class CheckKind { ServiceAccountToken, Egress, Limits, NothingSurvives };
std::string checkId(CheckKind kind);     // "service-account-token", ...
std::string checkTitle(CheckKind kind);  // "no service-account token", ...

struct CheckResult {
    CheckKind kind = CheckKind::ServiceAccountToken;
    Finding staticPart;
    Finding livePart;
    std::chrono::milliseconds took{0};
    Verdict verdict() const { return combine(staticPart.verdict, livePart.verdict); }
};

// --- static parts ---------------------------------------------------------------------

// automountServiceAccountToken false on the pod (or its ServiceAccount when the pod leaves it
// unset) and no projected serviceAccountToken volume. serviceAccount: nullopt = not found.
Finding tokenStatic(const nlohmann::json& pod, const std::optional<nlohmann::json>& serviceAccount);

// A metav1.LabelSelector (matchLabels and matchExpressions) against a label map.
bool labelSelectorMatches(const nlohmann::json& selector, const nlohmann::json& labels);

// NetworkPolicies (a List's items) selecting the pod with Egress in policyTypes; their allowed
// destinations as evidence. Fails when none isolates egress or one allows everything.
Finding egressStatic(const nlohmann::json& pod, const nlohmann::json& networkPolicies);

// Every container has cpu and memory limits; activeDeadlineSeconds or the Sandbox's
// shutdownTime is set; a ResourceQuota (a List's items) covers the namespace.
Finding limitsStatic(const nlohmann::json& pod, const nlohmann::json& sandbox,
                     const nlohmann::json& resourceQuotas);

// No persistentVolumeClaim or hostPath volume in the pod.
Finding nothingSurvivesStatic(const nlohmann::json& pod);

// --- live probes: the command to exec, and what its output means ----------------------

// What an exec printed; `started` false when the command could not be run at all.
struct ProbeOutput {
    bool started = true;
    int exitCode = 0;
    bool timedOut = false;
    std::string stdoutText;
    std::string stderrText;
    std::string failure;  // why it could not start (the exec Status message or the error)
};

inline constexpr const char* kTokenPath = "/var/run/secrets/kubernetes.io/serviceaccount/token";

std::vector<std::string> tokenProbeCommand();
Finding tokenLive(const ProbeOutput& output);

struct EgressTarget {
    std::string url;
    std::string scheme;  // http or https
    std::string host;
    int port = 0;
};
// http(s)://HOST[:PORT][/PATH]; nullopt when it is not such a URL.
std::optional<EgressTarget> parseEgressTarget(const std::string& url);

// The tools the egress probe tries, in order; the first the image has is used.
std::vector<std::string> egressProbeOrder();
std::vector<std::string> egressProbeCommand(const EgressTarget& target);
Finding egressLive(const ProbeOutput& output, const EgressTarget& target);

std::vector<std::string> cgroupProbeCommand();
// expectedBytes: the container's memory limit; nullopt when it has none.
Finding limitsLive(const ProbeOutput& output, std::optional<long long> expectedBytes);

// The container's memory limit in bytes, if set.
std::optional<long long> memoryLimitBytes(const nlohmann::json& container);

// Where the canary goes: the container's workingDir when a writable volume is mounted there,
// else /tmp; `why` says which.
struct CanaryPlace {
    std::string directory;
    std::string volume;  // the volume name, empty for /tmp
    std::string why;
};
CanaryPlace canaryPlace(const nlohmann::json& pod, const nlohmann::json& container);

// Writes CONTENT to PATH and prints it back; and reads PATH back after the restart.
std::vector<std::string> canaryWriteCommand(const std::string& path, const std::string& content);
std::vector<std::string> canaryReadCommand(const std::string& path);
// Empty when the write worked, else why not.
std::string canaryWriteProblem(const ProbeOutput& output, const std::string& content);
Finding canaryAfterRestart(const ProbeOutput& output, const std::string& path,
                           const std::string& content, const std::string& restartSummary);

}  // namespace rossoctl::verify
